import { UnrecoverableError } from 'bullmq';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import { getOrStart, LruMap } from '../../core/lru.js';
import { unreportedUsage as usageSince, type UsageTotals } from '../../generators/llm/usage.js';
import type { RestServiceHandle } from '../rest-service-types.js';
import type { RedisStore } from '../store/redis-store.js';
import type { RunHead } from './jobs.js';
import type { RunRegistry } from './registry.js';

/**
 * What a worker knows of a run it has jobs of: its head (read once from the registry), the
 * chunks of the databases its jobs named (each read once while kept), the store its results
 * go to, its REST services and the LLM usage already reported. A worker may serve runs of
 * several drivers in turn; it keeps the contexts of the few it used last, and of each run the
 * databases it used last: its memory and its reads follow the databases it works on, not the
 * size of the corpus.
 */

export interface RunContext {
  spec: RunHead;
  /** The run's databases a job has named, by id (read on first use; see RunContexts.database). */
  databases: LruMap<string, Promise<RunDatabase>>;
  /** The shared store, or the run's own (a run with the cache off: jobs.ts, storePrefix). */
  store: RedisStore;
  services?: Promise<RestServiceHandle | null>;
  /** Usage already added to the run's counters. */
  reported: Record<string, UsageTotals>;
}

/** One database of a run, as its chunk holds it. */
export interface RunDatabase {
  info: DatabaseInfo;
  /** In source order. */
  instances: Instance[];
  /** By `Instance.index` (its place in the source file). */
  byIndex: Map<number, Instance>;
}

/** Runs whose contexts are kept: a worker rarely serves more at once. */
const KEPT_RUNS = 4;
/**
 * Databases kept per run: jobs are queued database by database, so the jobs a worker has in
 * hand name a few at once (the stage groups move through the databases at their own pace);
 * a database evicted is read again if a job names it later.
 */
export const KEPT_DATABASES = 16;

export interface RunContextSources {
  registry: Pick<RunRegistry, 'head' | 'chunk'>;
  /** This worker's build (code-fingerprint.ts): a run planned by another build is refused. */
  code: string;
  /** The store of a run's results: the shared one, or the run's own when its cache is off. */
  storeOf: (spec: RunHead) => RedisStore;
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

  /** A database of the run, from its chunk; one the run does not have, or whose chunk is gone, fails the job for good. */
  database(ctx: RunContext, dbId: string): Promise<RunDatabase> {
    return getOrStart(ctx.databases, dbId, () => this.loadDatabase(ctx.spec, dbId));
  }

  /** The contexts kept (their services are closed with the worker). */
  kept(): IterableIterator<Promise<RunContext>> {
    return this.runs.values();
  }

  private async load(runId: string): Promise<RunContext> {
    const { registry, code, storeOf } = this.sources;
    const spec = await registry.head(runId);
    if (!spec) throw new UnrecoverableError(`run ${runId} is not known to this Redis`);
    if (spec.code !== code)
      throw new UnrecoverableError(
        `this worker's build (${code.slice(0, 12)}) differs from the run's (${spec.code.slice(0, 12)}): its results would not match`,
      );
    return {
      spec,
      databases: new LruMap(KEPT_DATABASES),
      store: storeOf(spec),
      reported: {},
    };
  }

  private async loadDatabase(spec: RunHead, dbId: string): Promise<RunDatabase> {
    if (!spec.dbIds.includes(dbId)) throw new UnrecoverableError(`run ${spec.runId} has no database ${dbId}`);
    const chunk = await this.sources.registry.chunk(spec.runId, dbId);
    // Written before the head, kept as long as it: gone means Redis lost it (evicted, restarted without persistence).
    if (!chunk)
      throw new UnrecoverableError(
        `run ${spec.runId}: the spec of database ${dbId} is missing from Redis (lost?); rerun the driver with --run ${spec.runId} to register it again`,
      );
    return {
      info: chunk.database,
      instances: chunk.instances,
      byIndex: new Map(chunk.instances.map((i) => [i.index, i])),
    };
  }
}

export function instanceOf(ctx: RunContext, db: RunDatabase, index: number): Instance {
  const instance = db.byIndex.get(index);
  if (!instance) throw new UnrecoverableError(`run ${ctx.spec.runId} has no instance ${index} in ${db.info.dbId}`);
  return instance;
}

/** The run's LLM usage since the last call (by model), remembered as reported. */
export async function unreportedUsage(ctx: RunContext): Promise<Record<string, UsageTotals>> {
  const usage = ctx.services ? ((await ctx.services)?.usage?.snapshot().byModel ?? {}) : {};
  return usageSince(usage, ctx.reported);
}
