import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.js';
import type { RestServiceOptions } from '../rest-services.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import type { QueueDriveInput, QueueDriveResult } from './driver.js';

/**
 * What `generate` needs of the queue backend: the shared store and LLM services, and the
 * driver. Loaded only when a run has `queue` configured (in-process runs never load
 * BullMQ or ioredis). Fails at once, clearly, when Redis cannot be reached.
 */
export interface QueueBackend {
  redis: Redis;
  /** The run's id (given with --run, or new). */
  runId: string;
  store: OutcomeStore;
  sharedLlm: RestServiceOptions['shared'];
  drive(input: QueueDriveInput): Promise<QueueDriveResult>;
  close(): Promise<void>;
}

export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError';
}

const CONNECT_TIMEOUT_MS = 5000;

export async function queueBackend(config: Config): Promise<QueueBackend> {
  const queue = config.queue!;
  const { closeConnection, redisConnection } = await import('./connection.js');
  const { RedisStore } = await import('../store/redis-store.js');
  const { sharedLlm } = await import('./shared-llm.js');
  const { driveQueueRun } = await import('./driver.js');
  const { newRunId, storePrefix } = await import('./jobs.js');
  const redis = redisConnection(queue.url);
  await reachable(redis, queue.url, closeConnection);
  const runId = queue.runId ?? newRunId();
  return {
    redis,
    runId,
    store: new RedisStore(redis, { prefix: storePrefix(queue.prefix, { runId, cache: config.cache }) }),
    sharedLlm: sharedLlm(redis, queue.prefix, config),
    drive: driveQueueRun,
    close: () => closeConnection(redis),
  };
}

async function reachable(redis: Redis, url: string, close: (redis: Redis) => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueueUnavailableError(`cannot reach Redis at ${url} within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([redis.ping(), timeout]);
  } catch (error) {
    await close(redis);
    throw error instanceof QueueUnavailableError ? error : new QueueUnavailableError(`cannot reach Redis at ${url}: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}
