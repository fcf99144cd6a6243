import type { ResultSet } from '../../core/model.js';
import { TransientError } from '../../core/outcome.js';

/**
 * The one way the project runs SQL. Implementations: the killable process pool
 * (`pool.ts`, used by the pipeline: its timeout really stops a runaway statement) and the
 * in-process executor (`direct.ts`, for baselines and tests); the laned executor (`lanes.ts`, for
 * `nl2api serve`) runs cheap and expensive statements on two such pools.
 */

export type SqlParam = number | bigint | string | null;

export interface SqlRequest {
  /** Absolute path of the SQLite file; always opened read-only. */
  dbPath: string;
  sql: string;
  params: SqlParam[];
  timeoutMs: number;
  /** Run on a variant of the database (differential verification) instead of the file as it is. */
  view?: DatabaseView;
  /**
   * A statement without parameters known to answer the same rows as this one whatever plan
   * runs either, up to the order of rows SQL leaves open (which the caller fixes itself): where
   * this request with its values written in is that very text, a run of it may serve
   * (pipeline/sql-memo.ts). Executors that share nothing ignore it.
   */
  sameRowsAs?: string;
}

/**
 * A database state derived from `dbPath` without writing to it: `overlays` are single-table
 * SQLite files (variant-table.ts) whose tables take the place of the original's of the
 * same name; `reverseScans` reads every unordered scan backwards (SQLite's
 * `reverse_unordered_selects`), which is the same rows in another physical order.
 */
export interface DatabaseView {
  overlays: readonly string[];
  reverseScans: boolean;
  /**
   * The overlays of the tables the statement reads, where `overlays` has more (kept open
   * together so that a worker keeps few connections): the answer depends on these alone,
   * so this names the view for sharing results (pipeline/sql-memo.ts).
   */
  read?: readonly string[];
}

/** Build `file`: one table of `dbPath` with its non-key columns' values permuted (variant-table.ts). */
export interface VariantTableRequest {
  dbPath: string;
  table: string;
  seed: number;
  /** `columns`: each non-key column rotated by its own offset; `rows`: all of them by one. */
  mode: 'columns' | 'rows';
  /** A table with more rows is sampled down to about this many (variant-table.ts). */
  maxRows: number;
  file: string;
  timeoutMs: number;
}

/** `built`: the file exists now; `unsupported`: the table cannot be copied (a view, a virtual table). */
export type VariantTableResult = 'built' | 'unsupported';

export interface SqlExecutor {
  run(request: SqlRequest): Promise<ResultSet>;
  /**
   * `run`, with how long the statement itself ran (waiting for a worker excluded), where the
   * executor knows it; `timedRun` below times the others from the outside.
   */
  runTimed?(request: SqlRequest): Promise<TimedResult>;
  /** Writes a variant table file (the only write an executor does: to a file of ours, never to a source). */
  buildVariantTable(request: VariantTableRequest): Promise<VariantTableResult>;
  /**
   * The caller is through with a database (a run goes database by database): what is kept
   * open for it (connections, their page caches and prepared statements, its variant views)
   * is let go. A later request opens it again. Executors that keep nothing need not have it.
   */
  forget?(dbPath: string): void;
  close(): Promise<void>;
}

/** A statement's answer and how long it ran: from its dispatch to a worker to its answer, queueing excluded. */
export interface TimedResult {
  result: ResultSet;
  runMs: number;
  /** The CPU time the statement's worker spent on it, where the executor knows it (pool.ts). */
  cpuMs?: number;
}

/** A statement's answer and running time: the executor's own measure, else the wall time of the call. */
export async function timedRun(executor: SqlExecutor, request: SqlRequest): Promise<TimedResult> {
  if (executor.runTimed) return executor.runTimed(request);
  const started = performance.now();
  const result = await executor.run(request);
  return { result, runMs: performance.now() - started };
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

/**
 * A database view (its overlay files) could not be opened: our own files failed us, the
 * statement was not run. Transient: a retry opens the view again.
 */
export class DatabaseViewError extends TransientError {
  override name = 'DatabaseViewError';
}

/**
 * The executor admits no more statements right now (a lane of the laned executor is full,
 * lanes.ts): the statement was not run. Transient: a retry later finds room.
 */
export class SqlSaturatedError extends TransientError {
  override name = 'SqlSaturatedError';
}

/** The executor was closed (the run is shutting down): the statement's answer is lost. */
export class ExecutorClosedError extends Error {
  override name = 'ExecutorClosedError';
}

/** A failure of the executor itself, not of the statement: never a verdict about an item. */
export function isExecutorFault(
  error: unknown,
): error is SqlWorkerError | DatabaseViewError | SqlSaturatedError | ExecutorClosedError {
  return (
    error instanceof SqlWorkerError ||
    error instanceof DatabaseViewError ||
    error instanceof SqlSaturatedError ||
    error instanceof ExecutorClosedError
  );
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
