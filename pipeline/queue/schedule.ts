import path from 'node:path';
import { Queue, type JobsOptions } from 'bullmq';
import type { Config } from '../../config/schema.js';
import { ConfigError } from '../../config/load.js';
import { closeConnection, commandConnection, ConnectionWatch } from './connection.js';
import { STAGE_QUEUES, type RunJob } from './jobs.js';

/**
 * Scheduled regeneration with BullMQ's job scheduler: a scheduler (by name) adds a run job
 * at each tick of its cron pattern; any worker drives it (scheduled-run.ts). The config is
 * stored validated with the schedule, so workers need no config file.
 */

export interface ScheduleOptions {
  url: string;
  prefix: string;
  name: string;
  cron?: string;
  tz?: string;
  /** Also enqueue one run now. */
  now: boolean;
  list: boolean;
  remove: boolean;
  config?: Config;
  log: (line: string) => void;
}

/** A run job that fails (its driver crashed) is retried: the retry re-attaches to the same run. */
const RUN_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 10_000 },
  removeOnComplete: { age: 30 * 86_400 },
  removeOnFail: { age: 30 * 86_400 },
};

export async function scheduleRuns(options: ScheduleOptions): Promise<string[]> {
  const watch = new ConnectionWatch(options.url, options.log);
  const connection = commandConnection(options.url, watch);
  const queue = new Queue<RunJob>(STAGE_QUEUES.run, { connection, prefix: options.prefix });
  watch.errorsOf(queue, 'schedule');
  try {
    if (options.list) {
      const schedulers = await queue.getJobSchedulers();
      return schedulers.length
        ? schedulers.map(
            (s) =>
              `${s.key}: "${s.pattern}"${s.tz ? ` (${s.tz})` : ''}, next ${s.next ? new Date(s.next).toISOString() : '-'}`,
          )
        : ['no schedules'];
    }
    if (options.remove)
      return [
        (await queue.removeJobScheduler(options.name)) ? `removed ${options.name}` : `no schedule ${options.name}`,
      ];
    const config = options.config;
    if (!config?.source) throw new ConfigError('schedule needs --source');
    if (!options.cron && !options.now)
      throw new ConfigError('schedule needs --cron <pattern> (or --now, --list, --remove)');
    const base = path.resolve(config.out);
    const data: RunJob = {
      config: { ...config, source: path.resolve(config.source), out: base },
      base,
      scheduler: options.name,
    };
    const lines: string[] = [];
    if (options.cron) {
      const job = await queue.upsertJobScheduler(
        options.name,
        { pattern: options.cron, tz: options.tz },
        { name: 'run', data, opts: RUN_JOB_OPTIONS },
      );
      lines.push(
        `schedule ${options.name}: "${options.cron}", next run ${job ? new Date(job.timestamp + (job.opts.delay ?? 0)).toISOString() : '-'}; versions under ${base}`,
      );
    }
    if (options.now) {
      const job = await queue.add('run', data, { ...RUN_JOB_OPTIONS, jobId: `now-${options.name}-${Date.now()}` });
      lines.push(`enqueued run job ${job.id}; versions under ${base}`);
    }
    return lines;
  } finally {
    await queue.close();
    await closeConnection(connection);
  }
}
