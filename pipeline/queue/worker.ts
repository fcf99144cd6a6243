import { DelayedError, UnrecoverableError, Worker, type Job, type Processor } from 'bullmq';
import { setMaxListeners } from 'node:events';
import type { Redis } from 'ioredis';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { settlesUnlessAborted } from '../../core/abort.js';
import { Cleanups } from '../../core/cleanups.js';
import { lazy } from '../../core/lazy.js';
import { closeConnection, ConnectionWatch, redactedUrl, redisConnection } from './connection.js';
import { JobResources } from './job-resources.js';
import { DEFAULT_PREFIX, STAGE_GROUPS, STAGE_QUEUES, type StageGroup } from './jobs.js';
import { SuspectIsolation } from './isolation.js';
import { stageProcessors } from './stage-processors.js';

/**
 * A queue worker: one BullMQ Worker per stage group, running the same stage code as the
 * in-process runner against the shared Redis store (stage-processors.ts), so a worker needs
 * only Redis and the databases (at the paths the run names; their content is checked against
 * the run's fingerprints before the first job touches them).
 *
 * Its lifecycle is BullMQ's Worker's: `QueueWorker.start` resolves once every queue is
 * listened on; `close` stops taking jobs, finishes those in hand (or, forced, leaves them to
 * be taken back) and then closes what they used (job-resources.ts). A second `close` returns
 * the first's promise; a forced one cuts a graceful close in progress short: the jobs in hand
 * are let go at once, so that a shutdown can be bounded whatever they wait for. Redis is
 * still waited for where it answers (QUIT), not where it is known to be out of reach; a Redis
 * that stopped answering is the caller's to bound (the CLI's `worker` exits anyway). Every
 * part is closed whatever the others do; what failed to close is thrown at the end, together.
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
   * A job that killed its worker this many times while running alone (isolation.ts) fails
   * the next time it is taken back: a poison job. Crashes in company do not count: they may
   * be a neighbour's. Default 2.
   */
  maxStalls?: number;
  /** Tests pass a scripted chat model. */
  chatModel?: BaseChatModel;
  log?: (line: string) => void;
  /** Tells of Redis outages (default: one of this worker's own, on `log`); a driver passes its own, so a process tells once. */
  watch?: ConnectionWatch;
  /** Drives scheduled runs (the `run` group); set by the CLI, which can load generate(). */
  driveRun?: Processor;
  /** Runs evaluation attempts (the `eval` group): the evaluation's, a layer above; closed with the worker. */
  evaluate?: { process: Processor; close(): Promise<void> };
}

/** How long a job handed back while a suspect runs stays out of the queue. */
const POSTPONE_MS = 500;

/**
 * BullMQ counts every stall, a neighbour's crash as much as the job's own, and fails a job
 * past its limit: with several poison jobs about, an innocent job would fail for having been
 * near each. The limit that judges a job is ours (`maxStalls`, crashes while alone); BullMQ's
 * stays as a backstop for a job that kills its worker before it reaches the processor.
 */
const STALL_BACKSTOP = 50;

/** A field of the job's own hash (it goes with the job): its runs alone that never ended. */
const UNENDED_ALONE_FIELD = 'nl2apiUnendedAlone';

export class QueueWorker {
  private readonly log: (line: string) => void;
  private readonly watch: ConnectionWatch;
  private readonly resources: JobResources;
  private readonly workers: { group: StageGroup; worker: Worker }[] = [];
  /** The BullMQ workers' connections: each Worker blocks on one of its own. */
  private readonly connections: Redis[] = [];
  private readonly isolation = new SuspectIsolation({
    pause: async () => void (await Promise.all(this.workers.map(({ worker }) => worker.pause(true)))),
    // resume() never rejects: BullMQ reports its failures as 'error' events.
    resume: () => this.workers.forEach(({ worker }) => void worker.resume()),
  });
  private closing?: Promise<void>;
  /** Aborted by a forced close: the jobs in hand are no longer waited for (each listens while in hand). */
  private readonly forced = new AbortController();

