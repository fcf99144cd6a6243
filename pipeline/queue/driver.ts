import { FlowProducer, Job, Queue, type FlowJob } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { Config, QueueConfig } from '../../config/schema.js';
import { Cleanups } from '../../core/cleanups.js';
import type { UsageTotals } from '../../generators/llm/usage.js';
import type { Instance } from '../../core/model.js';
import type { ProgressListener } from '../progress.js';
import { groupBy } from '../../core/group.js';
import { synthesisBatches } from '../runner/rest-flow.js';
import type { StageMetrics } from '../runner/stage-runner.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import { closeConnection, redactedUrl, redisConnection, type ConnectionWatch } from './connection.js';
import {
  jobId,
  newRunId,
  STAGE_QUEUES,
  type BarrierJob,
  type BarrierResult,
  type DedupJob,
  type ItemJob,
  type RunSpec,
  type SynthesisJob,
} from './jobs.js';
import { childJobOptions } from './options.js';
import { QueueUnavailableError } from './redis-check.js';
import { RunRegistry } from './registry.js';
import { QueueWorker } from './worker.js';

/**
 * The driver of a queue run: registers the run (its spec, split per database, for workers), enqueues per
 * database one flow — the barrier, with the SLOT/SEL item jobs and the REST dedup (with its
 * synthesis batches) as children — for the work the shared store does not hold yet, then
 * waits for every barrier while reporting progress. Optionally works on the run itself.
 * What the workers computed is assembled afterwards by the same runners, from the store
 * (generate.ts): the output cannot differ from the in-process runner's.
 */

export interface QueueDriveInput {
  config: Config;
  queue: QueueConfig;
  redis: Redis;
  /** The process's watch on Redis (the backend's): one line per reconnect step for all connections. */
  watch: ConnectionWatch;
  store: OutcomeStore;
  spec: Omit<RunSpec, 'runId'>;
  source: string;
  out: string;
  /** Per instance: the store keys of its whole SLOT/SEL results (absent: it cannot be planned, so it runs); null: no SLOT/SEL. */
  resultKeys: ReadonlyMap<Instance, readonly string[]> | null;
  /** Per instance: the key of its REST synthesis record (REST runs only). */
  synthesisKeys: ReadonlyMap<Instance, string> | null;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  chatModel?: BaseChatModel;
  scheduler?: string;
  log?: (line: string) => void;
}

export interface QueueDriveResult {
  runId: string;
  aborted: boolean;
  /** Instance index → why its job failed for good, per side of the pipeline. */
  failed: { sequence: Map<number, string>; rest: Map<number, string> };
  metrics: Map<string, StageMetrics>;
  llm: Record<string, UsageTotals>;
  registry: RunRegistry;
}

