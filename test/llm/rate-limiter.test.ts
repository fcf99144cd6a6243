import { TokenBucketRateLimiter } from '../../generators/llm/rate-limiter.js';
import { FakeClock } from './helpers.js';

describe('TokenBucketRateLimiter', () => {
  test('a burst up to the bucket size, then one request per 60/rpm seconds, in arrival order', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter(3, clock);
    const admitted: number[] = [];
    await Promise.all([0, 1, 2, 3, 4].map((i) => limiter.acquire().then(() => admitted.push(i))));
    expect(admitted).toEqual([0, 1, 2, 3, 4]);
    expect(clock.sleeps).toEqual([20_000, 20_000]);
  });

  test('tokens refill with time, up to the bucket size only', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter(2, clock);
    await limiter.acquire();
    await limiter.acquire();
    clock.time += 10 * 60_000; // idle for ten minutes: still only 2 tokens
    for (let i = 0; i < 3; i++) await limiter.acquire();
    expect(clock.sleeps).toEqual([30_000]);
  });

  test('burst can be smaller than a minute of requests', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter(60, clock, 1);
    for (let i = 0; i < 3; i++) await limiter.acquire();
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  test('rejects a nonsensical rate', () => {
    expect(() => new TokenBucketRateLimiter(0)).toThrow();
  });
});
