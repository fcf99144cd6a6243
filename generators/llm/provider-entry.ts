import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { SharedStartEncoder } from './body-bytes.js';

/**
 * What the PROVIDERS registry (providers.ts) holds per LLM provider, and the one rule every
 * entry's transport shares. Apart from the registry so that a provider can live in a module
 * of its own without an import cycle.
 */

/**
 * The LLM config's knobs a chat model is built from (restated here rather than imported:
 * config.ts derives its provider enum from the registry).
 */
export interface ProviderSettings {
  model: string;
  temperature: number;
  /** Provider default when absent. */
  maxTokens?: number;
  /** The SDK's default server when absent. */
  baseUrl?: string;
  timeoutMs: number;
}

/** Where a provider's API key comes from: the environment only, never a config file. */
export interface ApiKeyRule {
  /** The environment variable holding it. */
  readonly env: string;
  /** A configured base URL (a local compatible server) needs no key. */
  readonly optionalWithBaseUrl: boolean;
}

export interface LlmProviderEntry {
  /** Its API key, or null: it takes none. createChatModel resolves it; --help names it. */
  readonly apiKey: ApiKeyRule | null;
  /**
   * Its chat model, with the SDK's own retries off (sharedOptions) and its transport aborted
   * at `settings.timeoutMs` (chat-model.ts says why). Imports the provider's LangChain package
   * now, not before: they take most of a second to load. `apiKey` is what the rule resolved
   * (undefined when it takes none).
   */
  create(settings: ProviderSettings, apiKey: string | undefined): Promise<BaseChatModel>;
}

/** What every provider's SDK is given alike: the model, its temperature, and no retries of its own (LlmClient's are the only ones). */
export function sharedOptions(settings: ProviderSettings): { model: string; temperature: number; maxRetries: 0 } {
  return { model: settings.model, temperature: settings.temperature, maxRetries: 0 };
}

/**
 * `signal` (if any) or the deadline, whichever aborts first. Not `AbortSignal.any([signal,
 * AbortSignal.timeout(ms)])`: Node holds a composite's sources and a timeout signal without
 * listeners only weakly, so a garbage collection during the request dropped the deadline and
 * the socket of a reply that never came stayed open. Here the timer holds its controller.
 */
export function deadline(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no reply within ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  timer.unref(); // a pending deadline never keeps the process alive by itself
  if (signal?.aborted) controller.abort(signal.reason);
  else signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  controller.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return controller.signal;
}

/**
 * fetch with a text body sent as its UTF-8 bytes. An SDK hands fetch its JSON as a string,
 * which undici scans for lone surrogates, then encodes: an evaluation's prompts run to
 * hundreds of KB, and those two passes were a tenth of its main thread. Encoded here in one
 * pass, a lone surrogate as U+FFFD, as the scan would have made it, and the start a body
 * shares with recent ones only once (body-bytes.ts).
 */
const bodies = new SharedStartEncoder();
export const utf8BodyFetch: typeof fetch = (input, init) =>
  fetch(input, typeof init?.body === 'string' ? { ...init, body: bodies.encode(init.body) } : init);
