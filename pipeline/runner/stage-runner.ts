import { performance } from 'node:perf_hooks';
import { reject, rejectionFrom, type Outcome } from '../../core/outcome.js';
import type { BatchStage, CachedStage, KeyedStage, StageContext } from '../stage.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import { cacheKeyOf } from '../store/run-store.js';
import { withRetries, type RetryPolicy } from './retry.js';

/**
 * Runs one stage on one input the way every runner must: cache lookup, retries with
 * backoff for TransientError, a categorized rejection for a RejectionError, and
 * `internal_error` for anything else thrown (that item only). Terminal outcomes are
 * cached; internal errors are not, so a rerun tries them again.
 */

export const INTERNAL_ERROR = 'internal_error';
/** The message of an outcome that an assembling runner (computeMisses: false) did not find. */
export const NOT_COMPUTED = 'not in the shared store: the queue run did not compute it';

export interface StageMetrics {
  /** Stage invocations that found their outcome in the cache. */
  cacheHits: number;
  /** Stage invocations computed in this run. */
  runs: number;
  retries: number;
  /** Wall time spent computing (cache hits cost ~0). */
  ms: number;
}

export class StageRunner {
  readonly metrics = new Map<string, StageMetrics>();
  /** The cache key that produced each value handed out (values are keyed by reference). */
  private readonly provenance = new WeakMap<object, string>();

  /** `code`: the code fingerprint, part of every key (code-fingerprint.ts). */
  constructor(
    private readonly store: OutcomeStore | null,
    private readonly policy: RetryPolicy,
    private readonly sleep?: (ms: number) => Promise<void>,
    private readonly code = '',
    /** false: a cache miss is an internal error instead of a run (a queue driver assembling its workers' results). */
    private readonly computeMisses = true,
    /** The name a stage's metrics are kept under (REST's execute and verify are not the sequences'). */
    private readonly label: (stage: string) => string = (stage) => stage,
  ) {}

  /** `plannedKey`: the key `keyOf` gives this input, computed already (flow.ts, planItem). */
  async run<I, O, C extends StageContext>(
    stage: CachedStage<I, O, C, string>,
    input: I,
    ctx: C,
    plannedKey?: string,
  ): Promise<Outcome<O>> {
    const metrics = this.metricsOf(stage.name);
    const started = performance.now();
    let key = '';
    try {
      if (this.store) {
        key = plannedKey ?? this.keyOf(stage, input, ctx);
        const cached = await this.store.get<O>(key);
        if (cached) {
          metrics.cacheHits++;
          return this.remember(key, cached);
        }
      }
      if (!this.computeMisses) return reject(INTERNAL_ERROR, NOT_COMPUTED);
      metrics.runs++;
      const outcome = await withRetries(() => stage.run(input, ctx), this.policy, {
        onRetry: () => metrics.retries++,
        sleep: this.sleep,
      });
      return this.settle(key, stage.name, outcome);
    } catch (error) {
      const rejection = rejectionFrom<O>(error);
      if (rejection) return this.settle(key, stage.name, rejection);
      return reject(INTERNAL_ERROR, faultMessage(error));
    } finally {
      metrics.ms += performance.now() - started;
    }
  }

  /**
   * A batch stage over `inputs`: the outcomes the store holds, then the others in one call
   * of the stage (none without computeMisses). A throw is a fault of the run for every item
   * of the call; like an item's `internal_error` outcome, it is not cached.
   */
  async runBatch<I, O, C extends StageContext>(
    stage: BatchStage<I, O, C>,
    inputs: readonly I[],
    ctx: C,
    onSettled?: (count: number) => void,
  ): Promise<Outcome<O>[]> {
    const keys = inputs.map((input) => this.keyOf(stage, input, ctx));
    const outcomes = await this.lookupKeys<O>(stage.name, keys);
    const misses = inputs.flatMap((_, i) => (outcomes[i] ? [] : [i]));
    onSettled?.(inputs.length - misses.length);
    if (misses.length === 0) return outcomes as Outcome<O>[];
    if (!this.computeMisses) {
      onSettled?.(misses.length);
      for (const i of misses) outcomes[i] = reject(INTERNAL_ERROR, NOT_COMPUTED);
      return outcomes as Outcome<O>[];
    }
    const metrics = this.metricsOf(stage.name);
    const started = performance.now();
    metrics.runs += misses.length;
    try {
      const computed = await stage.runBatch(
        misses.map((i) => inputs[i]),
        ctx,
        onSettled,
      );
      misses.forEach((i, k) => {
        const outcome = computed[k];
        outcomes[i] =
          !outcome.ok && outcome.category === INTERNAL_ERROR ? outcome : this.settle(keys[i], stage.name, outcome);
      });
    } catch (error) {
      const fault = reject<O>(INTERNAL_ERROR, faultMessage(error));
      for (const i of misses) outcomes[i] = fault;
      onSettled?.(misses.length);
    } finally {
      metrics.ms += performance.now() - started;
    }
    return outcomes as Outcome<O>[];
  }

