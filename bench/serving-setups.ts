import { parseConfig } from '../config/load.js';
import { servingExecutor } from '../pipeline/serve.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { createSqlPool } from '../runtime/sql/pool.js';

/**
 * The SQL executors a REST server is benchmarked on, compared in the same run: `nl2api serve`'s
 * laned executor with its default config, and the single pool it used before (issue 14):
 * `sqlWorkers` processes and a spare, every query in one FIFO queue.
 */

export interface ServingExecutor extends SqlExecutor {
  /** The SQL worker processes, for CPU accounting. */
  workerPids(): number[];
  /** Workers killed and replaced so far (at a budget or a timeout). */
  workerRecycles?(): number;
}

export interface ServingSetup {
  name: string;
  /** An executor for a server of these database files. */
  create(databases: readonly string[]): ServingExecutor;
}

const defaults = parseConfig({});

export const SERVING_SETUPS: readonly ServingSetup[] = [
  { name: 'single pool (before)', create: () => createSqlPool({ size: defaults.sqlWorkers, spare: 1 }) },
  { name: 'laned', create: (databases) => servingExecutor(defaults, databases) },
];
