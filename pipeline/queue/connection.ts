import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections for the queue backend. BullMQ needs `maxRetriesPerRequest: null` (a
 * command waits out a reconnect instead of failing), and every connection retries forever
 * with a capped delay, so that a Redis restart mid-run is survived by workers and drivers
 * alike. Each owner closes what it opens (`quit`), or the process never exits.
 */

export function redisConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (attempt) => Math.min(100 * attempt, 2000),
    ...options,
  });
}

/** Closes a connection, politely if it is up, at once if it is not. */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    if (redis.status === 'ready') await redis.quit();
    else redis.disconnect();
  } catch {
    redis.disconnect();
  }
}
