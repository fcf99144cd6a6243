import type { Redis } from 'ioredis';
import { systemClock, type Clock } from './clock.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * A rate limit shared by every process that uses the same Redis key (BullMQ workers on many
 * machines), with TokenBucketRateLimiter's semantics: `requestsPerMinute`, and up to `burst`
 * requests at once after a quiet spell.
 *
 * GCRA (generic cell rate algorithm): Redis keeps one number, the theoretical arrival time
 * (TAT) at which the bucket would be full again. Each `acquire` atomically reserves the next
 * admissible send time and moves the TAT one interval on, then sleeps until its slot: no
 * polling, no lost wake-ups, and waiters are served in the order Redis saw them. Time is
 * Redis's own (`TIME`), so machines whose clocks disagree still share one schedule; only the
 * length of each sleep is measured locally. Processes sharing a name should share the
 * parameters too: each reservation uses the caller's.
 */

export interface RedisRateLimiterOptions {
  prefix: string;
  /** Limiters with the same name (and prefix) share one limit. */
  name: string;
  requestsPerMinute: number;
  /** Requests admitted at once after a quiet spell (default: one minute's worth). */
  burst?: number;
  /** How the wait for a reserved slot is spent (tests record it instead of waiting). */
  sleep?: Clock['sleep'];
}

/**
 * KEYS[1]: the TAT, in µs of Redis time; ARGV[1]: the interval between requests (µs);
 * ARGV[2]: the burst. Returns the ms to wait before sending (0: now). The key expires once
 * the TAT has passed, when it means the same as no key: an idle limiter leaves nothing behind.
 */
const GCRA = `
local interval = tonumber(ARGV[1])
local tolerance = (tonumber(ARGV[2]) - 1) * interval
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1])) or now, now)
local sendAt = math.max(now, tat - tolerance)
local nextTat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', nextTat), 'PX', math.ceil((nextTat - now) / 1000))
return math.ceil((sendAt - now) / 1000)
`;

const COMMAND = 'nl2apiGcraReserve';

type WithGcra = Redis & { [COMMAND](key: string, intervalUs: number, burst: number): Promise<number> };

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: WithGcra;
  private readonly key: string;
  private readonly intervalUs: number;
  private readonly burst: number;
  private readonly sleep: Clock['sleep'];

  constructor(redis: Redis, options: RedisRateLimiterOptions) {
    const { requestsPerMinute, burst = requestsPerMinute } = options;
    // Unlike the in-process bucket, an infinite rate has no interval for the script to reserve.
    if (!(requestsPerMinute > 0 && Number.isFinite(requestsPerMinute)) || !(burst >= 1)) {
      throw new Error('requestsPerMinute must be > 0 and finite, and burst >= 1');
    }
    // ioredis sends the script by SHA (EVALSHA) and loads it only when Redis lacks it.
    redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: GCRA });
    this.redis = redis as WithGcra;
    this.key = `${options.prefix}:rate:${options.name}`;
    this.intervalUs = 60_000_000 / requestsPerMinute;
    this.burst = burst;
    this.sleep = options.sleep ?? systemClock.sleep;
  }

  async acquire(): Promise<void> {
    const waitMs = await this.redis[COMMAND](this.key, this.intervalUs, this.burst);
    if (waitMs > 0) await this.sleep(waitMs);
  }
}
