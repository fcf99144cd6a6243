import type { ResultSet } from '../../core/model.js';
import { TransientError } from '../../core/outcome.js';

/**
 * The one way the project runs SQL. Implementations: the killable process pool
 * (`pool.ts`, used by the pipeline: its timeout really stops a runaway statement) and the
 * in-process executor (`direct.ts`, for baselines and tests).
 */

export type SqlParam = number | bigint | string | null;

export interface SqlRequest {
  /** Absolute path of the SQLite file; always opened read-only. */
  dbPath: string;
  sql: string;
  params: SqlParam[];
  timeoutMs: number;
}

export interface SqlExecutor {
  run(request: SqlRequest): Promise<ResultSet>;
  close(): Promise<void>;
}

/** The statement ran past its timeout and was stopped. */
export class SqlTimeoutError extends Error {
  override name = 'SqlTimeoutError';
}

/** SQLite refused or failed the statement (syntax, missing column, not read-only, ...). */
export class SqlExecutionError extends Error {
  override name = 'SqlExecutionError';
}

/*
 * The two errors above are verdicts about the statement: a stage may record them (cached).
 * The two below are failures of our own machinery that say nothing about the statement, so
 * no stage may turn them into a cached rejection or cached data: they are thrown through.
 */

/**
 * The worker process running the statement died (killed from outside, crashed, out of
 * memory) or could not start. Transient: a retry gets a fresh worker.
 */
export class SqlWorkerError extends TransientError {
  override name = 'SqlWorkerError';
}

/** The executor was closed (the run is shutting down): the statement's answer is lost. */
export class ExecutorClosedError extends Error {
  override name = 'ExecutorClosedError';
}

/** A failure of the executor itself, not of the statement: never a verdict about an item. */
export function isExecutorFault(error: unknown): error is SqlWorkerError | ExecutorClosedError {
  return error instanceof SqlWorkerError || error instanceof ExecutorClosedError;
}

/** A catch handler for a best-effort SQL step: any failure gives `fallback`, but an executor fault is thrown on. */
export function fallbackUnlessExecutorFault<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if (isExecutorFault(error)) throw error;
    return fallback;
  };
}

/**
 * JSON numbers that are integral bind as SQLite INTEGER (better-sqlite3 would bind every
 * JS number as REAL, turning `x / 2` into real division): docs/TOOLS.md, "Values".
 */
export function toBindable(param: SqlParam): SqlParam {
  return typeof param === 'number' && Number.isInteger(param) ? BigInt(param) : param;
}
