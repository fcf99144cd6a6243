/** The LLM layer: provider factory, the client every call goes through, structured outputs. */
export {
  LlmConfigSchema,
  LlmProviderSchema,
  ModelPriceSchema,
  type LlmConfig,
  type LlmConfigInput,
  type LlmProvider,
  type ModelPrice,
} from './config.js';
export { createChatModel } from './chat-model.js';
export { PROVIDER_NAMES, PROVIDERS, type LlmProviderName } from './providers.js';
export { type ApiKeyRule, type LlmProviderEntry, type ProviderSettings } from './provider-entry.js';
export { LlmClient, type LlmClientOptions, type LlmReply } from './client.js';
export { llmCacheKey, MemoryLlmCache, type CacheKeyInput, type LlmCache } from './cache.js';
export { SqliteLlmCache } from './sqlite-cache.js';
export { TokenBucketRateLimiter, type RateLimiter } from './rate-limiter.js';
export { systemClock, type Clock } from './clock.js';
export { retryDelayMs, type BackoffPolicy } from './backoff.js';
export { UsageMeter, type UsageSnapshot, type UsageTotals } from './usage.js';
export {
  classifyLlmError,
  LlmError,
  type LlmCallFailure,
  type LlmFailureCategory,
  type LlmReplyFailure,
} from './errors.js';
export { toLangChainMessages, type LlmMessage } from './messages.js';
export { repairJson } from './json-repair.js';
export {
  completeStructured,
  failureFeedback,
  parseStructured,
  type StructuredFailure,
  type StructuredResult,
} from './structured.js';
