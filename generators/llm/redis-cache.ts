import type { Redis } from 'ioredis';
import type { LlmCache } from './cache.js';

/**
 * LLM replies in Redis, shared by every worker: a reply paid for once is served to all.
 * One string per request key, `${prefix}:llm:${key}`; no TTL (a reply stays valid as long
 * as its key, which hashes everything that shapes it).
 */
export class RedisLlmCache implements LlmCache {
  private readonly prefix: string;

  constructor(
    private readonly redis: Redis,
    options: { prefix: string },
  ) {
    this.prefix = `${options.prefix}:llm:`;
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }

  async put(key: string, value: string): Promise<void> {
    await this.redis.set(this.prefix + key, value);
  }
}
