import type { JobsOptions } from 'bullmq';
import type { Config } from '../../config/schema.js';

/**
 * How every stage job is retried and kept: `queue.attempts` tries with exponential backoff
 * (the run's backoff base); a job that fails for good does not hold its parent (the barrier
 * collects the failure and the instance becomes a rejection), and stays in Redis for a month
 * for inspection. Completed jobs are dropped after a week.
 */
export function childJobOptions(config: Config): JobsOptions {
  return {
    attempts: config.queue?.attempts ?? 3,
    backoff: { type: 'exponential', delay: Math.max(1, config.backoff.baseMs) },
    ignoreDependencyOnFailure: true,
    removeOnComplete: { age: 7 * 86_400 },
    removeOnFail: { age: 30 * 86_400 },
  };
}
