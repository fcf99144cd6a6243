import { deadline, sharedOptions, utf8BodyFetch, type LlmProviderEntry } from './provider-entry.js';

/**
 * The LLM providers, one entry each: the single source of truth that the config schema's
 * `llm.provider` enum (config.ts), createChatModel (chat-model.ts) and the CLI's
 * --llm-provider choices and help derive from. A new provider is one entry here (or a
 * module of its own, imported here). Keys are in the order --help lists them.
 */
export const PROVIDERS = {
  /** Base URL: without `/v1` (the SDK appends `/v1/chat/completions`); default https://api.mistral.ai. */
  mistral: {
    apiKey: { env: 'MISTRAL_API_KEY', optionalWithBaseUrl: false },
    async create(settings, apiKey) {
      const { ChatMistralAI } = await import('@langchain/mistralai');
      return new ChatMistralAI({
        ...sharedOptions(settings),
        apiKey,
        maxTokens: settings.maxTokens,
        serverURL: settings.baseUrl,
        beforeRequestHooks: [
          (request: Request) => new Request(request, { signal: deadline(request.signal, settings.timeoutMs) }),
        ],
      });
    },
  },
  /**
   * Any OpenAI-compatible server. Base URL: up to `/v1` (http://localhost:8000/v1 for vLLM);
   * default the SDK's (OPENAI_BASE_URL, else https://api.openai.com/v1).
   */
  openai: {
    // Local OpenAI-compatible servers (vLLM, llama.cpp, LM Studio) accept any key.
    apiKey: { env: 'OPENAI_API_KEY', optionalWithBaseUrl: true },
    async create(settings, apiKey) {
      const { ChatOpenAI } = await import('@langchain/openai');
      return new ChatOpenAI({
        ...sharedOptions(settings),
        apiKey,
        maxTokens: settings.maxTokens,
        timeout: settings.timeoutMs,
        configuration: { fetch: utf8BodyFetch, ...(settings.baseUrl ? { baseURL: settings.baseUrl } : {}) },
      });
    },
  },
  /** Base URL: default the SDK's (OLLAMA_BASE_URL, else http://127.0.0.1:11434). */
  ollama: {
    apiKey: null,
    async create(settings) {
      const { ChatOllama } = await import('@langchain/ollama');
      return new ChatOllama({
        ...sharedOptions(settings),
        numPredict: settings.maxTokens,
        baseUrl: settings.baseUrl,
        fetch: (input, init) =>
          utf8BodyFetch(input, { ...init, signal: deadline(init?.signal ?? undefined, settings.timeoutMs) }),
      });
    },
  },
} satisfies Record<string, LlmProviderEntry>;

export type LlmProviderName = keyof typeof PROVIDERS;

/** The registry's names, as zod's and commander's choice lists want them (Object.keys forgets the key type). */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [LlmProviderName, ...LlmProviderName[]];
