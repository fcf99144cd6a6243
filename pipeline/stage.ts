import type { Config } from '../config/schema.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import type { DatabaseInfo } from '../core/model.js';
import type { Outcome } from '../core/outcome.js';
import type { StageName } from './graph.js';

/**
 * The stage contract. A stage is a pure-ish function of plain JSON data plus a context the
 * runner builds (config, the database, a SQL executor): it knows nothing of queues, caches
 * or retries. The in-process runner and the queue runner (BullMQ, queue/) run the same stages:
 * a job names its run and its unit of work (queue/jobs.ts), and the worker rebuilds the
 * context from the run's spec in Redis.
 */

export interface StageContext {
  config: Config;
  /** The database the item belongs to. */
  db: DatabaseInfo;
  /** The one way to run SQL (the killable process pool in the pipeline). */
  executor: SqlExecutor;
}

/**
 * A per-item stage. `run` returns an Outcome (accepted or a categorized rejection, both
 * cached); it throws `TransientError` for retryable failures and anything else for a fault
 * of the run (neither is cached).
 */
export interface ItemStage<I, O> {
  kind: 'item';
  name: StageName;
  /** Bump whenever the stage's logic changes what it produces: old cache entries die. */
  version: number;
  /**
   * Everything the result depends on, as JSON-able parts: the input (or the part of it
   * that matters), the config slice the stage reads, the database fingerprint if it reads
   * the database. Name and version are added by the run store.
   */
  cacheKey(input: I, ctx: StageContext): unknown;
  run(input: I, ctx: StageContext): Promise<Outcome<O>>;
}

export interface BarrierContext {
  config: Config;
  db: DatabaseInfo;
  datasetName: string;
  /** Output directory (absolute). */
  outDir: string;
}

/**
 * A per-database stage that needs every item of the database first (rest.dedup, emit). Runs after all item stages of that database are terminal.
 */
export interface BarrierStage<I, O> {
  kind: 'barrier';
  name: StageName;
  version: number;
  run(input: I, ctx: BarrierContext): Promise<O>;
}
