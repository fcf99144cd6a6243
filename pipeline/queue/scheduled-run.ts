import path from 'node:path';
import type { Job, Processor } from 'bullmq';
import { ConfigSchema, QueueConfigSchema, type Config } from '../../config/schema.js';
import type { RunJob } from './jobs.js';

/**
 * Drives one scheduled run inside a worker: a new version directory under the schedule's
 * base, `generate` on the queue (the worker's own stage workers, and every other, do the
 * work), then the diff against the previous version and the `latest.json` switch. The run id
 * derives from the job, so a retried run job (its worker died) re-attaches to the same run;
 * the shared store makes every night incremental.
 */

export function scheduledRunProcessor(options: {
  url: string;
  prefix: string;
  log: (line: string) => void;
  /**
   * After the version is generated, before it is published: what the config's `evaluate`
   * measures on it against the previous version (the CLI passes the evaluation, a layer above).
   */
  evaluate?: (run: { config: Config; out: string; previous: string | null; cacheDir: string }) => Promise<unknown>;
}): Processor<RunJob> {
  return async (job: Job<RunJob>) => {
    const { generate } = await import('../generate.js');
    const { diffOutputs, latestVersion, publishVersion, versionDir } = await import('../versions.js');
    const config = ConfigSchema.parse(job.data.config);
    const base = job.data.base;
    const version = new Date(job.timestamp)
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z');
    const runId = `s${job.id!.replace(/[^A-Za-z0-9_-]/g, '-')}`;
    const previous = await latestVersion(base);
    const out = versionDir(base, version);
    options.log(`run ${runId}: version ${version} (previous: ${previous?.version ?? 'none'})`);
    const result = await generate({
      config: {
        ...config,
        out,
        cacheDir: config.cacheDir ?? path.join(base, '.cache'),
        progress: 'none',
        queue: QueueConfigSchema.parse({
          ...config.queue,
          url: options.url,
          prefix: options.prefix,
          localWorkers: false,
          runId,
        }),
      },
    });
    if (result.aborted || !result.stats) throw new Error(`run ${runId} was interrupted`);
    const diff = await diffOutputs(previous?.dir ?? null, out);
    if (config.evaluate && options.evaluate) {
      const cacheDir = config.cacheDir ?? path.join(base, '.cache');
      diff.evaluation = await options.evaluate({ config, out, previous: previous?.dir ?? null, cacheDir });
    }
    await publishVersion(base, version, diff);
    options.log(
      `run ${runId}: published ${version}: +${diff.totals.added} -${diff.totals.removed} ~${diff.totals.changed} =${diff.totals.unchanged}`,
    );
    return { runId, version, totals: diff.totals };
  };
}
