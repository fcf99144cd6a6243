import { hashJson } from '../../core/hash.js';
import { llmCacheKey, MemoryLlmCache, type LlmCache } from '../../generators/llm/cache.js';
import { LlmClient, type LlmClientOptions } from '../../generators/llm/client.js';
import { LlmError } from '../../generators/llm/errors.js';
import type { LlmMessage } from '../../generators/llm/messages.js';
import { UsageMeter } from '../../generators/llm/usage.js';
import { FakeClock, httpError, llmConfig, ScriptedChatModel, type Step } from './helpers.js';

const ask = (q: string): LlmMessage[] => [
  { role: 'system', content: 'Answer in JSON.' },
  { role: 'user', content: q },
];

function client(steps: Step[], options: Partial<LlmClientOptions> = {}, model = new ScriptedChatModel(steps)) {
  const clock = new FakeClock();
  const llm = new LlmClient({ model, config: llmConfig(), clock, random: () => 1, ...options });
  return { llm, model, clock };
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('LlmClient', () => {
  test('sends the messages with their roles and returns the reply text', async () => {
    const { llm, model } = client(['{"a":1}']);
    const reply = await llm.complete(ask('q'));
    expect(reply).toEqual({ text: '{"a":1}', cached: false, attempts: 1 });
    expect(model.received[0].map((m) => [m.type, m.content])).toEqual([
      ['system', 'Answer in JSON.'],
      ['human', 'q'],
    ]);
  });

  describe('response cache', () => {
    test('an unchanged prompt makes no second call; a changed one does', async () => {
      const cache = new MemoryLlmCache();
      const { llm, model } = client(['first', 'second'], { cache });
      await llm.complete(ask('q1'));
      expect(await llm.complete(ask('q1'))).toEqual({ text: 'first', cached: true, attempts: 0 });
      expect(model.calls).toBe(1);
      expect((await llm.complete(ask('q2'))).text).toBe('second');
      expect(model.calls).toBe(2);
      expect(llm.usage.snapshot().total).toMatchObject({ requests: 2, cacheHits: 1 });
    });

    test('the key covers provider, model, messages and params, in any key order', () => {
      const base = new LlmClient({ model: new ScriptedChatModel(['x']), config: llmConfig() });
      const key = base.cacheKey(ask('q'));
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      const variant = (overrides: Parameters<typeof llmConfig>[0]) =>
        new LlmClient({ model: new ScriptedChatModel(['x']), config: llmConfig(overrides) }).cacheKey(ask('q'));
      expect(variant({ temperature: 0.5 })).not.toBe(key);
      expect(variant({ model: 'other' })).not.toBe(key);
      expect(variant({ provider: 'openai' })).not.toBe(key);
      expect(variant({ maxTokens: 100 })).not.toBe(key);
      // Knobs that do not change the reply do not change the key.
      expect(variant({ timeoutMs: 5, maxRetries: 0, concurrency: 9 })).toBe(key);
      expect(base.cacheKey(ask('q2'))).not.toBe(key);
      expect(base.cacheKey([{ content: 'q', role: 'user' }])).toBe(base.cacheKey([{ role: 'user', content: 'q' }]));
    });

    test('a long first message shared by many requests: the same keys as hashing each whole', () => {
      const tools = `Tools: ${JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ name: `t${i}`, d: 'é "q" \\ \u2028' })))}`;
      const conversations: LlmMessage[][] = [
        [
          { role: 'system', content: tools },
          { role: 'user', content: 'Question: a' },
        ],
        [
          { role: 'system', content: tools },
          { role: 'user', content: 'Question: b' },
        ],
        [{ content: tools, role: 'system' }],
        [
          { role: 'system', content: tools },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 't1', args: { x: [1, 'y'] } }] },
          { role: 'tool', content: '{"rows": []}', toolCallId: 'call_0' },
        ],
        [{ role: 'assistant', content: tools, toolCalls: [{ id: 'c', name: 't', args: {} }] }],
        [{ role: 'user', content: 'short' }],
      ];
      // A tool list bound natively: one array passed with every request (its text kept by reference).
      const bound = [{ type: 'function', function: { name: 't', parameters: { b: 1, a: [null, 'é'] } } }];
      for (const messages of conversations) {
        for (const params of [{}, { temperature: 0, tools: [{ type: 'function' }] }, { sample: 2 }, { tools: bound }]) {
          const input = { provider: 'mistral', model: 'm', messages, params };
          const whole = hashJson({ v: 1, provider: 'mistral', model: 'm', messages, params });
          // Twice: the second from the remembered prefix.
          expect([llmCacheKey(input), llmCacheKey(input)]).toEqual([whole, whole]);
        }
      }
    });

    test('cache: false calls again but still records the reply', async () => {
      const cache = new MemoryLlmCache();
      const { llm, model } = client(['a', 'b'], { cache, config: llmConfig({ cache: false }) });
      await llm.complete(ask('q'));
      await llm.complete(ask('q'));
      expect(model.calls).toBe(2);
      expect(await cache.get(llm.cacheKey(ask('q')))).toBe('b');
    });

    test('failures are not cached', async () => {
      const cache: LlmCache & { puts: number } = Object.assign(new MemoryLlmCache(), { puts: 0 });
      const put = cache.put.bind(cache);
      cache.put = async (k, v) => {
        cache.puts++;
        await put(k, v);
      };
      const { llm } = client([httpError(400)], { cache });
      await failure(llm.complete(ask('q')));
      expect(cache.puts).toBe(0);
    });
  });

  describe('retries', () => {
    test('429 honours Retry-After, 5xx backs off exponentially, then success', async () => {
      const { llm, model, clock } = client([
        httpError(429, { 'Retry-After': '7' }),
        httpError(503),
        httpError(502),
        'ok',
      ]);
      const reply = await llm.complete(ask('q'));
      expect(reply).toEqual({ text: 'ok', cached: false, attempts: 4 });
      expect(model.calls).toBe(4);
      // random() = 1: full jitter at its ceiling; Retry-After (7 s) is a floor.
      expect(clock.sleeps).toEqual([7000, 200, 400]);
      expect(llm.usage.snapshot().total).toMatchObject({ requests: 4, retries: 3, failures: 0 });
    });

    test('Retry-After as an HTTP date', async () => {
      const { llm, clock } = client([
        httpError(429, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }),
        'ok',
      ]);
      await llm.complete(ask('q'));
      expect(clock.sleeps[0]).toBeGreaterThan(55_000);
      expect(clock.sleeps[0]).toBeLessThanOrEqual(60_000);
    });

    test('jitter stays within [0, min(max, base·2^n)]', async () => {
      const { llm, clock } = client([httpError(500)], { random: () => 0.5, config: llmConfig({ maxRetries: 6 }) });
      await failure(llm.complete(ask('q')));
      expect(clock.sleeps).toEqual([50, 100, 200, 400, 500, 500]);
    });

    test('5xx until retries are exhausted ends in llm:server_error', async () => {
      const { llm, model } = client([httpError(500)], { config: llmConfig({ maxRetries: 2 }) });
      const error = await failure(llm.complete(ask('q')));
      expect(error.category).toBe('llm:server_error');
      expect(error.message).toContain('after 3 attempts');
      expect(model.calls).toBe(3);
      expect(llm.usage.snapshot().total).toMatchObject({ requests: 3, retries: 2, failures: 1 });
    });

    test('429 until retries are exhausted ends in llm:rate_limited', async () => {
      const { llm } = client([httpError(429)], { config: llmConfig({ maxRetries: 1 }) });
      expect((await failure(llm.complete(ask('q')))).category).toBe('llm:rate_limited');
    });

    test('network errors are retried', async () => {
      const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      const fetchFailed = new TypeError('fetch failed', { cause: refused });
      const { llm, model } = client([
        fetchFailed,
        Object.assign(new Error('socket'), { name: 'ConnectionError' }),
        'ok',
      ]);
      expect((await llm.complete(ask('q'))).text).toBe('ok');
      expect(model.calls).toBe(3);
      const exhausted = client([fetchFailed], { config: llmConfig({ maxRetries: 0 }) });
      expect((await failure(exhausted.llm.complete(ask('q')))).category).toBe('llm:network');
    });

    test('other 4xx are not retried', async () => {
      const { llm, model } = client([httpError(401), 'ok']);
      const error = await failure(llm.complete(ask('q')));
      expect(error.category).toBe('llm:client_error');
      expect(model.calls).toBe(1);
    });

    test('an uncategorized error is a bug: rethrown as is, not retried', async () => {
      const bug = new RangeError('boom');
      const { llm, model } = client([bug, 'ok']);
      await expect(llm.complete(ask('q'))).rejects.toBe(bug);
      expect(model.calls).toBe(1);
    });
  });

  test('a reply slower than timeoutMs ends in llm:timeout (and is retried like one)', async () => {
    const model = new ScriptedChatModel(['late'], { sleep: 300 });
    const { llm } = client([], { config: llmConfig({ timeoutMs: 20, maxRetries: 1 }) }, model);
    const error = await failure(llm.complete(ask('q')));
    expect(error.category).toBe('llm:timeout');
    expect(model.calls).toBe(2);
  });

  test('at most `concurrency` requests are in flight', async () => {
    const model = new ScriptedChatModel(['ok'], { sleep: 5 });
    const { llm } = client([], { config: llmConfig({ concurrency: 2 }) }, model);
    await Promise.all(Array.from({ length: 7 }, (_, i) => llm.complete(ask(`q${i}`))));
    expect(model.calls).toBe(7);
    expect(model.maxInFlight).toBe(2);
  });

  test('requests wait for the rate limiter', async () => {
    const clock = new FakeClock();
    const { llm, model } = client(['ok'], { clock, config: llmConfig({ requestsPerMinute: 2 }) });
    for (let i = 0; i < 4; i++) await llm.complete(ask(`q${i}`));
    expect(model.calls).toBe(4);
    // Two tokens in the bucket, then one per 30 s.
    expect(clock.sleeps).toEqual([30_000, 30_000]);
  });

  describe('usage and cost', () => {
    test('tokens and cost per model, shared across clients; cache hits cost nothing', async () => {
      const prices = { 'test-model': { inputPerMTok: 2, outputPerMTok: 6 } };
      const usage = new UsageMeter(prices);
      const cache = new MemoryLlmCache();
      const priced = client(
        [],
        { usage, cache, config: llmConfig({ prices }) },
        new ScriptedChatModel(['a'], { usage: { input: 1000, output: 500 } }),
      );
      const unpriced = client(
        [],
        { usage, config: llmConfig({ model: 'free-model' }) },
        new ScriptedChatModel(['b'], { usage: { input: 10, output: 1 } }),
      );
      await priced.llm.complete(ask('q'));
      await priced.llm.complete(ask('q'));
      await priced.llm.complete(ask('q2'));
      await unpriced.llm.complete(ask('q'));
      const snapshot = usage.snapshot();
      expect(snapshot.byModel['test-model']).toEqual({
        requests: 2,
        cacheHits: 1,
        retries: 0,
        failures: 0,
        inputTokens: 2000,
        outputTokens: 1000,
        costUsd: 0.01,
      });
      expect(snapshot.byModel['free-model']).toMatchObject({
        requests: 1,
        inputTokens: 10,
        outputTokens: 1,
        costUsd: 0,
      });
      expect(snapshot.total).toMatchObject({
        requests: 3,
        cacheHits: 1,
        inputTokens: 2010,
        outputTokens: 1001,
        costUsd: 0.01,
      });
      expect(snapshot.unpricedModels).toEqual(['free-model']);
    });
  });
});
