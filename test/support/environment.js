/**
 * Jest's node environment, in a worker that exits as soon as jest lets it go.
 *
 * Jest in ESM mode keeps each test file's module graph (jestjs/jest#14605), so a worker that
 * has run half the suite holds a heap of several hundred MB. When jest ends it, the worker's
 * loop drains and node then frees the whole heap before the process is gone, which can take
 * longer than jest-worker's 500 ms grace: jest kills it and prints "A worker process has failed
 * to exit gracefully", although no handle was left open. Exiting at `beforeExit` (the loop is
 * empty: nothing is left to do) skips that teardown, as any process.exit does.
 *
 * Keeping workers instead of recycling them at a small heap is what this buys: a worker that
 * lives on reuses V8's compilation cache for the modules every file imports again.
 */
import environment from 'jest-environment-node';

process.once('beforeExit', () => process.exit());

export default environment.TestEnvironment;
