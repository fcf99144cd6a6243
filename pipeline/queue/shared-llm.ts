import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.js';
import { RedisLlmCache } from '../../generators/llm/redis-cache.js';
import { RedisRateLimiter } from '../../generators/llm/redis-rate-limiter.js';
import type { RestServiceOptions } from '../rest-service-types.js';

/**
 * The LLM reply cache and rate limit every process of a queue backend shares: replies in
 * Redis (a reply one worker paid for is free for all), and one limit per provider endpoint,
 * held across all workers on all machines.
 */
export function sharedLlm(redis: Redis, prefix: string, config: Config): RestServiceOptions['shared'] {
  const llm = config.llm;
  if (!llm) return undefined;
  return {
    cache: new RedisLlmCache(redis, { prefix }),
    rateLimiter: new RedisRateLimiter(redis, {
      prefix,
      name: `${llm.provider}|${llm.baseUrl ?? 'default'}`,
      requestsPerMinute: llm.requestsPerMinute,
      burst: llm.burst,
    }),
  };
}
