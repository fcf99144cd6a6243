import { ChatMistralAI } from '@langchain/mistralai';
import { ChatOllama } from '@langchain/ollama';
import { ChatOpenAI } from '@langchain/openai';
import { createChatModel } from '../../generators/llm/chat-model.js';
import { describeLimits, llmLimits } from '../../generators/llm/limits.js';
import { LlmConfigSchema } from '../../generators/llm/config.js';

const SECRET = 'sk-test-SECRET-value-1234';

describe('LlmConfigSchema', () => {
  test('defaults: Mistral, deterministic temperature, bounded retries', () => {
    expect(LlmConfigSchema.parse({})).toMatchObject({
      provider: 'mistral',
      model: 'mistral-large-latest',
      temperature: 0,
      maxRetries: 4,
      cache: true,
    });
  });

  test('request limits: hosted defaults, none for a server on this machine, a setting always wins', () => {
    const limits = (input: object) => llmLimits(LlmConfigSchema.parse(input));
    expect(limits({})).toEqual({ requestsPerMinute: 60, concurrency: 4, local: false });
    expect(limits({ provider: 'openai', baseUrl: 'https://api.example.com/v1' })).toMatchObject({
      requestsPerMinute: 60,
    });
    for (const baseUrl of ['http://127.0.0.1:8000/v1', 'http://localhost:11434', 'http://[::1]:8080/v1'])
      expect(limits({ provider: 'openai', baseUrl })).toEqual({
        requestsPerMinute: null,
        concurrency: 256,
        local: true,
      });
    expect(limits({ provider: 'ollama' }).local).toBe(true);
    expect(limits({ provider: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', requestsPerMinute: 30 })).toMatchObject({
      requestsPerMinute: 30,
      local: true,
    });
    expect(describeLimits(LlmConfigSchema.parse({}))).toMatch(/^60 requests\/min, 4 in flight \(hosted defaults/);
    expect(describeLimits(LlmConfigSchema.parse({ provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1' }))).toMatch(
      /^no request-rate limit, no in-flight limit \(a server on this machine/,
    );
  });

  test('an API key has no place in the config', () => {
    expect(LlmConfigSchema.safeParse({ apiKey: SECRET }).success).toBe(false);
  });

  test('rejects bad values', () => {
    for (const bad of [
      { provider: 'anthropic' },
      { baseUrl: 'not a url' },
      { timeoutMs: 0 },
      { prices: { m: { inputPerMTok: -1, outputPerMTok: 0 } } },
    ]) {
      expect(LlmConfigSchema.safeParse(bad).success).toBe(false);
    }
  });
});

describe('createChatModel', () => {
  test('mistral (default) with its retries off and the key from the environment', async () => {
    const model = await createChatModel(LlmConfigSchema.parse({ baseUrl: 'http://127.0.0.1:9' }), {
      MISTRAL_API_KEY: SECRET,
    });
    expect(model).toBeInstanceOf(ChatMistralAI);
    const mistral = model as ChatMistralAI;
    expect(mistral.model).toBe('mistral-large-latest');
    expect(mistral.serverURL).toBe('http://127.0.0.1:9');
    expect(mistral.maxRetries).toBe(0);
  });

  test('openai-compatible with a base URL needs no key; without one it does', async () => {
    const model = await createChatModel(
      LlmConfigSchema.parse({ provider: 'openai', model: 'qwen', baseUrl: 'http://127.0.0.1:9/v1' }),
      {},
    );
    expect(model).toBeInstanceOf(ChatOpenAI);
    await expect(createChatModel(LlmConfigSchema.parse({ provider: 'openai', model: 'gpt-4o' }), {})).rejects.toThrow(
      /OPENAI_API_KEY is not set/,
    );
  });

  test('ollama needs no key', async () => {
    const model = await createChatModel(LlmConfigSchema.parse({ provider: 'ollama', model: 'llama3.1' }), {});
    expect(model).toBeInstanceOf(ChatOllama);
  });

  test('a missing key is named, never shown; a present key never leaks into the serialized model', async () => {
    await expect(createChatModel(LlmConfigSchema.parse({}), {})).rejects.toThrow(/MISTRAL_API_KEY is not set/);
    for (const [provider, env] of [
      ['mistral', { MISTRAL_API_KEY: SECRET }],
      ['openai', { OPENAI_API_KEY: SECRET }],
    ] as const) {
      const model = await createChatModel(LlmConfigSchema.parse({ provider, model: 'm' }), env);
      expect(JSON.stringify(model)).not.toContain(SECRET);
    }
  });
});