export async function driveQueueRun(input: QueueDriveInput): Promise<QueueDriveResult> {
  const { config, queue, spec } = input;
  const runId = queue.runId ?? newRunId();
  const registry = new RunRegistry(input.redis, queue.prefix);
  await registry.createRun(
    { ...spec, runId },
    { runId, dataset: spec.datasetName, source: input.source, out: input.out, scheduler: input.scheduler },
  );

  const work = await plannedWork(input, runId);
  const count = (m: Map<string, unknown[]>) => [...m.values()].reduce((n, list) => n + list.length, 0);
  input.log?.(
    `queue run ${runId} (resume with --run ${runId}): ${count(work.items)} item jobs, ${count(work.batches)} synthesis batches, ${work.dbIds.length} databases${input.queue.localWorkers ? '' : '; waiting for workers'}`,
  );
  const connections = [redisConnection(queue.url, {}, input.watch), redisConnection(queue.url, {}, input.watch)];
  const flows = new FlowProducer({ connection: connections[0], prefix: queue.prefix });
  const barriers = new Queue<BarrierJob>(STAGE_QUEUES.emit, { connection: connections[1], prefix: queue.prefix });
  input.watch.errorsOf(flows, 'queue: flow producer');
  input.watch.errorsOf(barriers, 'queue: barriers');
  let workers: QueueWorker | undefined;
  try {
    await registry.plan(
      runId,
      'item',
      [...work.items.values()].flat().map(({ id }) => id),
    );
    await registry.plan(
      runId,
      'rest.synthesize',
      [...work.batches.values()].flat().map(({ id }) => id),
    );
    await registry.plan(runId, 'rest.dedup', work.rest ? work.dbIds.map((db) => jobId(runId, 'dedup', db)) : []);
    await registry.plan(
      runId,
      'emit',
      work.dbIds.map((db) => jobId(runId, 'db', db)),
    );
    for (const db of work.dbIds) {
      // A run re-attached to keeps the flows it has: job ids make re-adding a no-op anyway.
      if (await barriers.getJob(jobId(runId, 'db', db))) continue;
      await flows.add(flowOf(db, runId, work, config));
    }
    if (queue.localWorkers) {
      workers = await QueueWorker.start({
        url: queue.url,
        prefix: queue.prefix,
        concurrency: queue.concurrency,
        sqlWorkers: config.sqlWorkers,
        lockDurationMs: queue.lockDurationMs,
        chatModel: input.chatModel,
        log: input.log,
        watch: input.watch,
      });
    }
    const finished = await waitForBarriers(
      barriers,
      work.dbIds.map((db) => jobId(runId, 'db', db)),
      runId,
      registry,
      input,
    );
    const { stages: metrics, llm } = await registry.metrics(runId);
    if (!finished) {
      await registry.finish(runId, { state: 'aborted' });
      return { runId, aborted: true, failed: { sequence: new Map(), rest: new Map() }, metrics, llm, registry };
    }
    return {
      runId,
      aborted: false,
      failed: await failuresOf(barriers, runId, work, spec.instances),
      metrics,
      llm,
      registry,
    };
  } finally {
    // Each part whatever the others do: local workers that fail to close must not leave the driver's connections open.
    const cleanups = new Cleanups();
    await cleanups.run('local workers', () => workers?.close());
    await cleanups.run('flow producer', () => flows.close());
    await cleanups.run('barrier queue', () => barriers.close());
    await Promise.all(
      connections.map((connection) => cleanups.run('Redis connection', () => closeConnection(connection))),
    );
    cleanups.throwIfFailed('closing the queue run');
  }
}

interface PlannedWork {
  dbIds: string[];
  rest: boolean;
  items: Map<string, { id: string; data: ItemJob }[]>;
  batches: Map<string, { id: string; data: SynthesisJob }[]>;
}

/** The jobs this run needs: items and synthesis batches whose results the store does not hold. */
async function plannedWork(input: QueueDriveInput, runId: string): Promise<PlannedWork> {
  const { spec, store } = input;
  const dbIds = [...spec.databases.map((db) => db.dbId)].sort();
  const known = new Set(dbIds);
  const instances = spec.instances.filter((i) => known.has(i.dbId));
  const items = new Map<string, { id: string; data: ItemJob }[]>(dbIds.map((db) => [db, []]));
  const batches = new Map<string, { id: string; data: SynthesisJob }[]>(dbIds.map((db) => [db, []]));
  const resultKeys = input.resultKeys;
  if (resultKeys) {
    const stored = await store.getMany<unknown>([...resultKeys.values()].flat());
    for (const instance of instances) {
      const keys = resultKeys.get(instance);
      if (keys && keys.every((key) => stored.has(key))) continue;
      items.get(instance.dbId)!.push({
        id: jobId(runId, 'item', instance.index),
        data: { runId, db: instance.dbId, index: instance.index },
      });
    }
  }
  const synthesisKeys = input.synthesisKeys;
  if (synthesisKeys) {
    const cached = await store.getMany<unknown>([...synthesisKeys.values()]);
    const missing = (instance: Instance) => !cached.has(synthesisKeys.get(instance)!);
    const planned = synthesisBatches(
      instances.filter((i) => synthesisKeys.has(i)),
      missing,
      input.config.rest.batchSize,
    );
    const count = new Map<string, number>();
    for (const batch of planned) {
      const db = batch[0].dbId;
      const n = count.get(db) ?? 0;
      count.set(db, n + 1);
      batches
        .get(db)!
        .push({ id: jobId(runId, 'synth', db, n), data: { runId, db, indices: batch.map((i) => i.index) } });
    }
  }
  return { dbIds, rest: synthesisKeys !== null, items, batches };
}

