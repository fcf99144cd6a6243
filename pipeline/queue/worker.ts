import { DelayedError, Worker, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { Cleanups } from '../../core/cleanups.js';
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
 * be taken back) and then closes what they used (job-resources.ts). A second `close`, forced
 * or not, awaits the first (BullMQ's Worker.close does the same: a force after a graceful
 * close does not cut the jobs in hand short). Every part is closed whatever the others do;
 * what failed to close is thrown at the end, together.
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
  /** Runs evaluation attempts (the `eval` group): the evaluation's, a layer above; closed with the worker. */
  evaluate?: { process: Processor; close(): Promise<void> };
}

/** How long a job handed back while a suspect runs stays out of the queue. */
const POSTPONE_MS = 500;

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

  /** Finishes the jobs in hand (or, with `force`, leaves them to be taken back) and closes everything; safe to call again. */
  close(force = false): Promise<void> {
    return (this.closing ??= this.shutdown(force));
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
    const worker = new Worker(STAGE_QUEUES[group], group === 'run' ? work : this.isolated(group, work), {
      connection,
      prefix: options.prefix ?? DEFAULT_PREFIX,
      // A scheduled run is driven by one worker at a time; everything else as configured.
      concurrency: group === 'run' ? 1 : options.concurrency,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? options.lockDurationMs ?? 30_000,
      maxStalledCount: options.maxStalls ?? 2,
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
        async () =>
          (stalls = Number(await this.resources.redis.hget(`${job.queueQualifiedName}:${job.id}`, 'stc')) || 0) > 0,
        () => {
          if (stalls > 0) this.log(`${group} job ${job.id} stalled before (${stalls}x): running it alone`);
          return work(job, token);
        },
        async () => {
          await job.moveToDelayed(Date.now() + POSTPONE_MS * (0.5 + Math.random()), token);
          throw new DelayedError();
        },
      );
    };
  }

  /**
   * The BullMQ workers first (no new jobs; the jobs in hand still need everything else), then
   * what jobs use, then the BullMQ workers' connections. Each step runs whatever failed before.
   */
  private async shutdown(force: boolean): Promise<void> {
    const cleanups = new Cleanups();
    await Promise.all(
      this.workers.map(({ group, worker }) => cleanups.run(`${group} worker`, () => worker.close(force))),
    );
    if (this.options.evaluate) await cleanups.run('evaluation', () => this.options.evaluate!.close());
    await this.resources.close(cleanups);
    await Promise.all(
      this.connections.map((connection) => cleanups.run('Redis connection', () => closeConnection(connection))),
    );
    cleanups.throwIfFailed('closing the queue worker');
  }
}

/** What a worker says when it starts: the queues it takes jobs from (by stage group, as --stages names them), and where. */
function startLine(
  groups: readonly StageGroup[],
  options: Pick<QueueWorkerOptions, 'url' | 'prefix' | 'concurrency'>,
): string {
  return `worker: ${groups.length} queue${groups.length === 1 ? '' : 's'} (${groups.join(', ')}) at ${redactedUrl(options.url)}, prefix ${options.prefix ?? DEFAULT_PREFIX}, concurrency ${options.concurrency}`;
}
