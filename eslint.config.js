import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * ESLint, type-aware (typescript-eslint's recommendedTypeChecked over tsconfig.json, which
 * includes the tests). Import cycles and the layering are test/architecture's: it counts
 * type-only imports too, which import-x/no-cycle skips, and import-x's native resolver
 * (unrs-resolver, one optional package per platform) left package-lock.json failing `npm ci`.
 * Formatting is Prettier's (.prettierrc.json); eslint-config-prettier turns off what would fight it.
 */
export default defineConfig(
  { ignores: ['dist/', 'output/', 'coverage/', '.cache/', '.scratch/', 'test-output/'] },

  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },

  {
    rules: {
      // An `async` method of a Promise-returning interface (executors, stores, caches, test doubles)
      // turns its throws into rejections; dropping `async` to please this rule would change that.
      '@typescript-eslint/require-await': 'off',
      // `const { drop, ...rest } = x` is how the code omits a key (generators/sql/precedence.ts).
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },

  // node-sql-parser's AST is `any` by nature (generators/sql/raw-ast.ts): the normalizer reads it structurally.
  {
    files: ['generators/sql/normalize.ts', 'generators/sql/precedence.ts', 'generators/sql/raw-ast.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // Tests read JSON outputs and HTTP bodies (JSON.parse: `any`) and poke at them; the assertions are the check.
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // Plain JS config and jest support files are outside tsconfig.json: lint them without types.
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },

  prettier,
);