function flowOf(db: string, runId: string, work: PlannedWork, config: Config): FlowJob {
  const child = childJobOptions(config);
  const children: FlowJob[] = work.items
    .get(db)!
    .map(({ id, data }) => ({ name: 'item', queueName: STAGE_QUEUES.item, data, opts: { ...child, jobId: id } }));
  if (work.rest) {
    children.push({
      name: 'rest.dedup',
      queueName: STAGE_QUEUES['rest.dedup'],
      data: { runId, db } satisfies DedupJob,
      opts: { ...child, jobId: jobId(runId, 'dedup', db) },
      children: work.batches.get(db)!.map(({ id, data }) => ({
        name: 'rest.synthesize',
        queueName: STAGE_QUEUES['rest.synthesize'],
        data,
        opts: { ...child, jobId: id },
      })),
    });
  }
  return {
    name: 'db',
    queueName: STAGE_QUEUES.emit,
    data: { runId, db } satisfies BarrierJob,
    opts: { ...child, jobId: jobId(runId, 'db', db), ignoreDependencyOnFailure: false },
    children,
  };
}

/**
 * Polls the barriers until each is completed or failed, reporting progress; survives Redis
 * going away for a while (the connections reconnect). false: the signal fired first.
 */
async function waitForBarriers(
  barriers: Queue,
  ids: readonly string[],
  runId: string,
  registry: RunRegistry,
  input: QueueDriveInput,
): Promise<boolean> {
  const pending = new Set(ids);
  for (;;) {
    if (input.signal?.aborted) return false;
    try {
      for (const id of [...pending]) {
        const state = await barriers.getJobState(id);
        if (state === 'completed' || state === 'failed') pending.delete(id);
        // Enqueued above and kept a week once done: gone means Redis lost it (a restart without persistence).
        if (state === 'unknown')
          throw new QueueUnavailableError(
            `run ${runId}: its jobs are gone from Redis at ${redactedUrl(input.queue.url)} (restarted without persistence?); rerun with --run ${runId} to enqueue them again`,
          );
      }
      for (const p of await registry.progress(runId))
        input.onProgress?.({ stage: p.group, done: p.done + p.failed, total: p.total });
      if (pending.size === 0) return true;
    } catch (error) {
      if (error instanceof QueueUnavailableError) throw error;
      input.log?.(`queue: waiting for the run (${(error as Error).message}); retrying`);
    }
    await new Promise((resolve) => setTimeout(resolve, input.queue.pollMs));
  }
}

/** Which instances' jobs failed for good, and why, from the barriers' reports. */
async function failuresOf(
  barriers: Queue,
  runId: string,
  work: PlannedWork,
  instances: readonly Instance[],
): Promise<QueueDriveResult['failed']> {
  const sequence = new Map<number, string>();
  const rest = new Map<number, string>();
  const byDb = groupBy(instances, (instance) => instance.dbId);
  const batchOf = new Map([...work.batches.values()].flat().map((b) => [b.id, b.data.indices]));
  for (const db of work.dbIds) {
    const barrier = await Job.fromId<BarrierJob, BarrierResult>(barriers, jobId(runId, 'db', db));
    const dbIndices = (byDb.get(db) ?? []).map((i) => i.index);
    if (!barrier || barrier.failedReason) {
      const reason = `db barrier failed: ${barrier?.failedReason ?? 'job missing'}`;
      for (const index of dbIndices) {
        sequence.set(index, reason);
        rest.set(index, reason);
      }
      continue;
    }
    for (const [id, reason] of Object.entries(barrier.returnvalue?.failures ?? {})) {
      const [kind, index] = id.slice(runId.length + 1).split('.');
      const message = `${kind} job ${id} failed: ${reason}`;
      if (kind === 'item') sequence.set(Number(index), message);
      else if (kind === 'verify') rest.set(Number(index), message);
      else if (kind === 'synth') for (const index of batchOf.get(id) ?? []) rest.set(index, message);
      else if (kind === 'dedup') for (const index of dbIndices) rest.set(index, message);
    }
  }
  return { sequence, rest };
}
