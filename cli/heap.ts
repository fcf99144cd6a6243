import v8 from 'node:v8';

/**
 * A run's live heap is one database's work (pipeline/runner/by-database.ts), but V8 lets the
 * heap grow to several times what survived its last full collection before collecting again:
 * on BIRD dev, 95 MB live became 265 MB of heap. Growing by a fifth at most keeps the
 * process near its live size for a few more collections (measured: peak RSS 376 -> 225 MB, CPU
 * within noise). The young generation's size is a start-up flag: the shebang sets it.
 * Imported first by main.ts, before anything allocates much.
 */
v8.setFlagsFromString('--heap-growing-percent=20');
