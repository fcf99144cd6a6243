import type { ResultSet } from '../../pipeline/model.js';

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

/**
 * JSON numbers that are integral bind as SQLite INTEGER (better-sqlite3 would bind every
 * JS number as REAL, turning `x / 2` into real division): docs/TOOLS.md, "Values".
 */
export function toBindable(param: SqlParam): SqlParam {
  return typeof param === 'number' && Number.isInteger(param) ? BigInt(param) : param;
}
