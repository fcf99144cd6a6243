import { stat } from 'node:fs/promises';
import { DelayedError, Queue, UnrecoverableError, WaitingChildrenError, Worker, type Job, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { UsageTotals } from '../../generators/llm/usage.js';
import type { RestServer } from '../../runtime/rest/server.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import { codeFingerprint } from '../code-fingerprint.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import type { RestServiceHandle } from '../rest-service-types.js';
import { restServices } from '../rest-services.js';
import { runInProcess } from '../runner/in-process.js';
import { restSynthesisKey } from '../runner/rest-keys.js';
import { dedupFor, finalCheck, finalKeyOf, goldOf, servedEndpoint, storedDedup, synthesizeBatch, type FinalRecord, type RestPhaseContext } from '../runner/rest-phases.js';
import { startRestServer } from '../runner/rest.js';
import { INTERNAL_ERROR, StageRunner, timedInto } from '../runner/stage-runner.js';
import type { SynthesisRecord } from '../stages/rest-synthesize.js';
import { sha256File } from '../sources/schema.js';
import { memoizeExecutor } from '../sql-memo.js';
import { ITEM_STAGES } from '../stages/index.js';
import { RedisStore } from '../store/redis-store.js';
import { closeConnection, ConnectionWatch, redactedUrl, redisConnection } from './connection.js';
import { crashIfPoisoned } from './faults.js';
import { DEFAULT_PREFIX, jobId, STAGE_GROUPS, storePrefix, STAGE_QUEUES, type BarrierJob, type BarrierResult, type DedupJob, type ItemJob, type RunSpec, type StageGroup, type SynthesisJob, type VerifyJob } from './jobs.js';
import { childJobOptions } from './options.js';
import { SuspectIsolation } from './isolation.js';
import { RunRegistry } from './registry.js';
import { sharedLlm } from './shared-llm.js';

/**
 * A queue worker: one BullMQ Worker per stage group, running the same stage code as the
 * in-process runner against the shared Redis store, so a worker needs only Redis and the
 * databases (at the paths the run names; their content is checked against the run's
 * fingerprints before the first job touches them). Results are written to the store before
 * a job completes: a worker killed at any point loses nothing another worker cannot redo.
 */

export interface QueueWorkerOptions {
  url: string;
  prefix?: string;
  /** Jobs in flight per stage group. */
  concurrency: number;
  /** Stage groups to work on (default: all). */
  groups?: readonly StageGroup[];
  /** SQL worker processes of this worker (killable, for timeouts). */
  sqlWorkers?: number;
  /** BullMQ lock: a job whose worker died is taken back after this long. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /**
   * A job whose worker died this many times is taken back again; once more, and it fails
   * (a poison job). 2: an innocent job caught in two crashes of its neighbours still completes.
   */
  maxStalls?: number;
  /** Tests pass a scripted chat model. */
  chatModel?: BaseChatModel;
  log?: (line: string) => void;
  /** Tells of Redis outages (default: one of this worker's own, on `log`); a driver passes its own, so a process tells once. */
  watch?: ConnectionWatch;
  /** Drives scheduled runs (the `run` group); set by the CLI, which can load generate(). */
  driveRun?: Processor;
}

export interface QueueWorkers {
  /** Finishes the jobs in hand (or, with `force`, leaves them to be taken back) and closes everything. */
  close(force?: boolean): Promise<void>;
}

/** How long a job handed back while a suspect runs stays out of the queue. */
const POSTPONE_MS = 500;

interface RunContext {
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

export async function startQueueWorkers(options: QueueWorkerOptions): Promise<QueueWorkers> {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const log = options.log ?? (() => {});
  const watch = options.watch ?? new ConnectionWatch(options.url, log);
  const redis = redisConnection(options.url, {}, watch);
  const registry = new RunRegistry(redis, prefix);
  const shared = new RedisStore(redis, { prefix });
  const code = codeFingerprint();
  let pool: SqlPool | undefined;
  // SQL worker processes start with the first job that runs SQL.
  let executor: ReturnType<typeof memoizeExecutor> | undefined;
  const sql = () => (executor ??= memoizeExecutor((pool = createSqlPool({ size: options.sqlWorkers ?? 2 }))));
  const runs = new Map<string, Promise<RunContext>>();
  const servers = new Map<string, Promise<RestServer>>();
  const checked = new Map<string, Promise<void>>();

  const contextOf = (runId: string): Promise<RunContext> => {
    let context = runs.get(runId);
    if (!context) {
      context = loadRun(runId);
      runs.set(runId, context);
      context.catch(() => runs.delete(runId));
      // Keep the few latest runs only.
      if (runs.size > 4) runs.delete(runs.keys().next().value!);
    }
    return context;
  };
  const loadRun = async (runId: string): Promise<RunContext> => {
    const spec = await registry.spec(runId);
    if (!spec) throw new UnrecoverableError(`run ${runId} is not known to this Redis`);
    if (spec.code !== code) throw new UnrecoverableError(`this worker's build (${code.slice(0, 12)}) differs from the run's (${spec.code.slice(0, 12)}): its results would not match`);
    return {
      spec,
      databases: new Map(spec.databases.map((db) => [db.dbId, db])),
      instances: new Map(spec.instances.map((i) => [i.index, i])),
      store: spec.config.cache ? shared : new RedisStore(redis, { prefix: storePrefix(prefix, { runId, cache: false }) }),
      reported: {},
    };
  };
  /** The database as the run saw it: same content, or the job fails for good. */
  const databaseOf = async (ctx: RunContext, dbId: string): Promise<DatabaseInfo> => {
    const db = ctx.databases.get(dbId);
    if (!db) throw new UnrecoverableError(`run ${ctx.spec.runId} has no database ${dbId}`);
    const info = await stat(db.path).catch(() => null);
    if (!info) throw new UnrecoverableError(`database ${dbId} is not at ${db.path} on this worker`);
    const key = `${db.path}|${info.size}|${info.mtimeMs}|${db.fingerprint}`;
    let check = checked.get(key);
    if (!check) {
      check = sha256File(db.path).then((hash) => {
        if (hash !== db.fingerprint) throw new UnrecoverableError(`database ${dbId} at ${db.path} differs from the one the run was planned on`);
      });
      checked.set(key, check);
      check.catch(() => checked.delete(key));
    }
    await check;
    return db;
  };
  const servicesOf = (ctx: RunContext): Promise<RestServiceHandle | null> =>
    (ctx.services ??= restServices(ctx.spec.config, sql(), {
      model: options.chatModel,
      shared: sharedLlm(redis, prefix, ctx.spec.config),
    }));
  const stageRunnerOf = ({ spec, store }: RunContext) =>
    new StageRunner(store, { retries: spec.config.retries, baseMs: spec.config.backoff.baseMs, maxMs: spec.config.backoff.maxMs }, undefined, spec.code);
  const restContext = async (ctx: RunContext, stageRunner: StageRunner): Promise<RestPhaseContext> => {
    const services = await servicesOf(ctx);
    if (!services) throw new UnrecoverableError('REST services unavailable');
    return { config: ctx.spec.config, datasetName: ctx.spec.datasetName, executor: sql(), store: ctx.store, stageRunner, services: services.services, code: ctx.spec.code };
  };
  /** Adds a job's stage metrics and the LLM usage since the last report to the run's counters. */
  const report = async (ctx: RunContext, stageRunner: { metrics: StageRunner['metrics'] }): Promise<void> => {
    const usage = ctx.services ? (await ctx.services)?.usage?.snapshot().byModel ?? {} : {};
    const delta: Record<string, UsageTotals> = {};
    for (const [model, totals] of Object.entries(usage)) {
      const before = ctx.reported[model];
      delta[model] = Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v - (before?.[k as keyof UsageTotals] ?? 0)])) as unknown as UsageTotals;
      ctx.reported[model] = { ...totals };
    }
    await registry.addMetrics(ctx.spec.runId, stageRunner.metrics, delta);
  };

  const processors: Partial<Record<StageGroup, Processor>> = {
    item: async (job: Job<ItemJob>) => {
      const ctx = await contextOf(job.data.runId);
      const instance = instanceOf(ctx, job.data.index);
      crashIfPoisoned(instance.id);
      const db = await databaseOf(ctx, instance.dbId);
      const run = await runInProcess({ config: ctx.spec.config, databases: [db], instances: [instance], stages: ITEM_STAGES, executor: sql(), store: ctx.store, codeFingerprint: ctx.spec.code });
      const fault = Object.values(run.items[0].results).find((r) => r && !r.ok && r.category === INTERNAL_ERROR);
      await report(ctx, run);
      if (fault && !fault.ok) throw new Error(`${fault.stage}: ${fault.message}`);
      await registry.markDone(ctx.spec.runId, 'item', job.id!);
      return { ok: true };
    },
    'rest.synthesize': async (job: Job<SynthesisJob>) => {
      const ctx = await contextOf(job.data.runId);
      const db = await databaseOf(ctx, job.data.db);
      const stageRunner = stageRunnerOf(ctx);
      const rest = await restContext(ctx, stageRunner);
      const batch = job.data.indices.map((i) => instanceOf(ctx, i));
      batch.forEach((instance) => crashIfPoisoned(instance.id));
      const golds = await Promise.all(batch.map((instance) => goldOf(instance, db, rest)));
      const fault = golds.find((g) => !g.ok && g.category === INTERNAL_ERROR);
      const ready = batch.flatMap((instance, k) => (golds[k].ok ? [{ instance, gold: golds[k].value }] : []));
      const records = await synthesizeBatch(ready, ready.map(({ instance }) => restSynthesisKey(instance, db, rest)), db, rest);
      await ctx.store.flush();
      await report(ctx, stageRunner);
      const failed = fault ?? records.find((r) => !r.ok && r.category === INTERNAL_ERROR);
      if (failed && !failed.ok) throw new Error(`rest.synthesize: ${failed.message}`);
      await registry.markDone(ctx.spec.runId, 'rest.synthesize', job.id!);
      return { ok: true };
    },
    'rest.dedup': async (job: Job<DedupJob>, token?: string) => {
      const ctx = await contextOf(job.data.runId);
      if (job.data.step !== 'await-verify') {
        const db = await databaseOf(ctx, job.data.db);
        const rest = await restContext(ctx, stageRunnerOf(ctx));
        const instances = ctx.spec.instances.filter((i) => i.dbId === db.dbId);
        const keys = instances.map((instance) => restSynthesisKey(instance, db, rest));
        const records = await ctx.store.getMany<SynthesisRecord>(keys);
        const entries = instances.flatMap((instance, k) => {
          const record = records.get(keys[k]);
          return record?.ok ? [{ instanceId: instance.id, synthesisKey: keys[k], endpoint: record.endpoint }] : [];
        });
        const { key, dedup } = await dedupFor(db, entries, rest);
        await ctx.store.flush();
        const byId = new Map(instances.map((i) => [i.id, i]));
        const finals = entries.map((e) => ({ instance: byId.get(e.instanceId)!, key: finalKeyOf(servedEndpoint(dedup, e.instanceId), e.synthesisKey, db, rest) }));
        const cached = await ctx.store.getMany<FinalRecord>(finals.map((f) => f.key));
        const missing = finals.filter((f) => !cached.has(f.key));
        const ids = missing.map(({ instance }) => jobId(ctx.spec.runId, 'verify', instance.index));
        await registry.plan(ctx.spec.runId, 'rest.verify', ids);
        await verifyQueue().addBulk(
          missing.map(({ instance }, k) => ({
            name: 'rest.verify',
            data: { runId: ctx.spec.runId, index: instance.index, dedupKey: key } satisfies VerifyJob,
            opts: { ...childJobOptions(ctx.spec.config), jobId: ids[k], parent: { id: job.id!, queue: job.queueQualifiedName } },
          })),
        );
        await job.updateData({ ...job.data, step: 'await-verify' });
      }
      if (await job.moveToWaitingChildren(token!)) throw new WaitingChildrenError();
      await registry.markDone(ctx.spec.runId, 'rest.dedup', job.id!);
      return { failures: failureIds(await job.getIgnoredChildrenFailures()) } satisfies BarrierResult;
    },
    'rest.verify': async (job: Job<VerifyJob>) => {
      const ctx = await contextOf(job.data.runId);
      const instance = instanceOf(ctx, job.data.index);
      crashIfPoisoned(instance.id);
      const db = await databaseOf(ctx, instance.dbId);
      const stageRunner = stageRunnerOf(ctx);
      const rest = await restContext(ctx, stageRunner);
      const gold = await goldOf(instance, db, rest);
      const synthesisKey = restSynthesisKey(instance, db, rest);
      const record = (await ctx.store.getMany<SynthesisRecord>([synthesisKey])).get(synthesisKey);
      const dedup = await storedDedup(job.data.dedupKey, ctx.store);
      if (!gold.ok || !record?.ok || !dedup) throw new Error(`rest.verify: the inputs of instance ${instance.id} are not in the store`);
      const endpoint = servedEndpoint(dedup, instance.id);
      const key = finalKeyOf(endpoint, synthesisKey, db, rest);
      const serverUrl = async () => (await serverFor(job.data.dedupKey, db, dedup, ctx)).url;
      const final = await finalCheck({ instance, gold: gold.value }, endpoint, key, serverUrl, db, rest, timedInto(stageRunner.metrics));
      await ctx.store.flush();
      await report(ctx, stageRunner);
      if (!final.ok && final.category === INTERNAL_ERROR) throw new Error(`rest.verify: ${final.message}`);
      await registry.markDone(ctx.spec.runId, 'rest.verify', job.id!);
      return { ok: true };
    },
    emit: async (job: Job<BarrierJob>) => {
      const failures = failureIds(await job.getIgnoredChildrenFailures());
      for (const value of Object.values(await job.getChildrenValues<Partial<BarrierResult>>())) Object.assign(failures, value?.failures ?? {});
      await registry.markDone(job.data.runId, 'emit', job.id!);
      return { failures } satisfies BarrierResult;
    },
    run: options.driveRun,
  };

  /** One live server per deduped database (this worker's, on a loopback port), the latest few kept. */
  const serverFor = (dedupKey: string, db: DatabaseInfo, dedup: Awaited<ReturnType<typeof storedDedup>> & object, ctx: RunContext): Promise<RestServer> => {
    let server = servers.get(dedupKey);
    if (!server) {
      server = startRestServer({ databases: [db], executor: sql(), config: ctx.spec.config, datasetName: ctx.spec.datasetName }, new Map([[db.dbId, dedup]]));
      servers.set(dedupKey, server);
      server.catch(() => servers.delete(dedupKey));
      if (servers.size > 16) {
        const [oldest, evicted] = servers.entries().next().value!;
        servers.delete(oldest);
        void evicted.then((s) => s.close()).catch(() => {});
      }
    }
    return server;
  };

  const connections: Redis[] = [];
  let verifyQueueOpened: Queue | undefined;
  const verifyQueue = (): Queue => {
    if (!verifyQueueOpened) {
      const connection = redisConnection(options.url, {}, watch);
      connections.push(connection);
      verifyQueueOpened = new Queue(STAGE_QUEUES['rest.verify'], { connection, prefix });
      watch.errorsOf(verifyQueueOpened, 'rest.verify queue');
    }
    return verifyQueueOpened;
  };

  const workers: Worker[] = [];
  const isolation = new SuspectIsolation({
    pause: async () => void (await Promise.all(workers.map((w) => w.pause(true)))),
    // Not awaited, as before: BullMQ's resume() never rejects (it emits 'error' instead).
    resume: () => {
      for (const w of workers) void w.resume();
    },
  });
  const groups = workedGroups(options.groups ?? STAGE_GROUPS, processors);
  for (const group of groups) {
    const work = processors[group]!;
    // The run driver only waits: it is never isolated (it would hold back every stage job).
    const processor: Processor =
      group === 'run'
        ? work
        : async (job, token) => {
            let stalls = 0;
            return isolation.run<unknown>(
              // BullMQ counts stalls in the job's hash (`stc`) but does not hand the count to the processor.
              async () => (stalls = Number(await redis.hget(`${job.queueQualifiedName}:${job.id}`, 'stc')) || 0) > 0,
              () => {
                if (stalls > 0) log(`${group} job ${job.id} stalled before (${stalls}x): running it alone`);
                return work(job, token);
              },
              async () => {
                await job.moveToDelayed(Date.now() + POSTPONE_MS * (0.5 + Math.random()), token);
                throw new DelayedError();
              },
            );
          };
    const connection = redisConnection(options.url, {}, watch);
    connections.push(connection);
    const worker = new Worker(STAGE_QUEUES[group], processor, {
      connection,
      prefix,
      // A scheduled run is driven by one worker at a time; everything else as configured.
      concurrency: group === 'run' ? 1 : options.concurrency,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? options.lockDurationMs ?? 30_000,
      maxStalledCount: options.maxStalls ?? 2,
    });
    worker.on('failed', (job, error) => {
      // Failed for good (attempts used up, unrecoverable, or stalled too often), not merely retried.
      const markIfFinal = async () => {
        // Job data is untyped here (`any`). Every group's data has a runId except `run`'s (RunJob): its failure is
        // recorded under the run id `undefined`, a set nothing reads.
        // eslint-disable-next-line @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access -- see above
        if (job && (await job.getState()) === 'failed') await registry.markFailed(job.data.runId, group, job.id!);
      };
      void markIfFinal().catch(() => {});
      log(`${group} job ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`);
    });
    watch.errorsOf(worker, `${group} worker`);
    workers.push(worker);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  log(startLine(groups, options));

  return {
    async close(force = false) {
      await Promise.all(workers.map((w) => w.close(force)));
      await verifyQueueOpened?.close();
      await Promise.all([...servers.values()].map((s) => s.then((server) => server.close()).catch(() => {})));
      for (const context of runs.values()) await context.then((c) => c.services && c.services.then((s) => s?.close())).catch(() => {});
      await pool?.close();
      await Promise.all([...connections, redis].map(closeConnection));
    },
  };
}

/** The groups asked for, each once, that this worker has a processor for (`run` only where runs can be driven). */
function workedGroups(asked: readonly StageGroup[], processors: Partial<Record<StageGroup, Processor>>): StageGroup[] {
  return [...new Set(asked)].filter((group) => processors[group]);
}

/** What a worker says when it starts: the queues it takes jobs from (by stage group, as --stages names them), and where. */
function startLine(groups: readonly StageGroup[], options: Pick<QueueWorkerOptions, 'url' | 'prefix' | 'concurrency'>): string {
  return `worker: ${groups.length} queue${groups.length === 1 ? '' : 's'} (${groups.join(', ')}) at ${redactedUrl(options.url)}, prefix ${options.prefix ?? DEFAULT_PREFIX}, concurrency ${options.concurrency}`;
}

function instanceOf(ctx: RunContext, index: number): Instance {
  const instance = ctx.instances.get(index);
  if (!instance) throw new UnrecoverableError(`run ${ctx.spec.runId} has no instance ${index}`);
  return instance;
}

/** Ignored child failures by job id (BullMQ keys them `<prefix>:<queue>:<id>`). */
function failureIds(failures: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(failures).map(([key, reason]) => [key.slice(key.lastIndexOf(':') + 1), reason]));
}

