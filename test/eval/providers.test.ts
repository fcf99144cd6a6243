import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { packageRoot } from '../../core/package-root.js';
import { loadEvalDataset } from '../../eval/dataset.js';
import { goldAnswers, startChatServer, type ChatServer, type ScriptedCall } from '../../bench/scripted-chat.js';
import { parseConfig } from '../../config/load.js';
import { runEval } from '../../eval/run.js';
import { openEvalSession } from '../../eval/session.js';
import { MemoryLlmCache } from '../../generators/llm/cache.js';
import { RunStore } from '../../pipeline/store/run-store.js';
import { DEMO_SOURCE, evalOptions, generateDemo, run } from './fixtures.js';

/**
 * The real provider path: direct and ReAct runs through @langchain/openai and
 * @langchain/mistralai against a local server speaking their chat-completions protocol
 * (tools in the prompt and bound natively), a 429 retried, replies cached so that a rerun
 * asks nothing, and a run killed with SIGKILL that completes on rerun without asking any
 * question whose reply it had received.
 */

let root: string;
let answers: Map<string, ScriptedCall[]>;
let server: ChatServer | undefined;
beforeAll(async () => {
  root = await generateDemo();
  const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation: 'slot' });
  answers = goldAnswers(dataset.items);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MODELS = {
  openai: (url: string) => `openai:scripted-gpt@${url}/v1`,
  mistral: (url: string) => `mistral:mistral-scripted@${url}`,
};

describe.each(Object.entries(MODELS))('%s protocol', (provider, modelId) => {
  for (const [mode, tools] of [
    ['direct', 'prompt'],
    ['direct', 'native'],
    ['react', 'native'],
    ['react', 'prompt'],
  ] as const) {
    test(`${mode}, tools ${tools}: every item completed, each asked once, a rerun asks nothing`, async () => {
      server = await startChatServer({ answers });
      const model = modelId(server.url);
      const report = `${provider}-${mode}-${tools}`;
      const env = provider === 'mistral' ? { MISTRAL_API_KEY: 'test-key' } : {};
      const saved = { ...process.env };
      Object.assign(process.env, env);
      try {
        const first = await run(root, { models: [model], mode, tools, report, dbIds: ['bookstore'] });
        const [summary] = first.summary.models;
        expect(summary).toMatchObject({ attempts: 28, failed: 0 });
        expect(summary.completion.mean).toBe(1);
        // Native calls carry ids and no labels: the references by id resolve, nothing is an error.
        expect(summary.errors.none).toBe(28);
        expect(summary.slotF1.mean).toBe(1);
        if (tools === 'native') {
          const calls = first.lines.flatMap((l) => l.attempt!.parsed as { id?: string; label: string }[]);
          expect(calls.every((c) => /^call\d{5}$/.test(c.id ?? ''))).toBe(true);
          if (mode === 'direct') expect(calls.every((c) => c.label === c.id)).toBe(true);
        }
        expect(server.requests.every((r) => r.native === (tools === 'native'))).toBe(true);
        const asked = server.requests.length;
        expect(asked).toBe(
          mode === 'direct' ? 28 : first.lines.reduce((n, l) => n + (l.attempt?.replies.length ?? 0), 0),
        );
        const second = await run(root, { models: [model], mode, tools, report, dbIds: ['bookstore'] });
        expect(server.requests).toHaveLength(asked);
        expect(second.summary.models[0].completion.mean).toBe(1);
      } finally {
        process.env = saved;
      }
    }, 120_000);
  }
});

test('a 429 is retried and the item still completes', async () => {
  server = await startChatServer({ answers, rateLimitFirst: 1 });
  const result = await run(root, {
    models: [MODELS.openai(server.url)],
    report: 'rate-limited',
    dbIds: ['bookstore'],
    limit: 1,
  });
  expect(server.requests.map((r) => r.status)).toEqual([429, 200]);
  expect(result.summary.models[0]).toMatchObject({ failed: 0, completion: { mean: 1 } });
  expect(result.usage.total).toMatchObject({ requests: 2, retries: 1 });
});

