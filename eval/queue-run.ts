import { Queue, UnrecoverableError, type Job, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import { Cleanups } from '../core/cleanups.js';
import { LruMap } from '../core/lru.js';
import { RedisLlmCache } from '../generators/llm/redis-cache.js';
import { sumUsage, unreportedUsage, type UsageTotals } from '../generators/llm/usage.js';
import { codeFingerprint, CODE_DIRS } from '../pipeline/code-fingerprint.js';
import { closeConnection, commandConnection, ConnectionWatch, redisConnection } from '../pipeline/queue/connection.js';
import { jobId, newRunId, STAGE_QUEUES, storePrefix, type EvalJob } from '../pipeline/queue/jobs.js';
import { checkRedis } from '../pipeline/queue/redis-check.js';
import { RunRegistry } from '../pipeline/queue/registry.js';
import { sharedRateLimiter } from '../pipeline/queue/shared-llm.js';
import { QueueWorker } from '../pipeline/queue/worker.js';
import { INTERNAL_ERROR } from '../pipeline/runner/stage-runner.js';
import { RedisStore } from '../pipeline/store/redis-store.js';
import { finish, type EvalOptions, type EvalRun } from './eval-run.js';
import { EVAL_STAGE, openEvalSession, type EvalSession, type EvalSettings, type SessionStores } from './session.js';
import type { ResultLine } from './summary.js';

/**
 * An evaluation on the queue backend (`nl2api eval --queue <redis>`): the driver registers the
 * run (its settings, for workers), enqueues one `eval` job per attempt the shared store lacks,
 * waits while any number of `nl2api worker`s (and, unless told otherwise, its own) run them,
 * then assembles every attempt from the store with the same session code, so the report is
 * the one an in-process run writes. Attempts, replies and the rate limit live in Redis: a
 * reply one worker paid for is free for all, and the limit holds across machines.
 */

/** What a worker reads to rebuild an evaluation run: its settings and the build that planned it. */
export interface EvalRunSpec {
  runId: string;
  kind: 'eval';
  settings: EvalSettings;
  /** The driver's code fingerprint: a worker of another build would compute other keys. */
  code: string;
}

const EVAL_CODE = () => codeFingerprint([...CODE_DIRS, 'eval']);

function sharedStores(redis: Redis, prefix: string, run: { runId: string; cache: boolean }): SessionStores {
  return {
    store: new RedisStore(redis, { prefix: storePrefix(prefix, run), read: run.cache }),
    replyCache: new RedisLlmCache(redis, { prefix }),
    rateLimiter: (llm) => sharedRateLimiter(redis, prefix, llm),
  };
}

export async function runEvalOnQueue(options: EvalOptions & { report: string }): Promise<EvalRun> {
  const queueConfig = options.config.queue!;
  const { url, prefix } = queueConfig;
  const log = options.log ?? (() => {});
  await checkRedis(url);
  const watch = new ConnectionWatch(url, log);
  const redis = commandConnection(url, watch);
  const runId = queueConfig.runId ?? newRunId();
  const { signal, onProgress, extraModels } = options;
  const settings = settingsOf(options);
  const registry = new RunRegistry(redis, prefix);
  const queueConnection = redisConnection(url, {}, watch);
  const queue = new Queue<EvalJob>(STAGE_QUEUES.eval, { connection: queueConnection, prefix });
  watch.errorsOf(queue, 'queue: eval');
  let session: EvalSession | undefined;
  let workers: QueueWorker | undefined;
  try {
    session = await openEvalSession(
      settings,
      sharedStores(redis, prefix, { runId, cache: settings.config.cache }),
      extraModels,
    );
    for (const line of session.limits) log(`requests to ${line} (shared by the run's workers)`);
    const spec: EvalRunSpec = { runId, kind: 'eval', settings, code: EVAL_CODE() };
    await registry.create(spec, {
      runId,
      dataset: session.dataset.datasetName,
      source: settings.config.source ?? '',
      out: options.report,
    });
    // Only what the shared store lacks: an attempt computed by any earlier run is not asked again.
    const planner = session.runner(false);
    const keys = session.jobs.map((_, i) => session!.keyOf(i, planner));
    const stored = await planner.lookupKeys(EVAL_STAGE, keys);
    const missing = session.jobs.flatMap((_, i) => (stored[i] ? [] : [i]));
    const ids = missing.map((i) => jobId(runId, 'eval', i));
    await registry.plan(runId, 'eval', ids);
    log(
      `queue eval ${runId} (resume with --run ${runId}): ${missing.length} of ${session.jobs.length} attempts to run`,
    );
    for (let i = 0; i < missing.length; i += 500) {
      await queue.addBulk(
        missing.slice(i, i + 500).map((index) => ({
          name: 'eval',
          data: { runId, index },
          opts: {
            jobId: jobId(runId, 'eval', index),
            attempts: queueConfig.attempts,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: { age: 86_400 },
            removeOnFail: { age: 7 * 86_400 },
          },
        })),
      );
    }
    if (queueConfig.localWorkers) {
      workers = await QueueWorker.start({
        url,
        prefix,
        concurrency: queueConfig.concurrency,
        groups: ['eval'],
        sqlWorkers: settings.config.sqlWorkers,
        lockDurationMs: queueConfig.lockDurationMs,
        log,
        watch,
        evaluate: evalWorkerProcessor({ url, prefix, log, extraModels }),
      });
    }
    const aborted = await waitForAttempts(registry, runId, ids.length, queueConfig.pollMs, signal, (done) =>
      onProgress?.(session!.jobs.length - ids.length + done, session!.jobs.length),
    );
    if (aborted) {
      await registry.finish(runId, { state: 'aborted' });
      return await finish(session, [undefined], options.report);
    }
    const assembler = session.runner(false);
    const lines: ResultLine[] = [];
    for (let i = 0; i < session.jobs.length; i++) lines.push(await session.attempt(i, assembler));
    const usage = (await registry.metrics(runId)).llm;
    const run = await finish(session, lines, options.report);
    await registry.finish(runId, { state: 'completed' });
    return { ...run, usage: { ...run.usage, total: sumUsage(usage), byModel: usage } };
  } catch (error) {
    await registry.finish(runId, { state: 'failed', error: (error as Error).message }).catch(() => {});
    throw error;
  } finally {
    const cleanups = new Cleanups();
    if (workers) await cleanups.run('the local workers', () => workers!.close());
    await cleanups.run('the eval queue', () => queue.close());
    if (session) await cleanups.run('the evaluation', () => session!.close());
    await cleanups.run('Redis', () => closeConnection(queueConnection));
    await cleanups.run('Redis', () => closeConnection(redis));
    cleanups.throwIfFailed('closing the queue evaluation');
  }
}

/** Until every planned job is done or failed for good (true: interrupted first). */
async function waitForAttempts(
  registry: RunRegistry,
  runId: string,
  planned: number,
  pollMs: number,
  signal: AbortSignal | undefined,
  onProgress: (done: number) => void,
): Promise<boolean> {
  for (;;) {
    const progress = (await registry.progress(runId)).find((p) => p.group === 'eval');
    const settled = (progress?.done ?? 0) + (progress?.failed ?? 0);
    onProgress(settled);
    if (settled >= planned) return false;
    if (signal?.aborted) return true;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

interface WorkerSession {
  session: EvalSession;
  runner: ReturnType<EvalSession['runner']>;
  reported: Record<string, UsageTotals>;
}

/**
 * A queue worker's processor of `eval` jobs: one session per run (the latest few kept), opened
 * from the run's registered settings over the shared stores. An attempt's outcome is in the
 * store before its job completes; a fault of the run throws (BullMQ retries the job; the
 * worker marks it failed once its attempts are used up).
 */
export function evalWorkerProcessor(options: {
  url: string;
  prefix: string;
  log: (line: string) => void;
  /** Tests: models beyond the registry's. */
  extraModels?: EvalOptions['extraModels'];
}): { process: Processor; close(): Promise<void> } {
  const watch = new ConnectionWatch(options.url, options.log);
  const redis = commandConnection(options.url, watch);
  const registry = new RunRegistry(redis, options.prefix);
  const sessions = new LruMap<string, Promise<WorkerSession>>(4, undefined, (evicted) => {
    void evicted.then(({ session }) => session.close()).catch(() => {});
  });
  const sessionOf = (runId: string): Promise<WorkerSession> => {
    let known = sessions.get(runId);
    if (!known) {
      known = (async () => {
        const spec = await registry.specOf<EvalRunSpec>(runId);
        if (!spec || spec.kind !== 'eval') throw new UnrecoverableError(`no evaluation run ${runId} in Redis`);
        if (spec.code !== EVAL_CODE())
          throw new UnrecoverableError(`evaluation run ${runId} was planned by another build of nl2api`);
        const stores = sharedStores(redis, options.prefix, { runId, cache: spec.settings.config.cache });
        const session = await openEvalSession(spec.settings, stores, options.extraModels);
        return { session, runner: session.runner(), reported: {} };
      })();
      known.catch(() => sessions.delete(runId));
      sessions.set(runId, known);
    }
    return known;
  };
  return {
    process: async (job: Job<EvalJob>) => {
      const { runId, index } = job.data;
      const worker = await sessionOf(runId);
      const line = await worker.session.attempt(index, worker.runner);
      await worker.runner.flush();
      await registry.addMetrics(
        runId,
        new Map(),
        unreportedUsage(worker.session.usage.snapshot().byModel, worker.reported),
      );
      if (line.failure?.category === INTERNAL_ERROR) throw new Error(line.failure.message);
      await registry.markDone(runId, 'eval', job.id!);
      return { ok: true };
    },
    close: async () => {
      const cleanups = new Cleanups();
      for (const known of sessions.values())
        await cleanups.run('an evaluation session', async () => (await known.catch(() => undefined))?.session.close());
      await cleanups.run('Redis', () => closeConnection(redis));
      cleanups.throwIfFailed('closing the evaluation worker');
    },
  };
}

/** The plain-JSON part of the options: what the run's workers read back. */
function settingsOf(options: EvalOptions): EvalSettings {
  const settings: Partial<EvalOptions> = { ...options };
  for (const local of ['report', 'cacheDir', 'signal', 'onProgress', 'extraModels', 'log'] as const)
    delete settings[local];
  return settings as EvalSettings;
}
