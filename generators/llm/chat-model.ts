import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatMistralAI } from '@langchain/mistralai';
import { ChatOllama } from '@langchain/ollama';
import { ChatOpenAI } from '@langchain/openai';
import type { LlmConfig } from './config.js';

/**
 * The chat model for a config. Retries are ours alone (LlmClient), so every provider's own
 * retry loop is switched off. The request timeout is enforced twice on purpose: LlmClient
 * gives up on the call after `timeoutMs`, and here each provider's transport aborts the
 * socket at the same deadline so that an abandoned request does not linger. (LlmClient does
 * not pass an AbortSignal to `invoke`: ChatMistralAI switches to streaming when it sees one.)
 *
 * The API key is read from `env` only and handed straight to the provider; it is never part
 * of an error message, a log line or a cache key.
 */
export function createChatModel(config: LlmConfig, env: NodeJS.ProcessEnv = process.env): BaseChatModel {
  switch (config.provider) {
    case 'mistral':
      return new ChatMistralAI({
        apiKey: requiredKey(env, 'MISTRAL_API_KEY'),
        model: config.model,
        temperature: config.temperature,
        maxTokens: config.maxTokens,
        serverURL: config.baseUrl,
        maxRetries: 0,
        beforeRequestHooks: [(request: Request) => new Request(request, { signal: deadline(request.signal, config.timeoutMs) })],
      });
    case 'openai':
      return new ChatOpenAI({
        // Local OpenAI-compatible servers (vLLM, llama.cpp, LM Studio) accept any key.
        apiKey: env.OPENAI_API_KEY || (config.baseUrl ? 'unused' : requiredKey(env, 'OPENAI_API_KEY')),
        model: config.model,
        temperature: config.temperature,
        maxTokens: config.maxTokens,
        timeout: config.timeoutMs,
        maxRetries: 0,
        configuration: config.baseUrl ? { baseURL: config.baseUrl } : undefined,
      });
    case 'ollama':
      return new ChatOllama({
        model: config.model,
        temperature: config.temperature,
        numPredict: config.maxTokens,
        baseUrl: config.baseUrl,
        maxRetries: 0,
        fetch: (input, init) => fetch(input, { ...init, signal: deadline(init?.signal ?? undefined, config.timeoutMs) }),
      });
  }
}

function requiredKey(env: NodeJS.ProcessEnv, name: string): string {
  const key = env[name];
  if (!key) throw new Error(`${name} is not set: the LLM provider's API key is read from the environment only`);
  return key;
}

function deadline(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}
