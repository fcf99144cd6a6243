import type { Redis } from 'ioredis';
import type { Outcome } from '../../core/outcome.js';
import type { OutcomeStore } from './outcome-store.js';

/**
 * The Redis store: the run store's contract (run-store.ts explains keys and group commits)
 * on a Redis server, so that every BullMQ worker, on any machine, reads what any other one
 * computed. One string per key, `${prefix}:store:${key}`, holding the JSON text exactly as
 * given to `put`; the stage name is not kept (it is already hashed into the key, and plain
 * strings let MGET read many at once). No TTL: like the SQLite file, the store is a cache
 * that is cleared by hand, and an evicted key would only cost a recomputation.
 *
 * Writes are buffered and sent at most every `commitIntervalMs` in one MSET (one round trip,
 * atomic); a buffered write is already visible to reads of this instance.
 */

export interface RedisStoreOptions {
  /** Key prefix shared by everything of one deployment (queue/jobs.ts: DEFAULT_PREFIX). */
  prefix: string;
  /** false: every read misses (everything recomputes) but results are still written. */
  read?: boolean;
  /** Group writes at most this often (a round trip per finished item costs more than the work). */
  commitIntervalMs?: number;
}

/** Keys per MGET: large enough to amortize round trips, small enough not to stall Redis. */
const BATCH = 500;

export class RedisStore implements OutcomeStore {
  private readonly prefix: string;
  private readonly read: boolean;
  private readonly commitIntervalMs: number;
  private readonly pending = new Map<string, string>();
  /**
   * Keys read ahead by `prefetch`: the MGET that reads each and its place in it. `put` drops
   * an entry, so a read ahead still in flight can never shadow a newer write.
   */
  private readonly prefetched = new Map<string, { batch: Promise<(string | null)[]>; index: number }>();
  private lastCommit = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    options: RedisStoreOptions,
  ) {
    this.prefix = `${options.prefix}:store:`;
    this.read = options.read ?? true;
    this.commitIntervalMs = options.commitIntervalMs ?? 200;
  }

  async get<T>(key: string): Promise<Outcome<T> | undefined> {
    const text = await this.text(key);
    return text === undefined ? undefined : (JSON.parse(text) as Outcome<T>);
  }

  /** Many records at once (any JSON the caller stored), by key; absent keys are left out. */
  async getMany<T>(keys: readonly string[]): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    if (!this.read) return found;
    const unique = [...new Set(keys)];
    await this.prefetch(unique);
    for (const key of unique) {
      const text = await this.text(key);
      if (text !== undefined) found.set(key, JSON.parse(text) as T);
    }
    return found;
  }

  /** Reads these keys ahead, BATCH keys per MGET; the next `get` of each is served from memory. */
  async prefetch(keys: readonly string[]): Promise<void> {
    if (!this.read) return;
    const wanted = [...new Set(keys)].filter((key) => !this.pending.has(key) && !this.prefetched.has(key));
    const batches: Promise<(string | null)[]>[] = [];
    for (let i = 0; i < wanted.length; i += BATCH) {
      const chunk = wanted.slice(i, i + BATCH);
      const batch = this.redis.mget(chunk.map((key) => this.prefix + key));
      chunk.forEach((key, index) => this.prefetched.set(key, { batch, index }));
      batches.push(batch);
    }
    try {
      await Promise.all(batches);
    } catch (error) {
      // Reads of these keys go to Redis again rather than repeat this failure.
      for (const key of wanted) this.prefetched.delete(key);
      throw error;
    }
  }

  /** Buffers a terminal outcome or record (as JSON text); durable after the next `flush()`. */
  put(key: string, _stage: string, json: string): void {
    this.pending.set(key, json);
    this.prefetched.delete(key);
  }

  /** Writes the buffered outcomes if the last write is `commitIntervalMs` old. */
  async commit(): Promise<void> {
    if (Date.now() - this.lastCommit >= this.commitIntervalMs) await this.flush();
  }

  /**
   * Writes the buffered outcomes now, in one MSET. If Redis refuses, they go back into the
   * buffer (unless a newer write of the same key came meanwhile) for the next flush, and the
   * error is thrown: nothing is dropped silently.
   */
  flush(): Promise<void> {
    // One write at a time, so that entries put back after a failure never overwrite a newer
    // write of the same key that another flush sent meanwhile.
    const turn = this.writing.then(() => this.write());
    this.writing = turn.catch(() => undefined);
    return turn;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    this.lastCommit = Date.now();
    const entries = [...this.pending];
    this.pending.clear();
    try {
      await this.redis.mset(entries.flatMap(([key, value]) => [this.prefix + key, value]));
    } catch (error) {
      for (const [key, value] of entries) if (!this.pending.has(key)) this.pending.set(key, value);
      throw error;
    }
  }

  private async text(key: string): Promise<string | undefined> {
    if (!this.read) return undefined;
    const pending = this.pending.get(key);
    if (pending !== undefined) return pending;
    const ahead = this.prefetched.get(key);
    if (ahead) {
      this.prefetched.delete(key);
      return (await ahead.batch)[ahead.index] ?? undefined;
    }
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }
}
