import type { Redis } from 'ioredis';
import type { ConnectionWatch } from './connection.js';
import type { Config } from '../../config/schema.js';
import type { RestServiceOptions } from '../rest-service-types.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import type { QueueDriveInput, QueueDriveResult } from './driver.js';

/**
 * What `generate` needs of the queue backend: the shared store and LLM services, and the
 * driver. Loaded only when a run has `queue` configured (in-process runs never load
 * BullMQ or ioredis). Fails at once, clearly (a QueueUnavailableError), when Redis cannot
 * be reached or would evict BullMQ's keys.
 */
export interface QueueBackend {
  redis: Redis;
  /** Tells of Redis outages once per reconnect step for all the run's connections (driver, local workers). */
  watch: ConnectionWatch;
  /** The run's id (given with --run, or new). */
  runId: string;
  store: OutcomeStore;
  sharedLlm: RestServiceOptions['shared'];
  drive(input: QueueDriveInput): Promise<QueueDriveResult>;
  close(): Promise<void>;
}

export async function queueBackend(config: Config, log: (line: string) => void = () => {}): Promise<QueueBackend> {
  const queue = config.queue!;
  const { checkRedis } = await import('./redis-check.js');
  const { closeConnection, ConnectionWatch, redisConnection } = await import('./connection.js');
  const { RedisStore } = await import('../store/redis-store.js');
  const { sharedLlm } = await import('./shared-llm.js');
  const { driveQueueRun } = await import('./driver.js');
  const { newRunId, storePrefix } = await import('./jobs.js');
  await checkRedis(queue.url);
  const watch = new ConnectionWatch(queue.url, log);
  const redis = redisConnection(queue.url, {}, watch);
  const runId = queue.runId ?? newRunId();
  return {
    redis,
    watch,
    runId,
    store: new RedisStore(redis, { prefix: storePrefix(queue.prefix, { runId, cache: config.cache }) }),
    sharedLlm: sharedLlm(redis, queue.prefix, config),
    drive: driveQueueRun,
    close: () => closeConnection(redis),
  };
}
