/**
 * Jest transformer: TypeScript to ES modules with esbuild, one file at a time. Types are not
 * checked here (`tsc --noEmit`, the build, does that); tsconfig's `isolatedModules` keeps every
 * file compilable on its own. Inline source maps, so a failure points at the test's own line
 * and coverage maps back to the sources.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

const esbuildVersion = JSON.parse(readFileSync(new URL(import.meta.resolve('esbuild/package.json')), 'utf8')).version;
const ownSource = readFileSync(new URL(import.meta.url), 'utf8');

export default {
  canInstrument: false,
  // Jest instruments the output for coverage after this (canInstrument: false) and caches the
  // result under this key: whether it did must be part of it, or a coverage run reads the
  // uninstrumented code an earlier run cached, and counts nothing.
  getCacheKey(source, filename, { instrument, configString }) {
    return createHash('sha256')
      .update(esbuildVersion)
      .update(ownSource)
      .update(filename)
      .update(source)
      .update(String(instrument))
      .update(configString)
      .digest('hex');
  },
  process(source, filename) {
    const { code, map } = transformSync(source, {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: filename,
      sourcesContent: false,
    });
    return { code, map };
  },
};
