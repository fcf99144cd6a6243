import { UnrecoverableError } from 'bullmq';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import { getOrStart, LruMap } from '../../core/lru.js';
import { unreportedUsage as usageSince, type UsageTotals } from '../../generators/llm/usage.js';
import type { RestServiceHandle } from '../rest-service-types.js';
import type { RedisStore } from '../store/redis-store.js';
import type { RunSpec } from './jobs.js';
import type { RunRegistry } from './registry.js';

/**
 * What a worker knows of a run it has jobs of: its spec (read once from the registry), the
 * store its results go to, its REST services and the LLM usage already reported. A worker
 * may serve runs of several drivers in turn; it keeps the contexts of the few it used last.
 */

export interface RunContext {
  spec: RunSpec;
  databases: Map<string, DatabaseInfo>;
  /** By `Instance.index` (its place in the source file; a run restricted with --db has gaps). */
  instances: Map<number, Instance>;
  /** The shared store, or the run's own (a run with the cache off: jobs.ts, storePrefix). */
  store: RedisStore;
  services?: Promise<RestServiceHandle | null>;
  /** Usage already added to the run's counters. */
  reported: Record<string, UsageTotals>;
}

/** Runs whose contexts are kept: a worker rarely serves more at once. */
const KEPT_RUNS = 4;

export interface RunContextSources {
  registry: Pick<RunRegistry, 'spec'>;
  /** This worker's build (code-fingerprint.ts): a run planned by another build is refused. */
  code: string;
  /** The store of a run's results: the shared one, or the run's own when its cache is off. */
  storeOf: (spec: RunSpec) => RedisStore;
}

export class RunContexts {
  /**
   * A context evicted here is not closed: a job in hand may still use it, and on the queue its
   * services hold nothing to close (the LLM reply cache is the shared one, in Redis).
   */
  private readonly runs = new LruMap<string, Promise<RunContext>>(KEPT_RUNS);

  constructor(private readonly sources: RunContextSources) {}

  /** A run not (yet) known, or refused, is asked for again by its next job. */
  of(runId: string): Promise<RunContext> {
    return getOrStart(this.runs, runId, () => this.load(runId));
  }

  /** The contexts kept (their services are closed with the worker). */
  kept(): IterableIterator<Promise<RunContext>> {
    return this.runs.values();
  }

  private async load(runId: string): Promise<RunContext> {
    const { registry, code, storeOf } = this.sources;
    const spec = await registry.spec(runId);
    if (!spec) throw new UnrecoverableError(`run ${runId} is not known to this Redis`);
    if (spec.code !== code)
      throw new UnrecoverableError(
        `this worker's build (${code.slice(0, 12)}) differs from the run's (${spec.code.slice(0, 12)}): its results would not match`,
      );
    return {
      spec,
      databases: new Map(spec.databases.map((db) => [db.dbId, db])),
      instances: new Map(spec.instances.map((i) => [i.index, i])),
      store: storeOf(spec),
      reported: {},
    };
  }
}

export function instanceOf(ctx: RunContext, index: number): Instance {
  const instance = ctx.instances.get(index);
  if (!instance) throw new UnrecoverableError(`run ${ctx.spec.runId} has no instance ${index}`);
  return instance;
}

/** The run's LLM usage since the last call (by model), remembered as reported. */
export async function unreportedUsage(ctx: RunContext): Promise<Record<string, UsageTotals>> {
  const usage = ctx.services ? ((await ctx.services)?.usage?.snapshot().byModel ?? {}) : {};
  return usageSince(usage, ctx.reported);
}
