import { z } from 'zod';
import { LlmClient } from '../../generators/llm/client.js';
import { repairJson } from '../../generators/llm/json-repair.js';
import { completeStructured, failureFeedback, parseStructured } from '../../generators/llm/structured.js';
import { FakeClock, httpError, llmConfig, ScriptedChatModel, type Step } from './helpers.js';

const Endpoint = z.object({ name: z.string().regex(/^[a-zA-Z0-9_-]+$/), params: z.array(z.string()) }).strict();

describe('repairJson', () => {
  test.each([
    ['```json\n{"a": 1}\n```', '{"a": 1}'],
    ['```\n[1, 2]\n```', '[1, 2]'],
    ['Here it is:\n```json\n{"a": 1}\n```\nHope this helps.', '{"a": 1}'],
    ['Sure! {"a": {"b": [1, 2]}} is the answer.', '{"a": {"b": [1, 2]}}'],
    ['{"a": [1, 2,], "b": {"c": 3,},}', '{"a": [1, 2], "b": {"c": 3}}'],
    ['{"s": "a } or ] and ,} stay", "t": "quote \\" {",}', '{"s": "a } or ] and ,} stay", "t": "quote \\" {"}'],
    ['[{"a": 1},\n {"a": 2},\n]', '[{"a": 1},\n {"a": 2}\n]'],
  ])('%j → %j', (input, expected) => {
    expect(repairJson(input)).toBe(expected);
  });

  test('nothing JSON-like → undefined', () => {
    expect(repairJson('I cannot help with that.')).toBeUndefined();
  });
});

describe('parseStructured', () => {
  test('valid JSON needs no repair', () => {
    expect(parseStructured('{"name": "getX", "params": []}', Endpoint)).toEqual({
      ok: true,
      value: { name: 'getX', params: [] },
      raw: '{"name": "getX", "params": []}',
      repaired: false,
      cached: false,
    });
  });

  test('fenced JSON with a trailing comma is repaired once', () => {
    const result = parseStructured('```json\n{"name": "getX", "params": ["id",],}\n```', Endpoint);
    expect(result).toMatchObject({ ok: true, value: { name: 'getX', params: ['id'] }, repaired: true });
  });

  test('unrepairable text → llm:invalid_json, with the raw reply kept', () => {
    const result = parseStructured('{"name": "getX", "params": [', Endpoint);
    expect(result).toEqual({
      ok: false,
      category: 'llm:invalid_json',
      message: expect.any(String),
      raw: '{"name": "getX", "params": [',
    });
  });

  test("parses but does not match → llm:schema with zod's message", () => {
    const result = parseStructured('{"name": "get x", "params": [1]}', Endpoint);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.category).toBe('llm:schema');
    expect(result.message).toContain('name');
    expect(result.message).toContain('params[0]');
  });

  test('never evaluates anything', () => {
    const g = globalThis as { pwned?: boolean };
    for (const reply of [
      '{"a": (function(){ globalThis.pwned = true; return 1 })()}',
      '({a: 1})',
      "{'a': 1}",
      '{a: 1}',
    ]) {
      expect(parseStructured(reply, z.unknown())).toMatchObject({ ok: false, category: 'llm:invalid_json' });
    }
    expect(g.pwned).toBeUndefined();
  });
});

describe('completeStructured', () => {
  const ask = [{ role: 'user' as const, content: 'make an endpoint' }];
  const clientFor = (steps: Step[], maxRetries = 1) =>
    new LlmClient({ model: new ScriptedChatModel(steps), config: llmConfig({ maxRetries }), clock: new FakeClock() });

  test('a good reply', async () => {
    const result = await completeStructured(clientFor(['{"name":"getX","params":["a"]}']), ask, Endpoint);
    expect(result).toMatchObject({ ok: true, value: { name: 'getX', params: ['a'] }, cached: false });
  });

  test.each([
    [[httpError(429)], 'llm:rate_limited'],
    [[httpError(500)], 'llm:server_error'],
    [[httpError(400)], 'llm:client_error'],
    [[Object.assign(new Error('x'), { code: 'ECONNRESET' })], 'llm:network'],
    [['nope'], 'llm:invalid_json'],
    [['{"name": 1}'], 'llm:schema'],
  ] as [Step[], string][])('%s → %s', async (steps, category) => {
    const result = await completeStructured(clientFor(steps), ask, Endpoint);
    expect(result).toMatchObject({ ok: false, category });
  });

  test('a failure fed back to the next attempt leads to a valid reply', async () => {
    const model = new ScriptedChatModel(['{"name": "bad name", "params": []}', '{"name": "good_name", "params": []}']);
    const client = new LlmClient({ model, config: llmConfig() });
    const first = await completeStructured(client, ask, Endpoint);
    expect(first.ok).toBe(false);
    if (first.ok) return;
    const feedback = failureFeedback(first);
    expect(feedback[0]).toEqual({ role: 'assistant', content: '{"name": "bad name", "params": []}' });
    expect(feedback[1].role).toBe('user');
    expect(feedback[1].content).toContain('did not match');
    const second = await completeStructured(client, [...ask, ...feedback], Endpoint);
    expect(second).toMatchObject({ ok: true, value: { name: 'good_name' } });
    expect(model.received[1].map((m) => m.content)).toEqual([ask[0].content, feedback[0].content, feedback[1].content]);
  });

  test('a call failure gives feedback without an assistant turn', () => {
    expect(failureFeedback({ ok: false, category: 'llm:timeout', message: 'no reply within 5 ms' })).toEqual([
      { role: 'user', content: expect.stringContaining('llm:timeout') },
    ]);
  });
});
