import { WaitingChildrenError, type Job, type Processor } from 'bullmq';
import { runInProcess } from '../runner/in-process.js';
import { restSynthesisKey } from '../runner/rest-keys.js';
import {
  dedupFor,
  finalCheck,
  finalKeyOf,
  goldOf,
  servedEndpoint,
  storedDedup,
  synthesizeBatch,
  type FinalRecord,
} from '../runner/rest-phases.js';
import { retryPolicyOf } from '../runner/retry.js';
import { INTERNAL_ERROR, StageRunner, timedInto } from '../runner/stage-runner.js';
import { ITEM_STAGES } from '../stages/index.js';
import type { SynthesisRecord } from '../stages/rest-synthesize.js';
import { crashIfPoisoned } from './faults.js';
import type { JobResources } from './job-resources.js';
import {
  jobId,
  type BarrierJob,
  type BarrierResult,
  type DedupJob,
  type ItemJob,
  type StageGroup,
  type SynthesisJob,
  type VerifyJob,
} from './jobs.js';
import { childJobOptions } from './options.js';
import { instanceOf, type RunContext } from './run-contexts.js';

/**
 * What a queue worker does with each job: the same stage code as the in-process runner,
 * against the run's store in Redis. Results are written to the store before a job completes,
 * so a worker killed at any point loses nothing another worker cannot redo. A job whose
 * result is an internal error throws (BullMQ retries it); one that cannot succeed anywhere
 * (an unknown run, a different database) fails for good (UnrecoverableError).
 */

/** The processor of every stage group but `run` (scheduled runs are the CLI's: it can load generate()). */
export function stageProcessors(resources: JobResources): Record<Exclude<StageGroup, 'run'>, Processor> {
  return {
    item: (job: Job<ItemJob>) => itemJob(resources, job),
    'rest.synthesize': (job: Job<SynthesisJob>) => synthesisJob(resources, job),
    'rest.dedup': (job: Job<DedupJob>, token?: string) => dedupJob(resources, job, token),
    'rest.verify': (job: Job<VerifyJob>) => verifyJob(resources, job),
    emit: (job: Job<BarrierJob>) => barrierJob(resources, job),
  };
}

/** One instance through the SLOT/SEL stages. */
async function itemJob(resources: JobResources, job: Job<ItemJob>): Promise<{ ok: true }> {
  const ctx = await resources.runs.of(job.data.runId);
  const instance = instanceOf(ctx, job.data.index);
  crashIfPoisoned(instance.id);
  const db = await resources.databases.of(ctx, instance.dbId);
  const run = await runInProcess({
    config: ctx.spec.config,
    databases: [db],
    instances: [instance],
    stages: ITEM_STAGES,
    executor: resources.sql(),
    store: ctx.store,
    codeFingerprint: ctx.spec.code,
  });
  const fault = Object.values(run.items[0].results).find((r) => r && !r.ok && r.category === INTERNAL_ERROR);
  await resources.report(ctx, run);
  if (fault && !fault.ok) throw new Error(`${fault.stage}: ${fault.message}`);
  await resources.registry.markDone(ctx.spec.runId, 'item', job.id!);
  return { ok: true };
}

/** One batch of a database's REST synthesis. */
async function synthesisJob(resources: JobResources, job: Job<SynthesisJob>): Promise<{ ok: true }> {
  const ctx = await resources.runs.of(job.data.runId);
  const db = await resources.databases.of(ctx, job.data.db);
  const stageRunner = stageRunnerOf(ctx);
  const rest = await resources.restContext(ctx, stageRunner);
  const batch = job.data.indices.map((i) => instanceOf(ctx, i));
  batch.forEach((instance) => crashIfPoisoned(instance.id));
  const golds = await Promise.all(batch.map((instance) => goldOf(instance, db, rest)));
  const fault = golds.find((g) => !g.ok && g.category === INTERNAL_ERROR);
  const ready = batch.flatMap((instance, k) => (golds[k].ok ? [{ instance, gold: golds[k].value }] : []));
  const records = await synthesizeBatch(
    ready,
    ready.map(({ instance }) => restSynthesisKey(instance, db, rest)),
    db,
    rest,
  );
  await ctx.store.flush();
  await resources.report(ctx, stageRunner);
  const failed = fault ?? records.find((r) => !r.ok && r.category === INTERNAL_ERROR);
  if (failed && !failed.ok) throw new Error(`rest.synthesize: ${failed.message}`);
  await resources.registry.markDone(ctx.spec.runId, 'rest.synthesize', job.id!);
  return { ok: true };
}

