import { Command, InvalidArgumentError } from 'commander';
import { settlesUnlessAborted } from '../core/abort.js';
import { FORMULATIONS } from '../core/model.js';
import { commaList, positiveInt } from './args.js';
import { EXIT_INTERRUPTED } from './exit-codes.js';
import { formatDuration, formatRate } from './pace.js';
import { textTable } from './table.js';
import type { Config } from '../config/schema.js';
import { DEFAULT_PREFIX, STAGE_GROUPS, STAGE_QUEUES, type StageGroup } from '../pipeline/queue/jobs.js';

/**
 * The queue backend's commands: `worker`, `status`, `runs`, `schedule`. BullMQ and ioredis
 * load only when one of them runs. Each checks its Redis first (redis-check.ts): an
 * unreachable or evicting Redis is one line and exit 1 (a QueueUnavailableError: a UserFacingError).
 * The key prefix is `--queue-prefix` everywhere, as in `generate`.
 */

interface QueueFlags {
  queue: string;
  queuePrefix: string;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

export function addQueueCommands(
  program: Command,
  generateOptions: (command: Command) => Command,
  configOf: (flags: Record<string, unknown>, command: Command) => Promise<Config>,
): void {
  const withQueue = (command: Command) =>
    command
      .option('--queue <url>', 'Redis URL of the queue backend', process.env.REDIS_URL ?? DEFAULT_URL)
      .option('--queue-prefix <prefix>', "key prefix in Redis (the same as the run's)", DEFAULT_PREFIX);

  withQueue(
    program
      .command('worker')
      .description('work on queued runs: any number of workers, on any machine that reaches Redis and the databases'),
  )
    .option('--concurrency <n>', 'jobs in flight per stage group', positiveInt, 4)
    .option('--stages <list>', `stage groups to work on (default all): ${STAGE_GROUPS.join(',')}`, stageList)
    .option('--sql-workers <n>', 'SQL worker processes', positiveInt, 2)
    .option('--lock-duration <ms>', 'a job whose worker died is taken back after this long', positiveInt, 30_000)
    .option(
      '--max-stalls <n>',
      'a job that killed its worker this many times while running alone fails (a poison job)',
      positiveInt,
      2,
    )
    // 30 s: as long as a job's SQL statement may run (executeTimeoutMs), so a job in hand is rarely cut short.
    .option(
      '--grace <s>',
      'on SIGTERM, finish the jobs in hand for at most this long, then return them (exit 130)',
      positiveInt,
      30,
    )
    .action(
      async (
        flags: QueueFlags & {
          concurrency: number;
          stages?: StageGroup[];
          sqlWorkers: number;
          lockDuration: number;
          maxStalls: number;
          grace: number;
        },
      ) => {
        const { checkRedis } = await import('../pipeline/queue/redis-check.js');
        await checkRedis(flags.queue);
        const { QueueWorker } = await import('../pipeline/queue/worker.js');
        const { scheduledRunProcessor } = await import('../pipeline/queue/scheduled-run.js');
        const { ConnectionWatch, redactedUrl } = await import('../pipeline/queue/connection.js');
        const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
        // The worker's own, so that its shutdown can tell whether Redis is out of reach.
        const watch = new ConnectionWatch(flags.queue, log);
        const workers = await QueueWorker.start({
          url: flags.queue,
          watch,
          prefix: flags.queuePrefix,
          concurrency: flags.concurrency,
          groups: flags.stages,
          sqlWorkers: flags.sqlWorkers,
          lockDurationMs: flags.lockDuration,
          maxStalls: flags.maxStalls,
          log,
          driveRun: scheduledRunProcessor({
            url: flags.queue,
            prefix: flags.queuePrefix,
            log,
            // The evaluation is a layer above the pipeline: loaded only when a run names models.
            evaluate: async (run) => (await import('../eval/nightly.js')).evaluateOutput({ ...run, log }),
          }),
          evaluate: (await import('../eval/queue-run.js')).evalWorkerProcessor({
            url: flags.queue,
            prefix: flags.queuePrefix,
            log,
          }),
        });
        // Load what the first jobs will need (the LLM clients, the REST server) while the worker waits for them.
        void import('../pipeline/rest-llm-services.js').then(() => import('../runtime/rest/server.js')).catch(() => {});
        const signal = await new Promise<NodeJS.Signals>((resolve) => {
          process.once('SIGINT', () => resolve('SIGINT'));
          process.once('SIGTERM', () => resolve('SIGTERM'));
        });
        log(`worker: ${signal}: finishing the jobs in hand (at most ${flags.grace} s)`);
        if (await settlesWithin(workers.close(), flags.grace * 1000)) {
          log('worker: stopped');
          return;
        }
        const unreachable = watch.unreachable ? ` and Redis at ${redactedUrl(flags.queue)} unreachable` : '';
        log(
          `worker: grace period over (${flags.grace} s)${unreachable}: closing forced; the jobs in hand go back to the queue once their lock expires`,
        );
        const closed = await settlesWithin(workers.close(true), FORCED_CLOSE_MS);
        log(
          closed
            ? `worker: stopped without finishing the jobs in hand (exit ${EXIT_INTERRUPTED})`
            : `worker: the forced close did not end within ${FORCED_CLOSE_MS / 1000} s (Redis not answering?): exiting anyway (exit ${EXIT_INTERRUPTED})`,
        );
        // Now, not when the event loop empties: the abandoned graceful close may hold a connection retrying Redis.
        process.exit(EXIT_INTERRUPTED);
      },
    );

  withQueue(
    program
      .command('status')
      .description('progress of a queued run per stage: planned, done, failed, waiting/active, rate, ETA'),
  )
    .option('--run <id>', 'the run (default: the newest)')
    .option('--failed', "also list the run's failed jobs (kept in Redis for a month) with their reasons")
    .action(async (flags: QueueFlags & { run?: string; failed?: boolean }) => {
      process.exitCode = await withRegistry(flags, async (registry, queues) => {
        const runId = flags.run ?? (await registry.list(1))[0]?.runId;
        const record = runId && (await registry.get(runId));
        if (!record) {
          process.stderr.write(flags.run ? `nl2api: no run ${flags.run}\n` : 'nl2api: no runs yet\n');
          return 1;
        }
        const elapsed = ((record.finishedAt ?? Date.now()) - record.createdAt) / 1000;
        process.stdout.write(
          `run ${record.runId}: ${record.state}, ${record.dataset}, ${elapsed.toFixed(0)} s${record.error ? ` (${record.error})` : ''}\n`,
        );
        const rows: string[][] = [
          ['stage', 'planned', 'done', 'failed', 'queue waiting', 'queue active', 'rate', 'ETA'],
        ];
        for (const p of await registry.progress(record.runId)) {
          const counts = await queues(p.group).getJobCounts(
            'waiting',
            'active',
            'waiting-children',
            'delayed',
            'prioritized',
          );
          const rate = elapsed > 0 ? p.done / elapsed : 0;
          const left = p.total - p.done - p.failed;
          const eta =
            left === 0 ? '-' : rate > 0 && record.state === 'running' ? formatDuration((left / rate) * 1000) : '?';
          rows.push([
            p.group,
            `${p.total}`,
            `${p.done}`,
            `${p.failed}`,
            `${(counts.waiting ?? 0) + (counts['waiting-children'] ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0)}`,
            `${counts.active ?? 0}`,
            formatRate(rate),
            eta,
          ]);
        }
        process.stdout.write(`${textTable(rows)}\n`);
        if (flags.failed) {
          const failed = [['job', 'stage', 'attempts', 'reason']];
          for (const group of STAGE_GROUPS) {
            for (const job of await queues(group).getFailed()) {
              if (job.id?.startsWith(`${record.runId}.`))
                failed.push([job.id, group, `${job.attemptsMade}`, job.failedReason ?? '']);
            }
          }
          process.stdout.write(failed.length > 1 ? `\nfailed jobs:\n${textTable(failed)}\n` : '\nno failed jobs\n');
        }
        return 0;
      });
    });

  withQueue(program.command('runs').description('queued runs, newest first, with their outcome'))
    .option('--limit <n>', 'how many', positiveInt, 20)
    .action(async (flags: QueueFlags & { limit: number }) => {
      process.exitCode = await withRegistry(flags, async (registry) => {
        const rows = [['run', 'state', 'dataset', 'started', 'duration', 'outcome']];
        for (const r of await registry.list(flags.limit)) {
          const outcome = Object.entries(r.outcome ?? {})
            .map(([f, c]) => `${f} ${c.accepted}/${c.input}`)
            .join(', ');
          const duration = r.finishedAt ? `${((r.finishedAt - r.createdAt) / 1000).toFixed(1)} s` : '-';
          rows.push([
            r.runId,
            r.state,
            r.dataset,
            new Date(r.createdAt).toISOString(),
            duration,
            outcome || (r.error ?? ''),
          ]);
        }
        process.stdout.write(rows.length > 1 ? `${textTable(rows)}\n` : 'no runs yet\n');
        return 0;
      });
    });

  generateOptions(
    program
      .command('schedule')
      .description(
        'register a (nightly) regeneration with the job scheduler; each run writes a new version under --out',
      )
      .option('--cron <pattern>', 'cron pattern, e.g. "0 2 * * *"')
      .option('--tz <zone>', "time zone of the pattern (default: the server's)")
      .option('--name <name>', 'scheduler name (one schedule per name)', 'nightly')
      .option('--now', 'also enqueue one run now')
      .option('--list', 'list the registered schedules')
      .option('--remove', 'remove the schedule --name')
      .option('--source <dir>', 'dataset source directory')
      .option('--out <dir>', 'base directory of the versioned outputs (versions/<v>/, latest.json)')
      .option('--db <id...>', 'only these databases (repeatable)')
      .option('--formulations <list>', `comma-separated: ${FORMULATIONS.join(',')}`, commaList),
  ).action(async (flags: Partial<QueueFlags> & Record<string, unknown>, command: Command) => {
    const url = flags.queue ?? process.env.REDIS_URL ?? DEFAULT_URL;
    const { checkRedis } = await import('../pipeline/queue/redis-check.js');
    const { redactedUrl } = await import('../pipeline/queue/connection.js');
    const { persistent } = await checkRedis(url);
    if (flags.cron && persistent === false) {
      process.stderr.write(
        `warning: Redis at ${redactedUrl(url)} does not persist (no AOF, no RDB save points): a restart loses the schedule and its queued runs (README: "Starting Redis for the queue")\n`,
      );
    }
    const { scheduleRuns } = await import('../pipeline/queue/schedule.js');
    const lines = await scheduleRuns({
      url,
      prefix: flags.queuePrefix ?? DEFAULT_PREFIX,
      name: String(flags.name),
      cron: flags.cron as string | undefined,
      tz: flags.tz as string | undefined,
      now: Boolean(flags.now),
      list: Boolean(flags.list),
      remove: Boolean(flags.remove),
      config: flags.list || flags.remove ? undefined : await configOf(flags, command),
      log: (line) => process.stderr.write(`${line}\n`),
    });
    for (const line of lines) process.stdout.write(`${line}\n`);
  });
}

async function withRegistry(
  flags: QueueFlags,
  work: (
    registry: import('../pipeline/queue/registry.js').RunRegistry,
    queues: (group: StageGroup) => import('bullmq').Queue,
  ) => Promise<number>,
): Promise<number> {
  const { checkRedis } = await import('../pipeline/queue/redis-check.js');
  await checkRedis(flags.queue);
  const { closeConnection, commandConnection, ConnectionWatch, redactedUrl } =
    await import('../pipeline/queue/connection.js');
  const { RunRegistry } = await import('../pipeline/queue/registry.js');
  const { Queue } = await import('bullmq');
  const watch = new ConnectionWatch(flags.queue, (line) => process.stderr.write(`${line}\n`));
  const redis = commandConnection(flags.queue, watch);
  const opened = new Map<StageGroup, import('bullmq').Queue>();
  try {
    return await work(new RunRegistry(redis, flags.queuePrefix), (group) => {
      let queue = opened.get(group);
      if (!queue) {
        opened.set(group, (queue = new Queue(STAGE_QUEUES[group], { connection: redis, prefix: flags.queuePrefix })));
        watch.errorsOf(queue, `${group} queue`);
      }
      return queue;
    });
  } catch (error) {
    process.stderr.write(`nl2api: cannot read the queue at ${redactedUrl(flags.queue)}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await Promise.all([...opened.values()].map((q) => q.close()));
    await closeConnection(redis);
  }
}

function stageList(value: string): StageGroup[] {
  const groups = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const g of groups)
    if (!STAGE_GROUPS.includes(g as StageGroup))
      throw new InvalidArgumentError(`unknown stage group ${g} (one of ${STAGE_GROUPS.join(', ')})`);
  return groups as StageGroup[];
}

/**
 * How long a worker's forced close may take before the process exits anyway. It waits on no
 * job, and on Redis only where it answers (QUIT) or is not known to be gone: a reachable
 * Redis answers in milliseconds, the SQL processes (SIGKILLed) and REST servers close well
 * under a second. 5 s leaves room for a loaded machine; past it, Redis is taken as not
 * answering (a stopped or hung server keeps its sockets up).
 */
const FORCED_CLOSE_MS = 5000;

/**
 * Whether `work` ends within `ms` (a failure is thrown: it ended, badly). The timer is ours,
 * not AbortSignal.timeout's: that one is unref'd, and the wait must hold the process.
 */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), ms);
  try {
    return await settlesUnlessAborted(work, timeout.signal);
  } finally {
    clearTimeout(timer);
  }
}
