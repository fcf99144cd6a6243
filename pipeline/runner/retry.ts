import { TransientError } from '../../core/outcome.js';
import type { Config } from '../../config/schema.js';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  baseMs: number;
  maxMs: number;
}

/** The run's retry policy for transient failures (of a stage, an HTTP call, a lost SQL worker). */
export function retryPolicyOf(config: Pick<Config, 'retries' | 'backoff'>): RetryPolicy {
  return { retries: config.retries, baseMs: config.backoff.baseMs, maxMs: config.backoff.maxMs };
}

/** Exponential backoff with "equal jitter": half the capped delay, plus up to that again at random. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const capped = Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
  return capped / 2 + random() * (capped / 2);
}

export class RetriesExhaustedError extends Error {
  override name = 'RetriesExhaustedError';
  constructor(
    readonly attempts: number,
    readonly last: TransientError,
  ) {
    super(`still failing after ${attempts} attempts: ${last.message}`);
  }
}

/**
 * Runs `fn`, retrying TransientErrors with backoff; other errors pass through at once.
 * `onRetry` sees each retry (for stats); `sleep` is injectable for tests.
 */
export async function withRetries<T>(
  fn: () => Promise<T>,
  policy: RetryPolicy,
  hooks: { onRetry?: (attempt: number, error: TransientError) => void; sleep?: (ms: number) => Promise<void> } = {},
): Promise<T> {
  const sleep = hooks.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      if (attempt >= policy.retries) throw new RetriesExhaustedError(attempt + 1, error);
      hooks.onRetry?.(attempt + 1, error);
      await sleep(backoffDelay(attempt, policy));
    }
  }
}
