import { Redis } from 'ioredis';
import { UserFacingError } from '../../core/errors.js';
import { reasonOf, redactedUrl } from './connection.js';

/**
 * What every queue command checks of its Redis before any work: that it answers (one clear
 * line at once, not a reconnect loop), and that it keeps what BullMQ writes. BullMQ requires
 * `maxmemory-policy noeviction`: an evicted job, lock or stored outcome is work lost or done
 * twice. Whether Redis persists matters to schedules, which live in Redis only.
 */

/** The queue backend cannot be used; the message is one line a user can act on. */
export class QueueUnavailableError extends UserFacingError {
  override name = 'QueueUnavailableError';
}

export interface RedisFacts {
  /** AOF or RDB snapshots on; undefined when the server does not say (CONFIG disabled). */
  persistent?: boolean;
}

const CONNECT_TIMEOUT_MS = 5000;

export async function checkRedis(url: string): Promise<RedisFacts> {
  const where = redactedUrl(url);
  // One attempt, no offline queue: a refused connection fails now instead of retrying forever.
  const redis = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
  });
  // connect() rejects with "Connection is closed."; the cause comes as an 'error' event.
  let cause: Error | undefined;
  redis.on('error', (error: Error) => (cause ??= error));
  try {
    try {
      await redis.connect();
    } catch (error) {
      throw new QueueUnavailableError(`cannot reach Redis at ${where}: ${reasonOf(cause ?? (error as Error))}`);
    }
    let info: Map<string, string>;
    try {
      info = parseInfo(await redis.info());
    } catch (error) {
      throw new QueueUnavailableError(`cannot use Redis at ${where}: ${(error as Error).message}`);
    }
    const policy = info.get('maxmemory_policy');
    if (policy && policy !== 'noeviction') {
      throw new QueueUnavailableError(
        `Redis at ${where} may evict keys (maxmemory-policy ${policy}); BullMQ needs noeviction: redis-cli -u ${where} config set maxmemory-policy noeviction (and the same in redis.conf)`,
      );
    }
    return { persistent: info.get('aof_enabled') === '1' || (await hasSavePoints(redis)) };
  } finally {
    redis.disconnect();
  }
}

/** The `key:value` lines of INFO. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** RDB snapshots configured (`save` points); undefined when CONFIG is not allowed. */
async function hasSavePoints(redis: Redis): Promise<boolean | undefined> {
  try {
    const [, save] = await redis.config('GET', 'save');
    return Boolean(save?.trim());
  } catch {
    return undefined;
  }
}
