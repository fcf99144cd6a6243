import { createHash, type Hash } from 'node:crypto';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { LruMap } from '../../core/lru.js';
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

/**
 * sha256 of the canonical JSON of what determines the reply. An evaluation's requests share
 * a long first message (a system prompt that lists every tool of a database, hundreds of KB)
 * and differ after it; escaping and hashing it again for each request cost a third of the
 * harness's CPU. So the hash of the text up to the end of that message's content is kept,
 * and each key goes on from a copy of it: the same bytes are hashed, the same key comes out
 * (a cached reply is never lost to a faster key).
 */
export function llmCacheKey(input: CacheKeyInput): string {
  const { messages, ...others } = keyObject(input);
  const params = keptParams(input.params);
  const [first, ...rest] = messages;
  if (!first || first.content.length < SHARED_PREFIX_MIN || Object.keys(first).length !== 2)
    return sha256(canonicalJson(keyObject(input), params));
  // Canonical JSON sorts keys: "messages" comes first, then model, params, provider, v; a message's content before its role.
  const tail = [
    `,"role":${JSON.stringify(first.role)}}`,
    ...rest.map((m) => `,${canonicalJson(m)}`),
    `],${canonicalJson(others, params).slice(1)}`,
  ].join('');
  return prefixHash(first.content).copy().update(tail).digest('hex');
}

/**
 * The canonical JSON of a request's parameters that are objects, kept by reference: a tool
 * list bound natively (`LlmClient.chat`) is the same array request after request (an
 * evaluation's SLOT database's tools, hundreds of KB, with each of its items), and writing
 * it out again for each key cost a fifth of the main thread. Such a parameter is never
 * changed once passed (a `readonly` list).
 */
const paramTexts = new WeakMap<object, string>();
function keptParams(params: Record<string, unknown>): (value: object) => string | undefined {
  const objects = new Set(Object.values(params).filter((v): v is object => v !== null && typeof v === 'object'));
  return (value) => {
    if (!objects.has(value)) return undefined;
    let text = paramTexts.get(value);
    if (text === undefined) paramTexts.set(value, (text = canonicalJson(value)));
    return text;
  };
}

function keyObject(input: CacheKeyInput) {
  return { v: 1, provider: input.provider, model: input.model, messages: input.messages, params: input.params };
}

/** Below this, a first message is hashed with the rest: remembering it would cost more than it saves. */
const SHARED_PREFIX_MIN = 4096;
const prefixHashes = new LruMap<string, Hash>(16);

/** The hash state after `{"messages":[{"content":<content>`. */
function prefixHash(content: string): Hash {
  let hash = prefixHashes.get(content);
  if (!hash)
    prefixHashes.set(
      content,
      (hash = createHash('sha256').update(`{"messages":[{"content":${JSON.stringify(content)}`)),
    );
  return hash;
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