  /** A worker listening on the queues of its stage groups; one that fails to start is closed (forced). */
  static async start(options: QueueWorkerOptions): Promise<QueueWorker> {
    const worker = new QueueWorker(options);
    try {
      await worker.listen();
    } catch (error) {
      await worker.close(true).catch((closing: Error) => worker.log(`worker: ${closing.message}`));
      throw error;
    }
    return worker;
  }

  private constructor(private readonly options: QueueWorkerOptions) {
    // One listener per job in hand, removed when it ends: as many as the jobs in flight, no leak.
    setMaxListeners(0, this.forced.signal);
    this.log = options.log ?? (() => {});
    this.watch = options.watch ?? new ConnectionWatch(options.url, this.log);
    this.resources = new JobResources({
      url: options.url,
      prefix: options.prefix ?? DEFAULT_PREFIX,
      watch: this.watch,
      sqlWorkers: options.sqlWorkers ?? 2,
      chatModel: options.chatModel,
      log: this.log,
    });
  }

  /**
   * Finishes the jobs in hand (or, with `force`, leaves them to be taken back) and closes
   * everything; safe to call again, and forced during a graceful close to cut it short.
   */
  close(force = false): Promise<void> {
    if (force) this.forced.abort();
    return (this.closing ??= this.shutdown());
  }

  /** One BullMQ Worker per stage group asked for that this worker can work on; resolves once each is listening. */
  private async listen(): Promise<void> {
    const processors: Partial<Record<StageGroup, Processor>> = {
      ...stageProcessors(this.resources),
      run: this.options.driveRun,
      eval: this.options.evaluate?.process,
    };
    const groups = [...new Set(this.options.groups ?? STAGE_GROUPS)].filter((group) => processors[group]);
    for (const group of groups) this.open(group, processors[group]!);
    await Promise.all(this.workers.map(({ worker }) => worker.waitUntilReady()));
    this.log(startLine(groups, this.options));
  }

  private open(group: StageGroup, work: Processor): void {
    const { options } = this;
    const connection = redisConnection(options.url, {}, this.watch);
    this.connections.push(connection);
    // The run driver only waits: it is never isolated (it would hold back every stage job).
    const processor = this.givenBackIfForced(group, group === 'run' ? work : this.isolated(group, work));
    const worker = new Worker(STAGE_QUEUES[group], processor, {
      connection,
      prefix: options.prefix ?? DEFAULT_PREFIX,
      // A scheduled run is driven by one worker at a time; everything else as configured.
      concurrency: group === 'run' ? 1 : options.concurrency,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? options.lockDurationMs ?? 30_000,
      maxStalledCount: STALL_BACKSTOP,
    });
    worker.on('failed', (job, error) => {
      // Failed for good (attempts used up, unrecoverable, or stalled too often), not merely retried.
      // A scheduled `run` job belongs to no run yet: nothing to mark.
      const runId = (job?.data as { runId?: string } | undefined)?.runId;
      const markIfFinal = async () => {
        if (job && runId && (await job.getState()) === 'failed')
          await this.resources.registry.markFailed(runId, group, job.id!);
      };
      void markIfFinal().catch(() => {});
      this.log(`${group} job ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`);
    });
    this.watch.errorsOf(worker, `${group} worker`);
    this.workers.push({ group, worker });
  }

  /** `work` under suspect isolation (isolation.ts): a job that stalled before runs alone. */
  private isolated(group: StageGroup, work: Processor): Processor {
    return async (job, token): Promise<unknown> => {
      let stalls = 0;
      return this.isolation.run(
        // BullMQ counts stalls in the job's hash (`stc`) but does not hand the count to the processor.
        async () => (stalls = Number(await this.resources.redis.hget(jobKey(job), 'stc')) || 0) > 0,
        () => (stalls > 0 ? this.runAlone(group, job, token, stalls, work) : work(job, token)),
        async () => {
          await job.moveToDelayed(Date.now() + POSTPONE_MS * (0.5 + Math.random()), token);
          throw new DelayedError();
        },
      );
    };
  }

