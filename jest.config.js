/** Jest on the TypeScript sources, as native ESM (see package.json "test"). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testTimeout: 60000,
  // A test that leaks a server or a worker must fail CI, not hang it until its time runs out.
  forceExit: true,
};
