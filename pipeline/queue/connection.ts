import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections for the queue backend. BullMQ needs `maxRetriesPerRequest: null` (a
 * command waits out a reconnect instead of failing), and every connection retries forever
 * with an exponential, capped delay, so that a Redis restart mid-run is survived by workers
 * and drivers alike. Each owner closes what it opens (`quit`), or the process never exits.
 *
 * Every connection has an 'error' listener: without one, ioredis prints an "Unhandled error
 * event" with a stack for each failed attempt of each connection. What a user should hear of
 * an outage is told by a ConnectionWatch, once per backoff step for the whole process.
 */

/** The longest wait between two reconnect attempts. */
const MAX_RETRY_DELAY_MS = 5000;

/** 100 ms, 200 ms, 400 ms … 5 s: a restarted Redis is found within a second, a long outage costs one attempt per 5 s. */
export function retryDelay(attempt: number): number {
  return Math.min(100 * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
}

export function redisConnection(url: string, options: RedisOptions = {}, watch?: ConnectionWatch): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // BullMQ's duplicates of this connection copy the strategy, so they report to the watch too.
    retryStrategy: (attempt) => {
      const delay = retryDelay(attempt);
      watch?.retrying(attempt, delay);
      return delay;
    },
    ...options,
  });
  redis.on('error', (error: Error) => watch?.failed(error));
  if (watch) redis.on('ready', () => watch.ready());
  return redis;
}

/** A short command's connection (status, runs, schedule): fails instead of waiting for a Redis that went away. */
export function commandConnection(url: string, watch: ConnectionWatch): Redis {
  return redisConnection(url, { maxRetriesPerRequest: 1, retryStrategy: () => null }, watch);
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

/**
 * What one process says about its Redis going away: all its connections (and BullMQ's
 * duplicates of them) retry in step, so a line is written only for the first connection to
 * reach each attempt, and one when a connection is ready again.
 */
export class ConnectionWatch {
  /** The highest attempt told in the current outage (0: Redis is up). */
  private step = 0;
  private cause = 'connection lost';

  constructor(
    private readonly url: string,
    private readonly log: (line: string) => void,
  ) {}

  failed(error: Error): void {
    this.cause = reasonOf(error);
  }

  retrying(attempt: number, delayMs: number): void {
    if (attempt <= this.step) return;
    this.step = attempt;
    this.log(
      `Redis at ${redactedUrl(this.url)} unreachable (${this.cause}): reconnect attempt ${attempt} in ${delayMs} ms`,
    );
  }

  /** Redis is out of reach now: a connection is retrying, and none has been ready since. */
  get unreachable(): boolean {
    return this.step > 0;
  }

  ready(): void {
    if (this.step === 0) return;
    this.log(`Redis at ${redactedUrl(this.url)}: reconnected after ${this.step} attempt${this.step === 1 ? '' : 's'}`);
    this.step = 0;
    this.cause = 'connection lost';
  }

  /**
   * Listens to the 'error' events of a BullMQ Queue, Worker or FlowProducer (without a
   * listener BullMQ prints each one): connection failures are this watch's to tell, any
   * other error is logged with its source.
   */
  errorsOf(emitter: { on(event: 'error', listener: (error: Error) => void): unknown }, source: string): void {
    emitter.on('error', (error) => {
      if (isConnectionError(error)) this.failed(error);
      else this.log(`${source}: ${error.message}`);
    });
  }
}

/** A socket-level failure (refused, reset, timed out, unresolvable host) or a command cut off by one. */
export function isConnectionError(error: Error): boolean {
  return 'syscall' in error || error.message === 'Connection is closed.';
}

/** The short reason of a connection failure: the system error code (ECONNREFUSED) when there is one. */
export function reasonOf(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : error.message;
}

/** The URL without its password, for messages that end up in logs. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
