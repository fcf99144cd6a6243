import { systemClock, type Clock } from './clock.js';

/**
 * Admits one request at a time. In-process for now; a Redis-backed limiter shared by all
 * workers can implement the same interface.
 */
export interface RateLimiter {
  /** Resolves when one more request may be sent. */
  acquire(): Promise<void>;
}

/** No limit: every request goes at once (a server on this machine, by default: limits.ts). */
export const UNLIMITED: RateLimiter = { acquire: () => Promise.resolve() };

/**
 * Token bucket: holds up to `burst` tokens (default: one minute's worth), refilled
 * continuously at `requestsPerMinute`. Waiters are served in arrival order.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private updatedAt: number;
  private queue: Promise<void> = Promise.resolve();
  private readonly capacity: number;
  private readonly perMs: number;

  constructor(
    requestsPerMinute: number,
    private readonly clock: Clock = systemClock,
    burst: number = requestsPerMinute,
  ) {
    if (!(requestsPerMinute > 0) || !(burst >= 1)) throw new Error('requestsPerMinute must be > 0 and burst >= 1');
    this.capacity = burst;
    this.tokens = burst;
    this.perMs = requestsPerMinute / 60_000;
    this.updatedAt = clock.now();
  }

  acquire(): Promise<void> {
    const turn = this.queue.then(() => this.take());
    this.queue = turn;
    return turn;
  }

  private async take(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.updatedAt) * this.perMs);
      this.updatedAt = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await this.clock.sleep(Math.ceil((1 - this.tokens) / this.perMs));
    }
  }
}
