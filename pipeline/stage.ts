import type { Config } from '../config/schema.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import type { DatabaseInfo } from '../core/model.js';
import type { Outcome } from '../core/outcome.js';
import type { StageName } from './graph.js';
import type { RestServices } from './rest-service-types.js';

/**
 * The stage contract. A stage is a pure-ish function of plain JSON data plus a context the
 * runner builds (config, the database, a SQL executor): it knows nothing of queues, caches
 * or retries. The in-process runners and the queue workers (BullMQ, queue/) run the same
 * stages through the same StageRunner (runner/stage-runner.ts): a job names its run and its
 * unit of work (queue/jobs.ts), and the worker rebuilds the context from the run's spec.
 */

export interface StageContext {
  config: Config;
  /** The database the item belongs to. */
  db: DatabaseInfo;
  /** The one way to run SQL (the killable process pool in the pipeline). */
  executor: SqlExecutor;
}

/** What REST's own stages also read: the dataset's name (in prompts and specs) and the run's synthesizer, judge and dedup agent. */
export interface RestStageContext extends StageContext {
  datasetName: string;
  services: RestServices;
}

/** What the key of a stage's outcome for one input is made of. */
export interface KeyedStage<I, C extends StageContext = StageContext, N extends string = StageName> {
  /** A stage of the pipeline graph; the evaluation's own stage is named outside it. */
  name: N;
  /** Bump whenever the stage's logic changes what it produces: old cache entries die. */
  version: number;
  /**
   * Everything the result depends on, as JSON-able parts: the input (or the part of it
   * that matters), the config slice the stage reads, the database fingerprint if it reads
   * the database. Name and version are added by the run store. An upstream stage's output
   * counts by its own key (run-store.ts), so keys chain.
   */
  cacheKey(input: I, ctx: C): unknown;
}

/**
 * What the StageRunner runs and caches: a function of JSON input to an Outcome (accepted
 * or a categorized rejection, both cached). It throws `TransientError` for retryable
 * failures and anything else for a fault of the run (neither is cached).
 */
export interface CachedStage<
  I,
  O,
  C extends StageContext = StageContext,
  N extends string = StageName,
> extends KeyedStage<I, C, N> {
  run(input: I, ctx: C): Promise<Outcome<O>>;
}

/** A per-item stage (graph kinds `item` and `path`). */
export interface ItemStage<I, O, C extends StageContext = StageContext> extends CachedStage<I, O, C> {
  kind: 'item';
}

/** A per-database stage whose result is cached like an item's (rest.dedup): its input is every item of the database. */
export interface DatabaseStage<I, O, C extends StageContext = StageContext> extends CachedStage<I, O, C> {
  kind: 'barrier';
}

/**
 * A stage over a batch of items of one database at a time (one LLM prompt for several
 * questions), cached per item. `runBatch` returns one outcome per input, in order; an
 * outcome of category `internal_error` is a fault of the run for that item (never cached).
 */
export interface BatchStage<I, O, C extends StageContext = StageContext> extends KeyedStage<I, C> {
  kind: 'batch';
  /** `onSettled(n)`: n more items are decided (progress). */
  runBatch(inputs: readonly I[], ctx: C, onSettled?: (count: number) => void): Promise<Outcome<O>[]>;
}

export interface BarrierContext {
  config: Config;
  db: DatabaseInfo;
  datasetName: string;
  /** Output directory (absolute). */
  outDir: string;
}

/** A per-database stage that writes rather than computes (emit): never cached; runs after every item of the database is terminal. */
export interface BarrierStage<I, O> {
  kind: 'barrier';
  name: StageName;
  version: number;
  run(input: I, ctx: BarrierContext): Promise<O>;
}
