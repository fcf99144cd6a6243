import { hashJson } from '../../core/hash.js';
import type { LlmMessage } from './messages.js';

/** Replies by request key. Implementations: in memory (below), SQLite (sqlite-cache.ts). */
export interface LlmCache {
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string): Promise<void>;
}

export interface CacheKeyInput {
  provider: string;
  model: string;
  messages: readonly LlmMessage[];
  /** Everything else that changes the reply (temperature, max tokens, …); never credentials. */
  params: Record<string, unknown>;
}

/** sha256 of the canonical JSON of what determines the reply. */
export function llmCacheKey(input: CacheKeyInput): string {
  return hashJson({
    v: 1,
    provider: input.provider,
    model: input.model,
    messages: input.messages,
    params: input.params,
  });
}

export class MemoryLlmCache implements LlmCache {
  private readonly entries = new Map<string, string>();

  async get(key: string): Promise<string | undefined> {
    return this.entries.get(key);
  }

  async put(key: string, value: string): Promise<void> {
    this.entries.set(key, value);
  }

  get size(): number {
    return this.entries.size;
  }
}
