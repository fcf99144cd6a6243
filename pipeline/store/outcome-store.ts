import type { Outcome } from '../../core/outcome.js';

/**
 * Where terminal stage outcomes and records live, by content key (run-store.ts explains the
 * keys). Two implementations: the run store (a SQLite file, for the in-process runner) and
 * the Redis store (redis-store.ts, shared by every BullMQ worker). Reads are async so that
 * one contract fits both; writes are buffered and become durable at `flush()`.
 */
export interface OutcomeStore {
  get<T>(key: string): Promise<Outcome<T> | undefined>;
  /** Many records at once (any JSON the caller stored), by key; absent keys are left out. */
  getMany<T>(keys: readonly string[]): Promise<Map<string, T>>;
  /** Reads these keys ahead; the next `get` of each is served from memory. */
  prefetch(keys: readonly string[]): Promise<void>;
  /** Buffers a terminal outcome or record (as JSON text). */
  put(key: string, stage: string, json: string): void;
  /** Writes the buffer if the last write is old enough (group commits). */
  commit(): Promise<void>;
  /** Writes the buffer now. */
  flush(): Promise<void>;
}
