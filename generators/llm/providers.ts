import { JsonBodyEncoder } from './json-body.js';
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
      const { ChatOpenAI, ChatOpenAICompletions, ChatOpenAIResponses } = await import('@langchain/openai');
      const fields = {
        ...sharedOptions(settings),
        apiKey,
        maxTokens: settings.maxTokens,
        timeout: settings.timeoutMs,
        configuration: { fetch: utf8BodyFetch, ...(settings.baseUrl ? { baseURL: settings.baseUrl } : {}) },
      };
      // One part per API it speaks, each with its own SDK client: made here to encode their bodies.
      const completions = new ChatOpenAICompletions(fields);
      const responses = new ChatOpenAIResponses(fields);
      for (const api of [completions, responses]) encodeBodiesOf(api);
      return new ChatOpenAI({ ...fields, completions, responses });
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

/** What the OpenAI SDK's client makes of a request's body (its `buildBody`, private to the SDK). */
type BuildBody = (args: { options: { body?: unknown; headers?: unknown } }) => {
  bodyHeaders: Record<string, string> | undefined;
  body: unknown;
  isStreamingBody: boolean;
};

const openAiBodies = new JsonBodyEncoder();

/**
 * The SDK client of a part of ChatOpenAI (made on first use: made now) with its JSON request
 * bodies encoded by JsonBodyEncoder, a long system prompt's part once (json-body.ts), instead
 * of the SDK's JSON.stringify of the whole; the bytes are the same. Only a plain object with no
 * headers of its own (a chat completion) is encoded here: the SDK encodes anything else, and
 * an SDK without that method is left as it is.
 */
function encodeBodiesOf(api: { _getClientOptions(options: undefined): unknown; client: object }): void {
  api._getClientOptions(undefined);
  const client = api.client as { buildBody?: BuildBody };
  const own = client.buildBody;
  if (typeof own !== 'function') return;
  client.buildBody = (args) => {
    const { body, headers } = args.options;
    if (
      headers !== undefined ||
      body === null ||
      typeof body !== 'object' ||
      Object.getPrototypeOf(body) !== Object.prototype
    )
      return own.call(client, args);
    return {
      bodyHeaders: { 'content-type': 'application/json' },
      body: openAiBodies.encode(body),
      isStreamingBody: false,
    };
  };
}

export type LlmProviderName = keyof typeof PROVIDERS;

/** The registry's names, as zod's and commander's choice lists want them (Object.keys forgets the key type). */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [LlmProviderName, ...LlmProviderName[]];
