import type { Redis } from 'ioredis';
import { RedisRateLimiter, type RedisRateLimiterOptions } from '../../generators/llm/redis-rate-limiter.js';
import { connectedPair, type TestRedis } from '../support/redis.js';

/**
 * The shared limiter's schedule, read from the waits Redis prescribes (recorded instead of
 * slept), at rates slow enough (one request a minute, or every 20 s) that how long the
 * requests themselves take on a loaded machine cannot change the verdict: every bound
 * allows for up to SLACK ms spent between the first and the last reservation. One test
 * sleeps for real, and checks only what load cannot break: admissions are never early.
 */

const MINUTE = 60_000;
const SLACK = 20_000;

let server: TestRedis, redis: Redis, other: Redis;
let close: () => Promise<void>;

beforeAll(async () => ({ server, redis, other, close } = await connectedPair()));
afterAll(() => close());

/** A limiter that records each wait Redis prescribes instead of sleeping it. */
function recording(connection: Redis, options: Omit<RedisRateLimiterOptions, 'prefix' | 'sleep'>) {
  const waits: number[] = [];
  const limiter = new RedisRateLimiter(connection, {
    ...options,
    prefix: server.prefix,
    sleep: async (ms) => void waits.push(ms),
  });
  return { limiter, waits };
}

/** `waits` (sorted) are one interval apart from `first` on, each at most SLACK early. */
function expectSlots(waits: number[], first: number, interval: number): void {
  const sorted = [...waits].sort((a, b) => a - b);
  sorted.forEach((wait, k) => {
    expect(wait).toBeLessThanOrEqual((first + k) * interval);
    expect(wait).toBeGreaterThan((first + k) * interval - SLACK);
  });
}

describe('RedisRateLimiter', () => {
  test('two limiters on two connections sharing a name share one rate', async () => {
    // One per minute, no burst, whichever connection asks: 6 requests take 5 more minutes.
    const options = { name: 'shared', requestsPerMinute: 1, burst: 1 };
    const limiters = [recording(redis, options), recording(other, options)];
    await Promise.all(Array.from({ length: 6 }, (_, i) => limiters[i % 2].limiter.acquire()));
    const waits = [...limiters[0].waits, ...limiters[1].waits];
    expect(waits).toHaveLength(5); // one was admitted at once
    expectSlots(waits, 1, MINUTE);
  });

  test('a burst of N is let through at once, then one per interval; the key lasts until the bucket is full again', async () => {
    const { limiter, waits } = recording(redis, { name: 'burst', requestsPerMinute: 1, burst: 5 });
    await Promise.all(Array.from({ length: 7 }, () => limiter.acquire()));
    expect(waits).toHaveLength(2); // 5 at once
    expectSlots(waits, 1, MINUTE);
    // 7 reservations moved the bucket's "full again" time 7 minutes on: the key expires then.
    const ttl = await redis.pttl(`${server.prefix}:rate:burst`);
    expect(ttl).toBeLessThanOrEqual(7 * MINUTE);
    expect(ttl).toBeGreaterThan(7 * MINUTE - SLACK);
  });

  test('the default burst is one minute of requests', async () => {
    const { limiter, waits } = recording(redis, { name: 'default', requestsPerMinute: 3 });
    await Promise.all(Array.from({ length: 4 }, () => limiter.acquire()));
    expect(waits).toHaveLength(1); // 3 at once, the 4th waits its 20 s
    expectSlots(waits, 1, MINUTE / 3);
  });

  test('different names do not interfere', async () => {
    const a = recording(redis, { name: 'a', requestsPerMinute: 1, burst: 1 });
    const b = recording(other, { name: 'b', requestsPerMinute: 1, burst: 1 });
    await a.limiter.acquire();
    await b.limiter.acquire(); // a's next slot is a minute away; b has its own
    expect(b.waits).toEqual([]);
    await a.limiter.acquire();
    expectSlots(a.waits, 1, MINUTE);
  });

  test('with the real clock, no request beyond the burst is admitted before its slot', async () => {
    // 600 per minute, burst 2: the k-th request (from 0) is due (k - 1) × 100 ms after the start.
    const limiter = new RedisRateLimiter(redis, {
      prefix: server.prefix,
      name: 'real',
      requestsPerMinute: 600,
      burst: 2,
    });
    const start = performance.now();
    const times = await Promise.all(
      Array.from({ length: 5 }, () => limiter.acquire().then(() => performance.now() - start)),
    );
    times.sort((x, y) => x - y);
    // A timer may fire a millisecond early; a loaded machine only makes admissions later.
    times.forEach((t, k) => expect(t).toBeGreaterThanOrEqual(Math.max(0, k - 1) * 100 - 5));
  });

  test('rejects nonsensical parameters', () => {
    const make = (requestsPerMinute: number, burst?: number) =>
      new RedisRateLimiter(redis, { prefix: server.prefix, name: 'bad', requestsPerMinute, burst });
    expect(() => make(0)).toThrow();
    expect(() => make(-5)).toThrow();
    expect(() => make(Number.NaN)).toThrow();
    expect(() => make(Number.POSITIVE_INFINITY)).toThrow();
    expect(() => make(60, 0.5)).toThrow();
    expect(() => make(60, Number.NaN)).toThrow();
    expect(() => make(60, 1)).not.toThrow();
  });
});