/**
 * A database's REST dedup, in two steps: dedup and enqueue a verify job per endpoint not
 * verified yet (as children of this job), then, once they are all done, complete.
 */
async function dedupJob(resources: JobResources, job: Job<DedupJob>, token?: string): Promise<BarrierResult> {
  const ctx = await resources.runs.of(job.data.runId);
  if (job.data.step !== 'await-verify') {
    const db = await resources.databases.of(ctx, job.data.db);
    const rest = await resources.restContext(ctx, stageRunnerOf(ctx));
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
    const finals = entries.map((e) => ({
      instance: byId.get(e.instanceId)!,
      key: finalKeyOf(servedEndpoint(dedup, e.instanceId), e.synthesisKey, db, rest),
    }));
    const cached = await ctx.store.getMany<FinalRecord>(finals.map((f) => f.key));
    const missing = finals.filter((f) => !cached.has(f.key));
    const ids = missing.map(({ instance }) => jobId(ctx.spec.runId, 'verify', instance.index));
    await resources.registry.plan(ctx.spec.runId, 'rest.verify', ids);
    await resources.verifyQueue().addBulk(
      missing.map(({ instance }, k) => ({
        name: 'rest.verify',
        data: { runId: ctx.spec.runId, index: instance.index, dedupKey: key } satisfies VerifyJob,
        opts: {
          ...childJobOptions(ctx.spec.config),
          jobId: ids[k],
          parent: { id: job.id!, queue: job.queueQualifiedName },
        },
      })),
    );
    await job.updateData({ ...job.data, step: 'await-verify' });
  }
  if (await job.moveToWaitingChildren(token!)) throw new WaitingChildrenError();
  await resources.registry.markDone(ctx.spec.runId, 'rest.dedup', job.id!);
  return { failures: failureIds(await job.getIgnoredChildrenFailures()) } satisfies BarrierResult;
}

/** One instance's REST call, over HTTP to this worker's server of the deduped endpoints, verified. */
async function verifyJob(resources: JobResources, job: Job<VerifyJob>): Promise<{ ok: true }> {
  const ctx = await resources.runs.of(job.data.runId);
  const instance = instanceOf(ctx, job.data.index);
  crashIfPoisoned(instance.id);
  const db = await resources.databases.of(ctx, instance.dbId);
  const stageRunner = stageRunnerOf(ctx);
  const rest = await resources.restContext(ctx, stageRunner);
  const gold = await goldOf(instance, db, rest);
  const synthesisKey = restSynthesisKey(instance, db, rest);
  const record = (await ctx.store.getMany<SynthesisRecord>([synthesisKey])).get(synthesisKey);
  const dedup = await storedDedup(job.data.dedupKey, ctx.store);
  if (!gold.ok || !record?.ok || !dedup)
    throw new Error(`rest.verify: the inputs of instance ${instance.id} are not in the store`);
  const endpoint = servedEndpoint(dedup, instance.id);
  const key = finalKeyOf(endpoint, synthesisKey, db, rest);
  const serverUrl = async () => (await resources.serverFor(job.data.dedupKey, db, dedup, ctx)).url;
  const final = await finalCheck(
    { instance, gold: gold.value },
    endpoint,
    key,
    serverUrl,
    db,
    rest,
    timedInto(stageRunner.metrics),
  );
  await ctx.store.flush();
  await resources.report(ctx, stageRunner);
  if (!final.ok && final.category === INTERNAL_ERROR) throw new Error(`rest.verify: ${final.message}`);
  await resources.registry.markDone(ctx.spec.runId, 'rest.verify', job.id!);
  return { ok: true };
}

/** A database's barrier: all its jobs are done; it gathers which of them failed for good. */
async function barrierJob(resources: JobResources, job: Job<BarrierJob>): Promise<BarrierResult> {
  const failures = failureIds(await job.getIgnoredChildrenFailures());
  for (const value of Object.values(await job.getChildrenValues<Partial<BarrierResult>>()))
    Object.assign(failures, value?.failures ?? {});
  await resources.registry.markDone(job.data.runId, 'emit', job.id!);
  return { failures } satisfies BarrierResult;
}

function stageRunnerOf({ spec, store }: RunContext): StageRunner {
  return new StageRunner(store, retryPolicyOf(spec.config), undefined, spec.code);
}

/** Ignored child failures by job id (BullMQ keys them `<prefix>:<queue>:<id>`). */
function failureIds(failures: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(failures).map(([key, reason]) => [key.slice(key.lastIndexOf(':') + 1), reason]),
  );
}