test('a server on this machine gets --concurrency requests at once, never more, while twice as many attempts run', async () => {
  server = await startChatServer({ answers, delayMs: 50 });
  const options = evalOptions(root, { models: [MODELS.openai(server.url)], report: 'in-flight', dbIds: ['bookstore'] });
  options.config = { ...options.config, concurrency: 2 };
  const printed: string[] = [];
  const result = await runEval({ ...options, log: (line) => printed.push(line) });
  expect(result.summary.models[0]).toMatchObject({ attempts: 28, failed: 0 });
  expect(server.maxInFlight()).toBe(2);
  expect(printed.join('\n')).toMatch(/2 in flight/);
  const stores = { store: new RunStore({ dir: path.join(root, 'in-flight-store') }), replyCache: new MemoryLlmCache() };
  try {
    for (const [models, attempts] of [
      [[MODELS.openai(server.url)], 4],
      [['oracle'], 2],
    ] as const) {
      const session = await openEvalSession({ ...options, models: [...models] }, stores);
      try {
        expect(session.attemptsInFlight).toBe(attempts);
      } finally {
        await session.close();
      }
    }
  } finally {
    stores.store.close();
  }
}, 120_000);

test('a provider that never answers leaves the attempt failed and uncached; counts add up', async () => {
  const options = evalOptions(root, {
    models: ['openai:scripted-gpt@http://127.0.0.1:9/v1'],
    report: 'down',
    dbIds: ['bookstore'],
    limit: 1,
  });
  options.config = parseConfig({
    source: DEMO_SOURCE,
    dbIds: ['bookstore'],
    progress: 'none',
    llm: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 1 } },
  });
  const down = await runEval(options);
  expect(down.summary.models[0]).toMatchObject({ attempts: 1, scored: 0, failed: 1 });
  expect(down.lines[0].failure?.category).toBe('internal_error');
  // Not cached: with the provider back, the same run asks and completes.
  server = await startChatServer({ answers });
  const again = await runEval({ ...options, models: [MODELS.openai(server.url)] });
  expect(again.summary.models[0]).toMatchObject({ scored: 1, failed: 0 });
}, 120_000);

test('kill -9 mid-run, then rerun: it completes and asks nothing it had a reply for', async () => {
  server = await startChatServer({ answers, delayMs: 50 });
  const report = path.join(root, 'killed');
  const args = [
    path.join(packageRoot(), 'dist', 'cli', 'main.js'),
    'eval',
    '--dataset',
    path.join(root, 'dataset'),
    '--source',
    DEMO_SOURCE,
    '--model',
    MODELS.openai(server.url),
    '--report',
    report,
    '--concurrency',
    '2',
  ];
  const child = spawn(process.execPath, args, { stdio: 'ignore' });
  await waitFor(() => server!.requests.filter((r) => !r.abandoned).length >= 12);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const before = server.requests.length;
  const cached = new Database(path.join(report, '.cache', 'llm-cache.sqlite'), { readonly: true });
  const replies = (cached.prepare('SELECT COUNT(*) AS n FROM llm_replies').get() as { n: number }).n;
  cached.close();
  expect(replies).toBeGreaterThanOrEqual(10);
  const rerun = spawn(process.execPath, args, { stdio: 'ignore' });
  const code = await new Promise((resolve) => rerun.once('exit', resolve));
  expect(code).toBe(0);
  // Every question whose reply reached the cache was not asked again; the others once each.
  expect(server.requests.length - before).toBe(50 - replies);
  const asked = new Map<string, number>();
  for (const r of server.requests.slice(before)) asked.set(r.question, (asked.get(r.question) ?? 0) + 1);
  expect([...asked.values()].every((n) => n === 1)).toBe(true);
}, 120_000);

async function waitFor(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
