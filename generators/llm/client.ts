import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import pLimit, { type LimitFunction } from 'p-limit';
import { retryDelayMs } from './backoff.js';
import { llmCacheKey, type LlmCache } from './cache.js';
import { systemClock, type Clock } from './clock.js';
import type { LlmConfig } from './config.js';
import { classifyLlmError, LlmError } from './errors.js';
import { toLangChainMessages, type LlmMessage } from './messages.js';
import { TokenBucketRateLimiter, type RateLimiter } from './rate-limiter.js';
import { UsageMeter } from './usage.js';

export interface LlmClientOptions {
  /** From createChatModel (or a fake in tests). */
  model: BaseChatModel;
  config: LlmConfig;
  /** Without one, nothing is cached. */
  cache?: LlmCache;
  /** Default: an in-process token bucket at config.requestsPerMinute. */
  rateLimiter?: RateLimiter;
  /** Share one meter between clients to account a whole run. */
  usage?: UsageMeter;
  clock?: Clock;
  /** Jitter source, in [0, 1). */
  random?: () => number;
}

export interface LlmReply {
  text: string;
  /** Answered from the cache: no request was made. */
  cached: boolean;
  /** Requests made for this reply (0 when cached). */
  attempts: number;
}

/**
 * Every LLM call goes through here: response cache, concurrency limit, requests-per-minute
 * limit, timeout, retries with exponential backoff and jitter on retryable failures (429,
 * 5xx, network, timeout; honouring Retry-After), token and cost accounting. Failures are
 * thrown as categorized LlmErrors; anything else thrown is a bug and passes through.
 */
export class LlmClient {
  readonly usage: UsageMeter;
  private readonly model: BaseChatModel;
  private readonly config: LlmConfig;
  private readonly cache?: LlmCache;
  private readonly rateLimiter: RateLimiter;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly limit: LimitFunction;

  constructor(options: LlmClientOptions) {
    this.model = options.model;
    this.config = options.config;
    this.cache = options.cache;
    this.clock = options.clock ?? systemClock;
    this.rateLimiter =
      options.rateLimiter ??
      new TokenBucketRateLimiter(
        options.config.requestsPerMinute,
        this.clock,
        options.config.burst ?? options.config.requestsPerMinute,
      );
    this.usage = options.usage ?? new UsageMeter(options.config.prices);
    this.random = options.random ?? Math.random;
    this.limit = pLimit(options.config.concurrency);
  }

  /** The cache key of a request (what `complete` looks up). */
  cacheKey(messages: readonly LlmMessage[]): string {
    const { provider, model, temperature, maxTokens } = this.config;
    return llmCacheKey({ provider, model, messages, params: { temperature, maxTokens } });
  }

  async complete(messages: readonly LlmMessage[]): Promise<LlmReply> {
    const modelName = this.config.model;
    const key = this.cacheKey(messages);
    if (this.cache && this.config.cache) {
      const hit = await this.cache.get(key);
      if (hit !== undefined) {
        this.usage.count(modelName, 'cacheHits');
        return { text: hit, cached: true, attempts: 0 };
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const text = await this.limit(() => this.send(messages));
        await this.cache?.put(key, text);
        return { text, cached: false, attempts: attempt + 1 };
      } catch (thrown) {
        const error = classifyLlmError(thrown);
        if (!error) throw thrown;
        if (!error.retryable || attempt >= this.config.maxRetries) {
          this.usage.count(modelName, 'failures');
          throw attempt === 0
            ? error
            : new LlmError(error.category, `${error.message} (after ${attempt + 1} attempts)`);
        }
        this.usage.count(modelName, 'retries');
        await this.clock.sleep(retryDelayMs(attempt, this.config.backoff, this.random, error.retryAfterMs));
      }
    }
  }

  /** One request, inside a concurrency slot. */
  private async send(messages: readonly LlmMessage[]): Promise<string> {
    await this.rateLimiter.acquire();
    this.usage.count(this.config.model, 'requests');
    const reply = await this.withTimeout(this.model.invoke(toLangChainMessages(messages)));
    const usage = reply.usage_metadata;
    if (usage) this.usage.addTokens(this.config.model, usage.input_tokens, usage.output_tokens);
    return typeof reply.content === 'string' ? reply.content : reply.text;
  }

  /**
   * Gives up on a call after timeoutMs. The signal is not passed to `invoke` (ChatMistralAI
   * would switch to streaming); the provider transports abort the socket themselves at the
   * same deadline (chat-model.ts).
   */
  private async withTimeout<T>(call: Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.config.timeoutMs);
    call.catch(() => undefined); // once abandoned, its late failure must not go unhandled
    let onAbort = (): void => undefined;
    const timedOut = new Promise<never>((_, reject) => {
      onAbort = () => reject(new LlmError('llm:timeout', `no reply within ${this.config.timeoutMs} ms`));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([call, timedOut]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}