  /**
   * A suspect's run alone, counted in the job's hash until it ends: a count left behind is a
   * crash that no neighbour caused. Past `maxStalls` of them the job fails for good. A run
   * let go by our own forced shutdown is no verdict on the job: it is uncounted at once.
   */
  private async runAlone(
    group: StageGroup,
    job: Job,
    token: string | undefined,
    stalls: number,
    work: Processor,
  ): Promise<unknown> {
    const { redis } = this.resources;
    const crashes = Number(await redis.hget(jobKey(job), UNENDED_ALONE_FIELD)) || 0;
    const limit = this.options.maxStalls ?? 2;
    if (crashes >= limit)
      throw new UnrecoverableError(`poison job: it killed its worker ${crashes} times running alone`);
    this.log(`${group} job ${job.id} stalled before (${stalls}x): running it alone`);
    await redis.hincrby(jobKey(job), UNENDED_ALONE_FIELD, 1);
    // Once, whichever comes first. A count left behind by a failed write only makes the job
    // look guiltier: told, not thrown.
    const uncount = lazy(() =>
      redis
        .hincrby(jobKey(job), UNENDED_ALONE_FIELD, -1)
        .catch((error: Error) => this.log(`${group} job ${job.id}: its run alone left counted: ${error.message}`)),
    );
    const onForced = () => void uncount();
    this.forced.signal.addEventListener('abort', onForced, { once: true });
    try {
      return await work(job, token);
    } finally {
      this.forced.signal.removeEventListener('abort', onForced);
      await uncount();
    }
  }

  /**
   * A job in hand when the worker is forced is let go at once: BullMQ's close no longer waits
   * for it, and whatever it does next (fail as its SQL pool closes under it) is not its
   * outcome. It must not use up an attempt, nor become a `job_failed` verdict: a DelayedError
   * makes BullMQ record nothing, and the job, still active in Redis, is taken back once its
   * lock expires, as a forced BullMQ close leaves the jobs in hand.
   */
  private givenBackIfForced(group: StageGroup, work: Processor): Processor {
    return async (job, token, signal): Promise<unknown> => {
      const working = work(job, token, signal);
      try {
        if (await settlesUnlessAborted(working, this.forced.signal)) return await working;
      } catch (error) {
        if (!this.forced.signal.aborted) throw error;
      }
      this.log(`${group} job ${job.id} cut short by the shutdown: left to be taken back once its lock expires`);
      throw new DelayedError();
    };
  }

  /**
   * The BullMQ workers first (no new jobs; the jobs in hand still need everything else), then
   * what jobs use, then the BullMQ workers' connections. Each step runs whatever failed before.
   */
  private async shutdown(): Promise<void> {
    const cleanups = new Cleanups();
    await Promise.all(
      this.workers.map(({ group, worker }) => cleanups.run(`${group} worker`, () => this.stop(worker))),
    );
    if (this.options.evaluate) await cleanups.run('evaluation', () => this.options.evaluate!.close());
    await this.resources.close(cleanups);
    await Promise.all(
      this.connections.map((connection) => cleanups.run('Redis connection', () => closeConnection(connection))),
    );
    cleanups.throwIfFailed('closing the queue worker');
  }

  /**
   * A BullMQ worker closed, gracefully until the worker is forced. BullMQ cannot force a
   * graceful close in progress (a second close awaits the first), but once the jobs in hand
   * are let go (givenBackIfForced) it goes on to quit its connections: waited for, unless
   * Redis is out of reach (the QUIT would wait for it to come back; BullMQ's own connection is
   * then left retrying, ours are dropped next: closeConnection, at once when not ready).
   */
  private async stop(worker: Worker): Promise<void> {
    if (this.forced.signal.aborted) return worker.close(true);
    const closed = worker.close();
    if ((await settlesUnlessAborted(closed, this.forced.signal)) || this.watch.unreachable) return;
    await closed;
  }
}

/** What a worker says when it starts: the queues it takes jobs from (by stage group, as --stages names them), and where. */
function startLine(
  groups: readonly StageGroup[],
  options: Pick<QueueWorkerOptions, 'url' | 'prefix' | 'concurrency'>,
): string {
  return `worker: ${groups.length} queue${groups.length === 1 ? '' : 's'} (${groups.join(', ')}) at ${redactedUrl(options.url)}, prefix ${options.prefix ?? DEFAULT_PREFIX}, concurrency ${options.concurrency}`;
}

/** The Redis key of a job's hash. */
function jobKey(job: Job): string {
  return `${job.queueQualifiedName}:${job.id}`;
}
