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

/**
 * V8 optimizes a function once it has run through a small budget of bytecode, a setting made
 * for pages and servers that live long. A cold run of BIRD dev lives ~15 s, and its optimizing
 * compiler threads spent ~5 of its 25 CPU-s compiling some 1,000 functions (issue 35's
 * profile), most of them node-sql-parser's small grammar actions, several of them again after
 * a deoptimization. Sixty times the budget lets only what is really hot be optimized: on a
 * longer run the same functions still are, a little later. Set before our modules compile
 * (they are compiled lazily, after this import).
 */
v8.setFlagsFromString('--interrupt-budget=4000000');

/**
 * For a command that holds its whole corpus while it works (export: ~500 MB live on BIRD dev;
 * eval: its items and results), V8's own growth instead of a fifth: at 20 % the whole heap was
 * collected again every time it grew by a fifth of itself. Measured with the CLI's flags,
 * alternated: export ~5 of its ~40 main CPU-s, eval's oracle on BIRD dev SLOT 8.8–9.2 →
 * 6.6–7.1 main CPU-s; the peak RSS that saved (export ~100 MB of ~860, eval ~45 of ~340) has
 * no bar there. Takes effect from the next full collection.
 */
export function growHeapAsV8Does(): void {
  v8.setFlagsFromString('--heap-growing-percent=0');
}
