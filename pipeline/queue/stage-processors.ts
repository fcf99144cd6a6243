import { WaitingChildrenError, type Job, type Processor } from 'bullmq';
import type { Outcome } from '../../core/outcome.js';
import { runInProcess } from '../runner/in-process.js';
import type { SynthesizedItem } from '../runner/rest-flow.js';
import { INTERNAL_ERROR } from '../runner/stage-runner.js';
import { ITEM_STAGES } from '../stages/index.js';
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
import { instanceOf } from './run-contexts.js';

/**
 * What a queue worker does with each job: the same stage code as the in-process runner,
 * against the run's store in Redis. Results are written to the store before a job completes,
 * so a worker killed at any point loses nothing another worker cannot redo. A job whose
 * result is an internal error throws (BullMQ retries it); one that cannot succeed anywhere
 * (an unknown run, a different database) fails for good (UnrecoverableError).
 */

/**
 * The processor of every stage group but `run` (scheduled runs are the CLI's: it can load
 * generate()) and `eval` (the evaluation's, a layer above).
 */
export function stageProcessors(resources: JobResources): Record<Exclude<StageGroup, 'run' | 'eval'>, Processor> {
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
  const db = await resources.database(ctx, job.data.db);
  const instance = instanceOf(ctx, db, job.data.index);
  crashIfPoisoned(instance.id);
  const run = await runInProcess({
    config: ctx.spec.config,
    databases: [db.info],
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
  const database = await resources.database(ctx, job.data.db);
  const db = database.info;
  const flow = await resources.restFlow(ctx);
  const batch = job.data.indices.map((i) => instanceOf(ctx, database, i));
  batch.forEach((instance) => crashIfPoisoned(instance.id));
  const golds = await Promise.all(batch.map((instance) => flow.gold(instance, db)));
  const ready = batch.flatMap((instance, k) => {
    const gold = golds[k];
    return gold.ok ? [{ instance, gold: gold.value }] : [];
  });
  const synthesized = await flow.synthesize(ready, db);
  await flow.runner.flush();
  await resources.report(ctx, flow.runner);
  throwIfFault('rest.synthesize', [...golds, ...synthesized]);
  await resources.registry.markDone(ctx.spec.runId, 'rest.synthesize', job.id!);
  return { ok: true };
}

/**
 * A database's REST dedup, in two steps: dedup and enqueue a verify job per instance whose
 * call is not stored yet (as children of this job), then, once they are all done, complete.
 */
async function dedupJob(resources: JobResources, job: Job<DedupJob>, token?: string): Promise<BarrierResult> {
  const ctx = await resources.runs.of(job.data.runId);
  if (job.data.step !== 'await-verify') {
    const { info: db, instances } = await resources.database(ctx, job.data.db);
    const flow = await resources.restFlow(ctx);
    const synthesized = new Map(
      [...(await flow.storedSynthesis(instances, db))].flatMap(([instance, outcome]) =>
        outcome.ok ? [[instance, outcome.value] as const] : [],
      ),
    );
    const dedup = await flow.dedup(db, synthesized);
    await flow.runner.flush();
    if (!dedup.ok) throw new Error(`rest.dedup: ${dedup.message}`);
    const items: SynthesizedItem[] = [];
    for (const [instance, synthesis] of synthesized) {
      const gold = await flow.gold(instance, db);
      if (gold.ok) items.push({ instance, gold: gold.value, synthesis });
    }
    const missing = await flow.uncalled(items, dedup.value, db);
    await resources.report(ctx, flow.runner);
    const ids = missing.map(({ instance }) => jobId(ctx.spec.runId, 'verify', instance.index));
    await resources.registry.plan(ctx.spec.runId, 'rest.verify', ids);
    await resources.verifyQueue().addBulk(
      missing.map(({ instance }, k) => ({
        name: 'rest.verify',
        data: {
          runId: ctx.spec.runId,
          db: db.dbId,
          index: instance.index,
          dedupKey: dedup.value.key,
        } satisfies VerifyJob,
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
  const database = await resources.database(ctx, job.data.db);
  const instance = instanceOf(ctx, database, job.data.index);
  crashIfPoisoned(instance.id);
  const db = database.info;
  const flow = await resources.restFlow(ctx);
  const gold = await flow.gold(instance, db);
  const synthesis = (await flow.storedSynthesis([instance], db)).get(instance);
  const dedup = await flow.storedDedup(job.data.dedupKey);
  if (!gold.ok || !synthesis?.ok || !dedup)
    throw new Error(`rest.verify: the inputs of instance ${instance.id} are not in the store`);
  const item = { instance, gold: gold.value, synthesis: synthesis.value };
  const call = await flow.call(item, dedup, db, async () => (await resources.serverFor(flow, db, dedup)).url);
  await flow.runner.flush();
  await resources.report(ctx, flow.runner);
  throwIfFault('rest.verify', [call]);
  await resources.registry.markDone(ctx.spec.runId, 'rest.verify', job.id!);
  return { ok: true };
}

/** A job whose work ended in a fault of the run (an internal error: nothing cached) fails, so BullMQ retries it. */
function throwIfFault(stage: string, outcomes: readonly Outcome<unknown>[]): void {
  const fault = outcomes.find((o) => !o.ok && o.category === INTERNAL_ERROR);
  if (fault && !fault.ok) throw new Error(`${stage}: ${fault.message}`);
}

/**
 * A database's barrier: all its jobs are done; it gathers which of them failed for good, and
 * with the chain formulation composes the database's chains (chain.compose waits for all of
 * REST's results, as this job does).
 */
async function barrierJob(resources: JobResources, job: Job<BarrierJob>): Promise<BarrierResult> {
  const ctx = await resources.runs.of(job.data.runId);
  if (ctx.spec.config.formulations.includes('chain')) await resources.composeChains(ctx, job.data.db);
  const failures = failureIds(await job.getIgnoredChildrenFailures());
  for (const value of Object.values(await job.getChildrenValues<Partial<BarrierResult>>()))
    Object.assign(failures, value?.failures ?? {});
  await resources.registry.markDone(job.data.runId, 'emit', job.id!);
  return { failures } satisfies BarrierResult;
}

/** Ignored child failures by job id (BullMQ keys them `<prefix>:<queue>:<id>`). */
function failureIds(failures: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(failures).map(([key, reason]) => [key.slice(key.lastIndexOf(':') + 1), reason]),
  );
}
