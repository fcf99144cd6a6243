import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import { RedisStore } from '../../pipeline/store/redis-store.js';
import { connectedPair, type TestRedis } from '../support/redis.js';

let server: TestRedis, redis: Redis, other: Redis;
let prefix: string;
let run = 0;
let close: () => Promise<void>;

beforeAll(async () => ({ server, redis, other, close } = await connectedPair()));
afterAll(() => close());
// Each test its own keys.
beforeEach(() => {
  prefix = `${server.prefix}-${++run}`;
});

const outcome = (n: number) => JSON.stringify({ ok: true, value: { n } });

describe('Redis store', () => {
  test('put, flush, get: a round trip under the prefixed key', async () => {
    const store = new RedisStore(redis, { prefix });
    expect(await store.get('k1')).toBeUndefined();
    store.put('k1', 'gold', outcome(1));
    await store.flush();
    expect(await redis.get(`${prefix}:store:k1`)).toBe(outcome(1));
    expect(await new RedisStore(redis, { prefix }).get('k1')).toEqual({ ok: true, value: { n: 1 } });
    expect(await redis.pttl(`${prefix}:store:k1`)).toBe(-1);
  });

  test('getMany reads more keys than one MGET holds, and leaves absent keys out', async () => {
    const writer = new RedisStore(redis, { prefix });
    const keys = Array.from({ length: 1203 }, (_, i) => `k${i}`);
    keys.forEach((key, i) => i % 3 !== 0 && writer.put(key, 'gold', outcome(i)));
    await writer.flush();
    const mgets: number[] = [];
    const reader = new RedisStore(redis, { prefix });
    const mget = redis.mget.bind(redis);
    const spy = jest.spyOn(redis, 'mget').mockImplementation(((names: string[]) => {
      mgets.push(names.length);
      return mget(names);
    }) as typeof redis.mget);
    try {
      const found = await reader.getMany<{ value: { n: number } }>([...keys, 'k1']);
      expect(mgets).toEqual([500, 500, 203]);
      expect(found.size).toBe(802);
      expect([...found.keys()]).toEqual(keys.filter((_, i) => i % 3 !== 0));
      expect(found.get('k1202')).toEqual({ ok: true, value: { n: 1202 } });
    } finally {
      spy.mockRestore();
    }
  });

  test('prefetched keys are served from memory once, then read from Redis again', async () => {
    const writer = new RedisStore(redis, { prefix });
    writer.put('a', 'gold', outcome(1));
    await writer.flush();
    const store = new RedisStore(redis, { prefix });
    await store.prefetch(['a', 'absent']);
    const get = jest.spyOn(redis, 'get');
    try {
      expect(await store.get('a')).toEqual({ ok: true, value: { n: 1 } });
      expect(await store.get('absent')).toBeUndefined();
      expect(get).not.toHaveBeenCalled();
      expect(await store.get('a')).toEqual({ ok: true, value: { n: 1 } });
      expect(get).toHaveBeenCalledTimes(1);
    } finally {
      get.mockRestore();
    }
  });

  test('a put is visible to this instance before the flush, and wins over a read ahead', async () => {
    const store = new RedisStore(redis, { prefix });
    await store.prefetch(['k']);
    store.put('k', 'gold', outcome(2));
    expect(await store.get('k')).toEqual({ ok: true, value: { n: 2 } });
    expect((await store.getMany(['k'])).get('k')).toEqual({ ok: true, value: { n: 2 } });
    expect(await redis.exists(`${prefix}:store:k`)).toBe(0);
    await store.flush();
    expect(await redis.get(`${prefix}:store:k`)).toBe(outcome(2));
  });

  test('commit writes at most every commitIntervalMs; flush writes at once', async () => {
    const store = new RedisStore(redis, { prefix, commitIntervalMs: 60_000 });
    store.put('a', 'gold', outcome(1));
    await store.commit(); // the first commit has no earlier one to wait for
    store.put('b', 'gold', outcome(2));
    await store.commit();
    expect(await redis.exists(`${prefix}:store:a`, `${prefix}:store:b`)).toBe(1);
    await store.flush();
    expect(await redis.exists(`${prefix}:store:a`, `${prefix}:store:b`)).toBe(2);
  });

  test('with reads off every read misses, and the results are still written', async () => {
    const writer = new RedisStore(redis, { prefix });
    writer.put('a', 'gold', outcome(1));
    await writer.flush();
    const store = new RedisStore(redis, { prefix, read: false });
    await store.prefetch(['a']);
    expect(await store.get('a')).toBeUndefined();
    expect((await store.getMany(['a'])).size).toBe(0);
    store.put('b', 'gold', outcome(2));
    expect(await store.get('b')).toBeUndefined();
    await store.flush();
    expect(await new RedisStore(redis, { prefix }).get('b')).toEqual({ ok: true, value: { n: 2 } });
  });

  test('another instance on another connection (another worker) sees what was flushed', async () => {
    const worker1 = new RedisStore(redis, { prefix });
    const worker2 = new RedisStore(other, { prefix });
    worker1.put('shared', 'gold', outcome(7));
    expect(await worker2.get('shared')).toBeUndefined();
    await worker1.flush();
    expect(await worker2.get('shared')).toEqual({ ok: true, value: { n: 7 } });
    expect((await worker2.getMany(['shared'])).get('shared')).toEqual({ ok: true, value: { n: 7 } });
  });

  test('values come back as the exact text that was put', async () => {
    const texts = [
      '{"b":1,"a":[1.50,2e3,-0.0],"s":"é ✓ 😀 \\u0000 \\" \\\\ \\n"}',
      '{ "spaced" : true ,\n  "order": ["z","a"] }',
      JSON.stringify({ big: 'x'.repeat(200_000) }),
    ];
    const store = new RedisStore(redis, { prefix });
    texts.forEach((text, i) => store.put(`t${i}`, 'gold', text));
    await store.flush();
    const stored = await redis.mget(texts.map((_, i) => `${prefix}:store:t${i}`));
    expect(stored).toEqual(texts);
    const reader = new RedisStore(other, { prefix });
    const found = await reader.getMany<unknown>(texts.map((_, i) => `t${i}`));
    texts.forEach((text, i) => expect(found.get(`t${i}`)).toEqual(JSON.parse(text)));
  });

  test('a failed write keeps its entries buffered and throws; the next flush writes them', async () => {
    const store = new RedisStore(redis, { prefix });
    store.put('a', 'gold', outcome(1));
    const mset = jest.spyOn(redis, 'mset').mockRejectedValueOnce(new Error('OOM command not allowed'));
    try {
      await expect(store.flush()).rejects.toThrow('OOM');
      expect(await store.get('a')).toEqual({ ok: true, value: { n: 1 } });
      store.put('b', 'gold', outcome(2));
      await store.flush();
    } finally {
      mset.mockRestore();
    }
    expect(await redis.mget(`${prefix}:store:a`, `${prefix}:store:b`)).toEqual([outcome(1), outcome(2)]);
  });
});
