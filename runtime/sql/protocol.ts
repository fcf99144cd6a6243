import type { ResultSet } from '../../core/model.js';
import type { DatabaseView, SqlParam, VariantTableRequest, VariantTableResult } from './executor.js';

/** Messages between the pool (pool.ts) and its worker processes (worker.ts). */

/** What a worker does for one job: run a statement, or build a variant table file. */
export type WorkerTask =
  | { kind: 'query'; dbPath: string; sql: string; params: SqlParam[]; view?: DatabaseView }
  | { kind: 'variant-table'; request: VariantTableRequest };

export interface WorkerJob {
  id: number;
  task: WorkerTask;
}

/** The pool is through with a database (SqlExecutor.forget): the worker closes what it keeps open for it. */
export interface WorkerForget {
  forget: string;
}

export type PoolMessage = WorkerJob | WorkerForget;

/**
 * `cpu`: the worker's CPU time so far (process.cpuUsage(), user + system, µs), sent with every
 * message: the pool learns what a statement cost, and where its next one starts from, without
 * reading /proc per statement (pool.ts, CPU budgets).
 */
export type WorkerMessage =
  | { type: 'ready'; cpu: number }
  /** `ms`: how long the job ran, timed in the worker (the pool's clock also counts the trip and its own delays). */
  | { type: 'result'; id: number; result: ResultSet | VariantTableResult; ms: number; cpu: number }
  /** `view`: the statement's database view could not be opened (a DatabaseViewError), not SQLite refusing it. */
  | { type: 'error'; id: number; message: string; fault?: 'view'; ms: number; cpu: number };
