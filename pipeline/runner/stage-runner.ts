import { performance } from 'node:perf_hooks';
import { reject, rejectionFrom, type Outcome } from '../outcome.js';
import type { ItemStage, StageContext } from '../stage.js';
import { cacheKeyOf, type RunStore } from '../store/run-store.js';
import { withRetries, type RetryPolicy } from './retry.js';

/**
 * Runs one stage on one input the way every runner must: cache lookup, retries with
 * backoff for TransientError, a categorized rejection for a RejectionError, and
 * `internal_error` for anything else thrown (that item only). Terminal outcomes are
 * cached; internal errors are not, so a rerun tries them again.
 */

export const INTERNAL_ERROR = 'internal_error';

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

  constructor(
    private readonly store: RunStore | null,
    private readonly policy: RetryPolicy,
    private readonly sleep?: (ms: number) => Promise<void>,
  ) {}

  async run<I, O>(stage: ItemStage<I, O>, input: I, ctx: StageContext): Promise<Outcome<O>> {
    const metrics = this.metricsOf(stage.name);
    const started = performance.now();
    let key = '';
    try {
      if (this.store) {
        key = cacheKeyOf(stage.name, stage.version, stage.cacheKey(input, ctx), (v) => this.provenance.get(v));
        const cached = this.store.get<O>(key);
        if (cached) {
          metrics.cacheHits++;
          return this.remember(key, cached);
        }
      }
      metrics.runs++;
      const outcome = await withRetries(() => stage.run(input, ctx), this.policy, {
        onRetry: () => metrics.retries++,
        sleep: this.sleep,
      });
      return this.settle(key, stage.name, outcome);
    } catch (error) {
      const rejection = rejectionFrom<O>(error);
      if (rejection) return this.settle(key, stage.name, rejection);
      return reject(INTERNAL_ERROR, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    } finally {
      metrics.ms += performance.now() - started;
    }
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
    let metrics = this.metrics.get(name);
    if (!metrics) {
      metrics = { cacheHits: 0, runs: 0, retries: 0, ms: 0 };
      this.metrics.set(name, metrics);
    }
    return metrics;
  }
}
