import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { MissingApiKeyError } from './errors.js';
import type { LlmConfig } from './config.js';
import type { ApiKeyRule, LlmProviderEntry, ProviderSettings } from './provider-entry.js';
import { PROVIDERS } from './providers.js';

/**
 * The chat model for a config, built by its provider's entry in PROVIDERS (which imports
 * only that provider's LangChain package). Retries are ours alone (LlmClient), so every
 * provider's own retry loop is switched off. The request timeout is enforced twice on
 * purpose: LlmClient gives up on the call after `timeoutMs`, and each provider's transport
 * aborts the socket at the same deadline so that an abandoned request does not linger.
 * (LlmClient does not pass an AbortSignal to `invoke`: ChatMistralAI switches to streaming
 * when it sees one.)
 *
 * The API key is read from `env` only, as the entry's rule says, and handed straight to the
 * provider; it is never part of an error message, a log line or a cache key. `providers`:
 * the registry to build from (tests add scripted entries).
 */
export async function createChatModel(
  config: LlmConfig,
  env: NodeJS.ProcessEnv = process.env,
  providers: Readonly<Record<string, LlmProviderEntry>> = PROVIDERS,
): Promise<BaseChatModel> {
  const provider = providers[config.provider];
  return provider.create(config, provider.apiKey ? apiKey(provider.apiKey, config, env) : undefined);
}

function apiKey(rule: ApiKeyRule, settings: ProviderSettings, env: NodeJS.ProcessEnv): string {
  const key = env[rule.env];
  if (key) return key;
  if (rule.optionalWithBaseUrl && settings.baseUrl) return 'unused';
  throw new MissingApiKeyError(`${rule.env} is not set: the LLM provider's API key is read from the environment only`);
}
