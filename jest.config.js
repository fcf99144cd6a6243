import { closedGates } from './test/support/gates.js';

/** Jest on the TypeScript sources, as native ESM (see package.json "test"). */

// Test files left out whole because what they need is missing here (gates.js); the global
// setup says which and why, once, before the first test.
const leftOut = closedGates()
  .filter((gate) => gate.wholeFiles)
  .flatMap((gate) => gate.files.map((file) => `<rootDir>/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));

export default {
  testEnvironment: '<rootDir>/test/support/environment.js',
  roots: ['<rootDir>/test'],
  testPathIgnorePatterns: ['/node_modules/', ...leftOut],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // esbuild, not ts-jest: it only strips types (tsc --noEmit and the type-aware lint check
  // them), in about half the CPU that TypeScript's own transpiler took here.
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js' },
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  testSequencer: '<rootDir>/test/support/sequencer.js',
  // Per-file CPU, when NL2API_TEST_TIMING names a folder (test/support/timing-table.js).
  setupFilesAfterEnv: ['<rootDir>/test/support/suite-cpu.js'],
  // Jest's default on 2 cores is one worker: the suite ran file after file. Most of its time
  // is spent waiting on child processes (SQL workers, CLIs, queue workers, redis-server), so
  // two files at a time use the machine better on 2 cores and do not oversubscribe it.
  maxWorkers: 2,
  // Jest in ESM mode keeps each file's module graph (jestjs/jest#14605): a worker's heap grows
  // ~10 MB a file. A worker that lives on reuses V8's compiled code of the modules every file
  // imports again: recycling workers at 120 MB cost ~10 % more CPU in jest. This bound only
  // keeps a much larger suite from growing a worker without end; environment.js makes a worker
  // with a big heap exit at once when jest is done with it.
  workerIdleMemoryLimit: '1GB',
  // A bound for a hung test, not a speed limit: two suites at once on a loaded 2-core machine
  // make an e2e test several times slower than on an idle one.
  testTimeout: 180_000,
};
