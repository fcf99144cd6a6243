import { z } from 'zod';
import { createChatModel } from '../../generators/llm/chat-model.js';
import { LlmClient } from '../../generators/llm/client.js';
import type { LlmConfigInput } from '../../generators/llm/config.js';
import { completeStructured } from '../../generators/llm/structured.js';
import { FakeClock, llmConfig } from './helpers.js';
import { completion, errorReply, scriptedServerPerTest, type ScriptedResponse } from './scripted-server.js';

/** The OpenAI-compatible path (vLLM, llama.cpp, LM Studio): the real @langchain/openai client against a scripted server. */

const Answer = z.object({ operation: z.string() }).strict();
const messages = [{ role: 'user' as const, content: 'Name the endpoint.' }];

const startServer = scriptedServerPerTest();

async function setup(script: ScriptedResponse[], overrides: LlmConfigInput = {}) {
  const server = await startServer(script);
  const config = llmConfig({
    provider: 'openai',
    model: 'qwen2.5-coder',
    baseUrl: `${server.url}/v1`,
    timeoutMs: 30_000 /* a hang guard: a loaded machine may answer slowly */,
    ...overrides,
  });
  const clock = new FakeClock();
  const client = new LlmClient({ model: await createChatModel(config, {}), config, clock });
  return { server, client, clock };
}

describe('OpenAI-compatible protocol through @langchain/openai', () => {
  test('a good reply, with usage; no key needed for a local server', async () => {
    const { server, client } = await setup([
      completion('{"operation": "getSchools"}', { prompt_tokens: 7, completion_tokens: 3 }),
    ]);
    expect(await completeStructured(client, messages, Answer)).toMatchObject({
      ok: true,
      value: { operation: 'getSchools' },
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'qwen2.5-coder', messages },
    });
    expect(client.usage.snapshot().total).toMatchObject({ requests: 1, inputTokens: 7, outputTokens: 3 });
  });

  test('a long prompt beyond ASCII arrives as written (the body goes as its UTF-8 bytes)', async () => {
    const { server, client } = await setup([completion('ok')]);
    const text = `Évidence: 東京 🚲 "quoted" \\ ${'x'.repeat(100_000)} lone \ud800 end ${'東京 🚲 '.repeat(20_000)}`;
    await client.complete([{ role: 'user', content: text }]);
    const sent = (server.requests[0].body as { messages: { content: string }[] }).messages[0].content;
    // JSON escapes the lone surrogate: it comes back as it was.
    expect(sent).toBe(text);
  });

  test('429 with Retry-After then success; 500s exhausted → llm:server_error', async () => {
    const retried = await setup([errorReply(429, { 'retry-after': '2' }), completion('{"operation": "x"}')]);
    expect(await completeStructured(retried.client, messages, Answer)).toMatchObject({ ok: true });
    expect(retried.server.requests).toHaveLength(2);
    expect(retried.clock.sleeps[0]).toBeGreaterThanOrEqual(2000);
    await retried.server.close();

    const exhausted = await setup([errorReply(500)], { maxRetries: 1 });
    expect(await completeStructured(exhausted.client, messages, Answer)).toMatchObject({
      ok: false,
      category: 'llm:server_error',
    });
    expect(exhausted.server.requests).toHaveLength(2);
  });

  test('a slow reply → llm:timeout', async () => {
    const { client } = await setup([{ ...completion('{"operation": "x"}'), delayMs: 5000 }], {
      timeoutMs: 200,
      maxRetries: 0,
    });
    expect(await completeStructured(client, messages, Answer)).toMatchObject({ ok: false, category: 'llm:timeout' });
  });
});
