export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/**
 * Delay before retry number `attempt` (0 = first retry): exponential with full jitter
 * (uniform in [0, min(max, base·2^attempt)]) so that clients throttled together do not
 * come back together. A server's Retry-After is a floor, never shortened by the jitter.
 */
export function retryDelayMs(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
  const jittered = Math.round(random() * ceiling);
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}
