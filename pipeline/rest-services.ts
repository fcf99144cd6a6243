import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load.js';
import { templateSynthesizer } from '../generators/rest/synthesis.js';
import type { LlmCache } from '../generators/llm/cache.js';
import type { RateLimiter } from '../generators/llm/rate-limiter.js';
import type { UsageMeter } from '../generators/llm/usage.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import type { RestServices } from './runner/rest.js';

/**
 * REST's synthesizer, judge and dedup agent as the config asks for them: without an `llm`
 * block, the template synthesizer alone (no judge, no agent); with one, the LLM services
 * (rest-llm-services.ts).
 */
export interface RestServiceHandle {
  services: RestServices;
  /** The run's LLM usage, when an LLM is configured. */
  usage: UsageMeter | null;
  close(): void;
}

export interface RestServiceOptions {
  /** Default: createChatModel(config.llm) — tests pass a scripted model. */
  model?: BaseChatModel;
  env?: NodeJS.ProcessEnv;
  /** The reply cache and rate limit shared by every worker (the queue backend's, in Redis); default: a cache file in the cache dir, a limit of this process. */
  shared?: { cache: LlmCache; rateLimiter: RateLimiter };
}

/** LangChain and the providers' SDKs take most of a second to load: only runs with an LLM load them. */
export async function restServices(config: Config, executor: SqlExecutor, options: RestServiceOptions = {}): Promise<RestServiceHandle> {
  if (config.rest.synthesizer === 'llm' && !config.llm) throw new ConfigError('rest.synthesizer is "llm" but no llm is configured (--llm-provider, or an llm block in the config file)');
  if (!config.llm) {
    return { services: { synthesizer: templateSynthesizer, fallback: null, judge: null, dedupAgent: null, dedupFingerprint: null }, usage: null, close: () => {} };
  }
  const { llmRestServices } = await import('./rest-llm-services.js');
  return llmRestServices(config, config.llm, executor, options);
}
