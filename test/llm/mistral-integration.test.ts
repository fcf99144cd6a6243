import { z } from 'zod';
import { MemoryLlmCache } from '../../generators/llm/cache.js';
import { createChatModel } from '../../generators/llm/chat-model.js';
import { LlmClient } from '../../generators/llm/client.js';
import type { LlmConfigInput } from '../../generators/llm/config.js';
import { completeStructured } from '../../generators/llm/structured.js';
import { UsageMeter } from '../../generators/llm/usage.js';
import { FakeClock, llmConfig } from './helpers.js';
import { completion, errorReply, scriptedServerPerTest, type ScriptedResponse } from './scripted-server.js';

/**
 * The real @langchain/mistralai client (and @mistralai/mistralai under it) against a
 * scripted local server speaking Mistral's chat-completions protocol.
 */

const API_KEY = 'test-mistral-key';
const Answer = z.object({ operation: z.string(), params: z.array(z.string()) }).strict();
const GOOD = '{"operation": "getSchools", "params": ["county"]}';
const messages = [
  { role: 'system' as const, content: 'You write endpoint specs as JSON.' },
  { role: 'user' as const, content: 'Which schools are in Alameda county?' },
];

const startServer = scriptedServerPerTest();

async function setup(script: ScriptedResponse[], overrides: LlmConfigInput = {}) {
  const server = await startServer(script);
  const config = llmConfig({
    provider: 'mistral',
    model: 'mistral-large-latest',
    baseUrl: server.url,
    timeoutMs: 30_000 /* a hang guard: a loaded machine may answer slowly */,
    ...overrides,
  });
  const clock = new FakeClock(); // backoff waits are recorded, not slept
  const usage = new UsageMeter({ 'mistral-large-latest': { inputPerMTok: 2, outputPerMTok: 6 } });
  const client = new LlmClient({
    model: await createChatModel(config, { MISTRAL_API_KEY: API_KEY }),
    config,
    clock,
    usage,
    cache: new MemoryLlmCache(),
  });
  return { server, client, clock, usage };
}

describe('Mistral protocol through @langchain/mistralai', () => {
  test('a good reply: the request is a proper non-streaming chat completion; usage is accounted', async () => {
    const { server, client, usage } = await setup([completion(GOOD, { prompt_tokens: 1000, completion_tokens: 500 })]);
    const result = await completeStructured(client, messages, Answer);
    expect(result).toMatchObject({ ok: true, value: { operation: 'getSchools', params: ['county'] }, repaired: false });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body).toMatchObject({ model: 'mistral-large-latest', temperature: 0, messages });
    expect(request.body.stream).toBeFalsy();
    expect(usage.snapshot().total).toMatchObject({ requests: 1, inputTokens: 1000, outputTokens: 500, costUsd: 0.005 });
  });

  test('an unchanged prompt is answered from the cache: no second request', async () => {
    const { server, client } = await setup([completion(GOOD)]);
    await completeStructured(client, messages, Answer);
    expect(await completeStructured(client, messages, Answer)).toMatchObject({ ok: true, cached: true });
    expect(server.requests).toHaveLength(1);
  });

  test('a reply in code fences is repaired', async () => {
    const { client } = await setup([
      completion('Here you go:\n```json\n{"operation": "getSchools", "params": ["county",],}\n```'),
    ]);
    expect(await completeStructured(client, messages, Answer)).toMatchObject({
      ok: true,
      value: { params: ['county'] },
      repaired: true,
    });
  });

  test('invalid JSON → llm:invalid_json, no retry', async () => {
    const { server, client } = await setup([completion('{"operation": getSchools')]);
    expect(await completeStructured(client, messages, Answer)).toMatchObject({
      ok: false,
      category: 'llm:invalid_json',
      raw: '{"operation": getSchools',
    });
    expect(server.requests).toHaveLength(1);
  });

  test('a hallucinated shape → llm:schema', async () => {
    const { client } = await setup([
      completion('{"operation": "getSchools", "params": ["county"], "sql": "DROP TABLE x"}'),
    ]);
    expect(await completeStructured(client, messages, Answer)).toMatchObject({ ok: false, category: 'llm:schema' });
  });

  test('429 with Retry-After, then success', async () => {
    const { server, client, clock } = await setup([errorReply(429, { 'retry-after': '3' }), completion(GOOD)]);
    expect(await completeStructured(client, messages, Answer)).toMatchObject({ ok: true });
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toHaveLength(1);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(3000);
  });

  test('500s until retries are exhausted → llm:server_error', async () => {
    const { server, client, usage } = await setup([errorReply(500)], { maxRetries: 2 });
    expect(await completeStructured(client, messages, Answer)).toMatchObject({
      ok: false,
      category: 'llm:server_error',
    });
    expect(server.requests).toHaveLength(3);
    expect(usage.snapshot().total).toMatchObject({ requests: 3, retries: 2, failures: 1 });
  });

  test('a 401 is not retried → llm:client_error, and the key is not in the message', async () => {
    const { server, client } = await setup([errorReply(401)]);
    const result = await completeStructured(client, messages, Answer);
    expect(result).toMatchObject({ ok: false, category: 'llm:client_error' });
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(server.requests).toHaveLength(1);
  });

  test('a reply slower than the timeout → llm:timeout, and the connection is cut', async () => {
    const { server, client } = await setup([{ ...completion(GOOD), delayMs: 30_000 }], {
      timeoutMs: 200,
      maxRetries: 0,
    });
    expect(await completeStructured(client, messages, Answer)).toMatchObject({ ok: false, category: 'llm:timeout' });
    // The socket is cut at the deadline; on a loaded CI machine its close may take a while to be seen.
    for (let i = 0; i < 1000 && !server.requests[0]?.abandoned; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.requests[0].abandoned).toBe(true);
  });

  test('a server that is not there → llm:network', async () => {
    const { server, client } = await setup([completion(GOOD)], { maxRetries: 1 });
    await server.close();
    expect(await completeStructured(client, messages, Answer)).toMatchObject({ ok: false, category: 'llm:network' });
  });
});
