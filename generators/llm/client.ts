import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import pLimit, { type LimitFunction } from 'p-limit';
import { retryDelayMs } from './backoff.js';
import { llmCacheKey, type LlmCache } from './cache.js';
import { systemClock, type Clock } from './clock.js';
import type { LlmConfig } from './config.js';
import { classifyLlmError, LlmError } from './errors.js';
import { toLangChainMessages, type LlmMessage, type LlmToolCall } from './messages.js';
import type { ToolSpec } from '../../core/model.js';
import { llmLimits } from './limits.js';
import { TokenBucketRateLimiter, UNLIMITED, type RateLimiter } from './rate-limiter.js';
import { UsageMeter } from './usage.js';

export interface LlmClientOptions {
  /** From createChatModel (or a fake in tests). */
  model: BaseChatModel;
  config: LlmConfig;
  /** Without one, nothing is cached. */
  cache?: LlmCache;
  /** Default: an in-process token bucket at the config's rate (limits.ts; none for a local server). */
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

/** A reply that may call tools natively (`chat` with tools bound). */
export interface LlmChatReply extends LlmReply {
  toolCalls: LlmToolCall[];
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
  private readonly bound = new WeakMap<readonly ToolSpec[], Pick<BaseChatModel, 'invoke'>>();

  constructor(options: LlmClientOptions) {
    this.model = options.model;
    this.config = options.config;
    this.cache = options.cache;
    this.clock = options.clock ?? systemClock;
    const limits = llmLimits(options.config);
    this.rateLimiter =
      options.rateLimiter ??
      (limits.requestsPerMinute === null
        ? UNLIMITED
        : new TokenBucketRateLimiter(
            limits.requestsPerMinute,
            this.clock,
            options.config.burst ?? limits.requestsPerMinute,
          ));
    this.usage = options.usage ?? new UsageMeter(options.config.prices);
    this.random = options.random ?? Math.random;
    this.limit = pLimit(limits.concurrency);
  }

  /**
   * The cache key of a request (what `complete` looks up). `sample` > 0 asks for another
   * sample of the same prompt (an evaluation's repeats): its own cache entry.
   */
  cacheKey(messages: readonly LlmMessage[], extra: Record<string, unknown> = {}, sample = 0): string {
    const { provider, model, temperature, maxTokens } = this.config;
    const params = { temperature, maxTokens, ...extra, ...(sample > 0 ? { sample } : {}) };
    return llmCacheKey({ provider, model, messages, params });
  }

  async complete(messages: readonly LlmMessage[], sample = 0): Promise<LlmReply> {
    return this.request(this.cacheKey(messages, {}, sample), () => this.send(messages), {
      encode: (text) => text,
      decode: (text) => text,
    }).then(({ value, cached, attempts }) => ({ text: value, cached, attempts }));
  }

  /**
   * A chat turn with `tools` bound as native tools (OpenAI function format; the provider's
   * own tool-calling API): the reply's text and its tool calls, cached like `complete`'s
   * (the tools are part of the key).
   */
  async chat(messages: readonly LlmMessage[], tools: readonly ToolSpec[], sample = 0): Promise<LlmChatReply> {
    const key = this.cacheKey(messages, { tools }, sample);
    type Turn = { text: string; toolCalls: LlmToolCall[] };
    const { value, cached, attempts } = await this.request<Turn>(key, () => this.send(messages, tools), {
      encode: (turn) => JSON.stringify(turn),
      decode: (text) => JSON.parse(text) as Turn,
    });
    return { ...value, cached, attempts };
  }

  /** The cache, then requests with retries; `send` makes one request. */
  private async request<T>(
    key: string,
    send: () => Promise<T>,
    codec: { encode(value: T): string; decode(text: string): T },
  ): Promise<{ value: T; cached: boolean; attempts: number }> {
    const modelName = this.config.model;
    if (this.cache && this.config.cache) {
      const hit = await this.cache.get(key);
      if (hit !== undefined) {
        this.usage.count(modelName, 'cacheHits');
        return { value: codec.decode(hit), cached: true, attempts: 0 };
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const value = await this.limit(send);
        await this.cache?.put(key, codec.encode(value));
        return { value, cached: false, attempts: attempt + 1 };
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

  /** One request, inside a concurrency slot: the text, or with tools, the text and the tool calls. */
  private async send(messages: readonly LlmMessage[]): Promise<string>;
  private async send(
    messages: readonly LlmMessage[],
    tools: readonly ToolSpec[],
  ): Promise<{ text: string; toolCalls: LlmToolCall[] }>;
  private async send(
    messages: readonly LlmMessage[],
    tools?: readonly ToolSpec[],
  ): Promise<string | { text: string; toolCalls: LlmToolCall[] }> {
    await this.rateLimiter.acquire();
    this.usage.count(this.config.model, 'requests');
    const model = tools ? this.withTools(tools) : this.model;
    const reply = await this.withTimeout(model.invoke(await toLangChainMessages(messages)));
    const usage = reply.usage_metadata;
    if (usage) this.usage.addTokens(this.config.model, usage.input_tokens, usage.output_tokens);
    const text = typeof reply.content === 'string' ? reply.content : reply.text;
    if (!tools) return text;
    const toolCalls = (reply.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.name, args: c.args }));
    return { text, toolCalls };
  }

  /**
   * The model with `tools` bound, once per list: binding converts every spec to the
   * provider's format, and the same list comes with many requests (an evaluation's SLOT
   * database with each of its items, an item with each of its turns and repeats).
   */
  private withTools(tools: readonly ToolSpec[]): Pick<BaseChatModel, 'invoke'> {
    let bound = this.bound.get(tools);
    if (!bound) this.bound.set(tools, (bound = bindTools(this.model, tools)));
    return bound;
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

/** The model with native tools bound (every LangChain chat model with tool calling has `bindTools`). */
function bindTools(model: BaseChatModel, tools: readonly ToolSpec[]): Pick<BaseChatModel, 'invoke'> {
  if (!model.bindTools) throw new LlmError('llm:client_error', 'this model does not support native tool calls');
  return model.bindTools([...tools]);
}