  /** Stored outcomes by key (a key handed over by a job that computed it). */
  async lookupKeys<O>(stage: string, keys: readonly string[]): Promise<(Outcome<O> | undefined)[]> {
    if (!this.store || keys.length === 0) return keys.map(() => undefined);
    const stored = await this.store.getMany<Outcome<O>>(keys);
    const metrics = this.metricsOf(stage);
    return keys.map((key) => {
      const outcome = stored.get(key);
      if (!outcome) return undefined;
      metrics.cacheHits++;
      return this.remember(key, outcome);
    });
  }

  /** The cache key of a stage invocation; values handed out earlier (or stand-ins) count by their key. */
  keyOf<I, C extends StageContext>(stage: KeyedStage<I, C, string>, input: I, ctx: C): string {
    return cacheKeyOf(stage.name, stage.version, stage.cacheKey(input, ctx), (v) => this.provenance.get(v), this.code);
  }

  /**
   * An opaque value standing for the output stored under `key`, for planning keys ahead
   * (flow.ts, planItem): it hashes as that key, and any look inside it throws.
   */
  standIn(key: string): object {
    const value = opaqueValue();
    this.provenance.set(value, key);
    return value;
  }

  /** Writes the outcomes settled so far if the last write is old enough (the store's group commits). */
  async commit(): Promise<void> {
    await this.store?.commit();
  }

  /** Writes every outcome settled so far. */
  async flush(): Promise<void> {
    await this.store?.flush();
  }

  /** A stage outcome served from the cache by a whole cached item result. */
  countCacheHit(stage: string): void {
    this.metricsOf(stage).cacheHits++;
  }

  /**
   * Stores the outcome and returns it as the store will give it back: a fresh run and a
   * cache hit (or a queue worker) then hand later stages exactly the same data.
   */
  private settle<O>(key: string, stage: string, outcome: Outcome<O>): Outcome<O> {
    const text = JSON.stringify(outcome);
    this.store?.put(key, stage, text);
    return this.remember(key, JSON.parse(text) as Outcome<O>);
  }

  private remember<O>(key: string, outcome: Outcome<O>): Outcome<O> {
    if (key && outcome.ok && typeof outcome.value === 'object' && outcome.value !== null) {
      this.provenance.set(outcome.value, key);
    }
    return outcome;
  }

  private metricsOf(name: string): StageMetrics {
    return metricsOf(this.metrics, this.label(name));
  }
}

/** What an `internal_error` says of the throw behind it. */
export function faultMessage(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** A stage's entry in a metrics table, created at zero on first use. */
export function metricsOf(table: Map<string, StageMetrics>, stage: string): StageMetrics {
  let metrics = table.get(stage);
  if (!metrics) table.set(stage, (metrics = { cacheHits: 0, runs: 0, retries: 0, ms: 0 }));
  return metrics;
}

/** A timer that adds a piece of work's time (and its runs and cache hits) to a stage's entry in `table`. */
export function timedInto(table: Map<string, StageMetrics>) {
  return async <T>(stage: string, work: () => Promise<T>, runs = 1, hits = 0): Promise<T> => {
    const metrics = metricsOf(table, stage);
    const started = performance.now();
    try {
      return await work();
    } finally {
      metrics.ms += performance.now() - started;
      metrics.runs += runs;
      metrics.cacheHits += hits;
    }
  };
}

/** Thrown when a stage's cache key looks inside an upstream value while keys are planned. */
export class OpaqueValueError extends Error {
  override name = 'OpaqueValueError';
}

function opaqueValue(): object {
  const refuse = (): never => {
    throw new OpaqueValueError('a planned cache key cannot look inside an upstream value');
  };
  return new Proxy(
    {},
    {
      // JSON.stringify asks every object for toJSON before the replacer sees it.
      get: (_target, property) => (property === 'toJSON' ? undefined : refuse()),
      has: refuse,
      ownKeys: refuse,
      getOwnPropertyDescriptor: refuse,
      set: refuse,
    },
  );
}
