import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.js';
import { RedisLlmCache } from '../../generators/llm/redis-cache.js';
import type { LlmConfig } from '../../generators/llm/config.js';
import { llmLimits } from '../../generators/llm/limits.js';
import { UNLIMITED, type RateLimiter } from '../../generators/llm/rate-limiter.js';
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
  return { cache: new RedisLlmCache(redis, { prefix }), rateLimiter: sharedRateLimiter(redis, prefix, llm) };
}

/** One provider endpoint's limit, held in Redis for every worker (none for a local server without a setting: limits.ts). */
export function sharedRateLimiter(
  redis: Redis,
  prefix: string,
  llm: Pick<LlmConfig, 'provider' | 'baseUrl' | 'requestsPerMinute' | 'concurrency' | 'burst'>,
): RateLimiter {
  const { requestsPerMinute } = llmLimits(llm);
  if (requestsPerMinute === null) return UNLIMITED;
  return new RedisRateLimiter(redis, {
    prefix,
    name: `${llm.provider}|${llm.baseUrl ?? 'default'}`,
    requestsPerMinute,
    burst: llm.burst,
  });
}
