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
  // A leaked handle (a server, a worker) must not keep CI waiting until its time runs out.
  forceExit: true,
};
