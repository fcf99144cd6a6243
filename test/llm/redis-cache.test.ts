import type { Redis } from 'ioredis';
import { RedisLlmCache } from '../../generators/llm/redis-cache.js';
import { connectedPair, type TestRedis } from '../support/redis.js';

let server: TestRedis, redis: Redis, other: Redis;
let close: () => Promise<void>;

beforeAll(async () => ({ server, redis, other, close } = await connectedPair()));
afterAll(() => close());

describe('RedisLlmCache', () => {
  test('a reply put is read back as is; an unknown key misses', async () => {
    const cache = new RedisLlmCache(redis, { prefix: server.prefix });
    expect(await cache.get('nope')).toBeUndefined();
    const reply = '{"content":"SELECT 1 ✓","usage":{"input":3}}';
    await cache.put('k', reply);
    expect(await cache.get('k')).toBe(reply);
    expect(await redis.get(`${server.prefix}:llm:k`)).toBe(reply);
  });

  test('two instances on two connections (two workers) share replies', async () => {
    const a = new RedisLlmCache(redis, { prefix: server.prefix });
    const b = new RedisLlmCache(other, { prefix: server.prefix });
    await a.put('shared', 'reply');
    expect(await b.get('shared')).toBe('reply');
    expect(await new RedisLlmCache(other, { prefix: `${server.prefix}x` }).get('shared')).toBeUndefined();
  });
});
