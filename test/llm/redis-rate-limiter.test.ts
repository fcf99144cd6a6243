import type { Redis } from 'ioredis';
import { RedisRateLimiter } from '../../generators/llm/redis-rate-limiter.js';
import { connectedPair, type TestRedis } from '../support/redis.js';

let server: TestRedis, redis: Redis, other: Redis;
let close: () => Promise<void>;

beforeAll(async () => ({ server, redis, other, close } = await connectedPair()));
afterAll(() => close());

/** When each acquisition was admitted, in ms since `start`, sorted. */
async function admissions(acquire: (i: number) => Promise<void>, n: number): Promise<number[]> {
  const start = performance.now();
  const times = await Promise.all(Array.from({ length: n }, (_, i) => acquire(i).then(() => performance.now() - start)));
  return times.sort((a, b) => a - b);
}

describe('RedisRateLimiter', () => {
  test('two limiters on two connections sharing a name share one rate', async () => {
    // 600 per minute, no burst: one request per 100 ms, whichever process asks.
    const options = { prefix: server.prefix, name: 'shared', requestsPerMinute: 600, burst: 1 };
    const limiters = [new RedisRateLimiter(redis, options), new RedisRateLimiter(other, options)];
    const times = await admissions((i) => limiters[i % 2].acquire(), 20);
    const span = times[19] - times[0];
    expect(span).toBeGreaterThanOrEqual(19 * 100 * 0.9);
    expect(span).toBeLessThanOrEqual(19 * 100 * 1.5);
    // In aggregate: never more than k+1 admissions in any k intervals.
    times.forEach((t, i) => expect(t - times[0]).toBeGreaterThanOrEqual(i * 100 * 0.9));
  });

  test('a burst of N is let through at once, then one per interval', async () => {
    // 120 per minute: one per 500 ms after the burst of 5.
    const limiter = new RedisRateLimiter(redis, { prefix: server.prefix, name: 'burst', requestsPerMinute: 120, burst: 5 });
    const times = await admissions(() => limiter.acquire(), 6);
    expect(times[4]).toBeLessThan(250);
    expect(times[5]).toBeGreaterThanOrEqual(450);
    expect(times[5]).toBeLessThan(750);
    // The key vanishes once the limiter has been idle long enough to be full again.
    const ttl = await redis.pttl(`${server.prefix}:rate:burst`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3000);
  });

  test('the default burst is one minute of requests', async () => {
    const limiter = new RedisRateLimiter(redis, { prefix: server.prefix, name: 'default', requestsPerMinute: 10 });
    const times = await admissions(() => limiter.acquire(), 10);
    expect(times[9]).toBeLessThan(250);
  });

  test('different names do not interfere', async () => {
    const options = { prefix: server.prefix, requestsPerMinute: 60, burst: 1 };
    const a = new RedisRateLimiter(redis, { ...options, name: 'a' });
    const b = new RedisRateLimiter(other, { ...options, name: 'b' });
    await a.acquire();
    // a's next slot is a second away; b has its own.
    const times = await admissions(() => b.acquire(), 1);
    expect(times[0]).toBeLessThan(250);
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
