import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import type { ConfigInput } from '../../config/schema.js';
import type { LlmConfigInput } from '../../generators/llm/config.js';
import { generate, type GenerateResult } from '../../pipeline/generate.js';
import type { Rejection } from '../../core/model.js';
import { packageRoot } from '../../core/package-root.js';
import type { RunStats } from '../../pipeline/stats.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import type { SqlExecutor, SqlRequest } from '../../runtime/sql/executor.js';
import {
  goodEndpoint,
  startScriptedMistral,
  type Behaviour,
  type ScriptedMistral,
  type WireEndpoint,
} from '../../bench/scripted-mistral.js';

/**
 * The REST formulation end to end with an LLM: the real pipeline (gold, rest.synthesize
 * with its verify-and-retry loop, rest.dedup, the live server, verify, emit) and the REAL
 * @langchain/mistralai client (and the Mistral SDK under it) talking to a scripted local
 * server that speaks Mistral's chat-completions protocol and answers by reading the
 * prompts (scripted-mistral.ts). Source: a copy of seeds/demo (2 databases, 50 questions).
 */

const MODEL = 'mistral-scripted';
const LLM_LABEL = `llm:mistral/${MODEL}`;
const API_KEY = 'test-mistral-key-e2e';
const DBS = { bookstore: 28, cycling_club: 22 } as const;
const TOTAL = 50;

interface RestSampleLine {
  sample_id: string;
  output: { name: string; arguments: Record<string, unknown>; path: string }[];
  /** The response body: here always a list of objects. */
  output_after_executing_api: Record<string, unknown>[];
  synthesizer: string;
  attempts: number;
  verification: Record<'format' | 'execution' | 'semantic', { ok: boolean; category: string; message: string }>;
}

let root: string;
let source: string;
let savedKey: string | undefined;
/**
 * One SQL pool for the file's runs, as generate() would make its own (2 workers and a spare).
 * Not one per run: under jest each worker process loads the sources through tsx, which cost
 * each of these ~17 runs a second and a half of CPU, a third of the file's. What this file
 * checks is the LLM's path; the pool a run owns and closes is every other e2e test's.
 */
let pool: SqlPool;
beforeAll(() => {
  pool = createSqlPool({ size: 2, spare: 1 });
  root = mkdtempSync(path.join(os.tmpdir(), 'nl2api-rest-llm-'));
  // A copy: whatever the scripted LLM proposes must never reach the repository's databases.
  source = path.join(root, 'demo');
  cpSync(path.join(packageRoot(), 'seeds', 'demo'), source, { recursive: true });
  savedKey = process.env.MISTRAL_API_KEY;
  process.env.MISTRAL_API_KEY = API_KEY;
});
afterAll(async () => {
  await pool.close();
  if (savedKey === undefined) delete process.env.MISTRAL_API_KEY;
  else process.env.MISTRAL_API_KEY = savedKey;
  rmSync(root, { recursive: true, force: true });
});

let server: ScriptedMistral | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scripted(behaviour: Behaviour = {}): Promise<ScriptedMistral> {
  server = await startScriptedMistral(behaviour);
  return server;
}

interface RunOptions {
  rest?: ConfigInput['rest'];
  llm?: LlmConfigInput;
  /** Reuse a run's directory (out and cache) — default: a fresh one. */
  dir?: string;
  /** Default: a fresh out directory under `dir`. */
  outName?: string;
  /** Default: the file's pool. */
  executor?: SqlExecutor;
}

interface Run {
  result: GenerateResult;
  stats: RunStats;
  dir: string;
  out: string;
  samples: Map<string, RestSampleLine>;
  rejections: Rejection[];
  restFiles: Record<string, Buffer>;
}

async function run(llm: ScriptedMistral, options: RunOptions = {}): Promise<Run> {
  const dir = options.dir ?? mkdtempSync(path.join(root, 'run-'));
  const out = path.join(dir, options.outName ?? 'out');
  const config = parseConfig({
    source,
    out,
    cacheDir: path.join(dir, 'cache'),
    formulations: ['rest'],
    progress: 'none',
    rest: { attempts: 2, templateFallback: true, batchSize: 4, judge: true, dedupAgent: true, ...options.rest },
    llm: {
      provider: 'mistral',
      model: MODEL,
      // The Mistral SDK appends /v1/chat/completions to its server URL.
      baseUrl: llm.url,
      // A bound for a hung reply, not a speed limit: a loaded machine may answer slowly.
      timeoutMs: 30_000,
      maxRetries: 1,
      backoff: { baseMs: 10, maxMs: 40 },
      requestsPerMinute: 100_000,
      concurrency: 4,
      ...options.llm,
    },
  });
  const result = await generate({ config, executor: options.executor ?? pool });
  expect(result.aborted).toBe(false);
  const stats = result.stats!;
  const restFiles: Record<string, Buffer> = {};
  const samples = new Map<string, RestSampleLine>();
  for (const db of Object.keys(DBS)) {
    restFiles[db] = readFileSync(path.join(out, 'rest', `${db}.jsonl`));
    for (const line of restFiles[db].toString('utf8').split('\n').filter(Boolean)) {
      const sample = JSON.parse(line) as RestSampleLine;
      samples.set(sample.sample_id, sample);
    }
  }
  const rejections = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Rejection)
    .filter((r) => r.formulation === 'rest');
  expectNothingLost({ stats, samples, rejections });
  return { result, stats, dir, out, samples, rejections, restFiles };
}

/** Every instance ends exactly once: as a sample or as a rejection, and the stats agree with the files. */
function expectNothingLost({ stats, samples, rejections }: Pick<Run, 'stats' | 'samples' | 'rejections'>): void {
  const total = stats.formulations.rest!.total;
  expect(total.input).toBe(TOTAL);
  expect(total.accepted + total.rejected).toBe(total.input);
  expect(samples.size).toBe(total.accepted);
  expect(rejections).toHaveLength(total.rejected);
  expect(Object.values(total.rejectedBy).reduce((a, b) => a + b, 0)).toBe(total.rejected);
  const ids = [...samples.keys(), ...rejections.map((r) => r.id)];
  expect(new Set(ids).size).toBe(TOTAL);
  for (const [db, n] of Object.entries(DBS)) expect(stats.formulations.rest!.byDb[db].input).toBe(n);
}

/** Rejections as `id → stage:category`. */
function verdicts(rejections: readonly Rejection[]): Record<string, string> {
  return Object.fromEntries(rejections.map((r) => [r.id, `${r.stage}:${r.category}`]));
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

const dbFile = (db: string) => path.join(source, 'dev_databases', db, `${db}.sqlite`);

/** The requests that listed an instance in their synthesis prompt. */
const synthesisRequestsOf = (llm: ScriptedMistral, id: string, db = 'bookstore') =>
  llm.of('synthesis').filter((r) => r.db === db && r.instances!.includes(id));

// ------------------------------------------------------------------------------------------

test('happy path: every instance gets a good LLM endpoint; batches, usage, and a second run that asks nothing', async () => {
  const llm = await scripted();
  const first = await run(llm);

  // 50 verified samples, all from the LLM, at the first attempt.
  expect(first.stats.formulations.rest!.total).toMatchObject({ input: TOTAL, accepted: TOTAL, rejected: 0 });
  for (const sample of first.samples.values()) {
    expect(sample.synthesizer).toBe(LLM_LABEL);
    expect(sample.attempts).toBe(1);
    expect(sample.verification.format.ok && sample.verification.execution.ok && sample.verification.semantic.ok).toBe(
      true,
    );
  }
  // A parametrized one: the literal became an argument, and the call went to our path.
  expect(first.samples.get('0')!.output).toEqual([
    {
      name: 'getAnswerOfQuestion0',
      arguments: { value: 'Mystery' },
      path: '/v1/bird-dev/bookstore/get-answer-of-question-0',
    },
  ]);
  expect(first.samples.get('0')!.output_after_executing_api).toEqual([{ title: 'Winter Machine' }]);
  // Double-quoted strings were sent as single-quoted: verified too.
  expect(first.samples.get('25')!.output[0].arguments).toEqual({ value: 'Alice' });

  // The protocol: every request a proper chat completion to /v1/chat/completions.
  expect(llm.requests.length).toBeGreaterThan(0);
  for (const request of llm.requests) {
    expect(request).toMatchObject({ method: 'POST', url: '/v1/chat/completions', status: 200, abandoned: false });
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body).toMatchObject({ model: MODEL, temperature: 0 });
    expect(request.body.stream).toBeFalsy();
    expect(request.agent).not.toBe('unknown');
  }
  // Synthesis: ceil(n / batchSize) calls per database, each instance asked exactly once.
  for (const [db, n] of Object.entries(DBS)) {
    const calls = llm.of('synthesis').filter((r) => r.db === db);
    expect(calls).toHaveLength(Math.ceil(n / 4));
    for (const call of calls) expect(call.instances!.length).toBeLessThanOrEqual(4);
    const asked = calls.flatMap((c) => c.instances!);
    expect(asked).toHaveLength(n);
    expect(new Set(asked).size).toBe(n);
  }
  expect(llm.of('judge')).toHaveLength(0); // every response has the gold's shape
  const dedupCalls = llm.of('dedup').length;
  expect(dedupCalls).toBeGreaterThan(0);

  // Usage: what the server saw and sent is what the run accounts.
  const usage = first.stats.timing.llm!.total;
  expect(usage.requests).toBe(llm.requests.length);
  expect(usage).toMatchObject({ retries: 0, failures: 0, cacheHits: 0 });
  expect(usage.inputTokens).toBe(llm.requests.reduce((n, r) => n + r.usage!.prompt_tokens, 0));
  expect(usage.outputTokens).toBe(llm.requests.reduce((n, r) => n + r.usage!.completion_tokens, 0));
  expect(first.stats.timing.llm!.byModel[MODEL].requests).toBe(llm.requests.length);

  // Dedup: every endpoint distinct, nothing merged (the agent proposes none), all published.
  for (const [db, n] of Object.entries(DBS))
    expect(first.stats.rest!.byDb[db]).toEqual({ before: n, after: n, published: n });
  expect(first.stats.rest!.merges).toEqual([]);

  // Second identical run: the outputs are reused, no request at all, byte-identical files.
  const asked = llm.requests.length;
  const second = await run(llm, { dir: first.dir });
  expect(llm.requests).toHaveLength(asked);
  expect(second.stats.timing.outputsReused).toBe(true);
  expect(second.stats.timing.llm!.total.requests).toBe(0);
  for (const db of Object.keys(DBS)) expect(second.restFiles[db].equals(first.restFiles[db])).toBe(true);

  // Third run into a new out directory, same cache: stages and replies come from the caches.
  const third = await run(llm, { dir: first.dir, outName: 'out-again' });
  expect(llm.requests).toHaveLength(asked);
  expect(third.stats.timing.outputsReused).toBe(false);
  // Synthesis records and each database's dedup (agent merges included) come from the run store: the LLM is not even consulted.
  expect(third.stats.timing.llm!.total).toMatchObject({ requests: 0, failures: 0, cacheHits: 0 });
  for (const db of Object.keys(DBS)) expect(third.restFiles[db].equals(first.restFiles[db])).toBe(true);
});

test.each([1, 7, 50])(
  'batchSize %i: ceil(n / batchSize) synthesis calls per database, every instance once',
  async (batchSize) => {
    const llm = await scripted();
    const { stats, samples } = await run(llm, { rest: { batchSize, dedupAgent: false } });
    expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL, rejected: 0 });
    for (const sample of samples.values()) expect(sample).toMatchObject({ synthesizer: LLM_LABEL, attempts: 1 });
    for (const [db, n] of Object.entries(DBS)) {
      const calls = llm.of('synthesis').filter((r) => r.db === db);
      expect(calls).toHaveLength(Math.ceil(n / batchSize));
      const asked = calls.flatMap((c) => c.instances!);
      expect(asked).toHaveLength(n);
      expect(new Set(asked).size).toBe(n);
      for (const call of calls) expect(call.instances!.length).toBeLessThanOrEqual(batchSize);
    }
    // Without the dedup agent, synthesis is all the LLM is asked.
    expect(llm.requests).toHaveLength(llm.of('synthesis').length);
    expect(stats.timing.llm!.total.requests).toBe(llm.requests.length);
  },
);

test('feedback loop: a hallucinated column is fed back, the second reply is accepted with attempts 2', async () => {
  const llm = await scripted({
    endpoint: (instance, attempt) => {
      const good = goodEndpoint(instance);
      if (instance.id !== '0' || attempt > 1) return good;
      return { ...good, sql: good.sql.replace('SELECT title', 'SELECT book_title') };
    },
  });
  const { samples, stats } = await run(llm);
  expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL, rejected: 0 });

  const asked = synthesisRequestsOf(llm, '0');
  expect(asked).toHaveLength(2);
  expect(asked[0].instances).toContain('0');
  expect(asked[0].instances!.length).toBe(4);
  // The retry is about instance 0 alone: its own bad proposal, then why it failed.
  const retry = asked[1];
  expect(retry.instances).toEqual(['0']);
  const [, , assistant, fix] = retry.messages;
  expect(assistant.role).toBe('assistant');
  expect(assistant.content).toContain('SELECT book_title FROM book');
  expect(fix.role).toBe('user');
  expect(fix.content).toContain('format:unknown_column');
  expect(fix.content).toContain('book_title');
  expect(retry.messages.at(-1)).toBe(fix);

  const sample = samples.get('0')!;
  expect(sample).toMatchObject({ synthesizer: LLM_LABEL, attempts: 2 });
  expect(sample.output_after_executing_api).toEqual([{ title: 'Winter Machine' }]);
  for (const [id, s] of samples) if (id !== '0') expect(s.attempts).toBe(1);
  expect(llm.of('synthesis')).toHaveLength(7 + 6 + 1);
});

/** Destructive or non-SELECT SQL proposed, at every attempt, for some instances of both databases. */
const DESTRUCTIVE: Record<string, string> = {
  '0': 'DROP TABLE book',
  '1': "UPDATE book SET title = 'pwned'",
  '2': "ATTACH DATABASE '__EVIL__' AS evil",
  '3': 'PRAGMA writable_schema = 1',
  '4': 'SELECT COUNT(*) FROM book; DROP TABLE book',
  '5': "SELECT load_extension('/tmp/nl2api-evil.so')",
  '28': 'DELETE FROM member',
  '29': 'WITH doomed AS (SELECT ride_id FROM ride) DELETE FROM ride WHERE ride_id IN (SELECT ride_id FROM doomed)',
};
const NOT_SQL_WORDS = /\b(DROP|UPDATE|ATTACH|PRAGMA|DELETE|load_extension|writable_schema)\b/i;

test.each([{ templateFallback: true }, { templateFallback: false }])(
  'destructive SQL is never executed (templateFallback: $templateFallback)',
  async ({ templateFallback }) => {
    const evil = path.join(root, `evil-${templateFallback}.sqlite`);
    const before = Object.fromEntries(Object.keys(DBS).map((db) => [db, sha256(dbFile(db))]));
    const llm = await scripted({
      endpoint: (instance) => {
        const sql = DESTRUCTIVE[instance.id];
        if (!sql) return goodEndpoint(instance);
        const endpoint: WireEndpoint = {
          ...goodEndpoint(instance),
          sql: sql.replace('__EVIL__', evil),
          parameters: [],
          arguments: {},
        };
        return endpoint;
      },
    });
    // Every statement the pipeline runs goes through this executor.
    const pool = createSqlPool({ size: 2 });
    const executed: SqlRequest[] = [];
    const executor: SqlExecutor = {
      run: (request) => (executed.push(request), pool.run(request)),
      buildVariantTable: (request) => pool.buildVariantTable(request),
      close: () => pool.close(),
    };
    let result: Run;
    try {
      result = await run(llm, { rest: { templateFallback }, executor });
    } finally {
      await pool.close();
    }
    const { samples, rejections, stats } = result;

    // Nothing ran, nothing changed.
    expect(executed.length).toBeGreaterThan(0);
    expect(executed.filter((r) => NOT_SQL_WORDS.test(r.sql))).toEqual([]);
    for (const db of Object.keys(DBS)) expect(sha256(dbFile(db))).toBe(before[db]);
    expect(existsSync(evil)).toBe(false);
    const check = new Database(dbFile('bookstore'), { readonly: true });
    try {
      expect((check.prepare('SELECT COUNT(*) AS n FROM book').get() as { n: number }).n).toBeGreaterThan(0);
      expect(check.prepare("SELECT COUNT(*) AS n FROM book WHERE title = 'pwned'").get()).toEqual({ n: 0 });
    } finally {
      check.close();
    }

    // Each bad instance was asked `attempts` times, the failure fed back each time.
    for (const id of Object.keys(DESTRUCTIVE)) {
      const asked = synthesisRequestsOf(llm, id, Number(id) >= 28 ? 'cycling_club' : 'bookstore');
      expect(asked).toHaveLength(2);
      expect(asked[1].messages.at(-1)!.content).toContain('format:not_select');
    }

    const bad = Object.keys(DESTRUCTIVE);
    if (templateFallback) {
      expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL, rejected: 0 });
      for (const id of bad) expect(samples.get(id)).toMatchObject({ synthesizer: 'template', attempts: 3 });
    } else {
      expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL - bad.length, rejected: bad.length });
      expect(verdicts(rejections)).toEqual(
        Object.fromEntries(bad.map((id) => [id, 'rest.synthesize:format:not_select'])),
      );
      expect(stats.formulations.rest!.total.rejectedBy).toEqual({ 'rest.synthesize:format:not_select': bad.length });
    }
    for (const [id, sample] of samples)
      if (!bad.includes(id)) expect(sample).toMatchObject({ synthesizer: LLM_LABEL, attempts: 1 });
  },
);

test.each([{ templateFallback: true }, { templateFallback: false }])(
  'invalid JSON every time for a batch (templateFallback: $templateFallback)',
  async ({ templateFallback }) => {
    // The first bookstore batch to arrive (which instances share a batch is up to the pipeline).
    let batch: string[] = [];
    const garbage = '{"endpoints": [{"instance_id": "0", "sql": SELECT title FROM book WHERE';
    const llm = await scripted({
      synthesisReply: (ctx) => {
        if (ctx.db !== 'bookstore') return undefined;
        if (!batch.length) batch = ctx.instances.map((i) => i.id);
        return ctx.instances.some((i) => batch.includes(i.id)) ? { content: garbage } : undefined;
      },
    });
    const { samples, rejections, stats } = await run(llm, { rest: { templateFallback } });

    // The batch once, then each of its instances alone with the invalid-JSON feedback.
    expect(batch).toHaveLength(4);
    for (const id of batch) {
      const asked = synthesisRequestsOf(llm, id);
      expect(asked.map((r) => r.instances)).toEqual([batch, [id]]);
      expect(asked[1].messages.at(-1)).toMatchObject({ role: 'user' });
      expect(asked[1].messages.at(-1)!.content).toContain('not valid JSON');
    }
    const total = stats.formulations.rest!.total;
    if (templateFallback) {
      expect(total).toMatchObject({ accepted: TOTAL, rejected: 0 });
      for (const id of batch) expect(samples.get(id)).toMatchObject({ synthesizer: 'template', attempts: 3 });
    } else {
      expect(total).toMatchObject({ accepted: TOTAL - batch.length, rejected: batch.length });
      expect(verdicts(rejections)).toEqual(
        Object.fromEntries(batch.map((id) => [id, 'rest.synthesize:llm:invalid_json'])),
      );
    }
    expect([...samples.values()].filter((s) => s.synthesizer === LLM_LABEL)).toHaveLength(TOTAL - batch.length);
    expect(stats.timing.llm!.total.requests).toBe(llm.requests.length);
  },
);

describe('HTTP failures of the LLM', () => {
  test('a 429 with Retry-After: 0, then success → accepted, the retry counted', async () => {
    let throttled = false;
    const llm = await scripted({
      synthesisReply: () => {
        if (throttled) return undefined;
        throttled = true;
        return { status: 429, headers: { 'retry-after': '0' } };
      },
    });
    const { samples, stats } = await run(llm);
    expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL, rejected: 0 });
    for (const sample of samples.values()) expect(sample).toMatchObject({ synthesizer: LLM_LABEL, attempts: 1 });
    expect(llm.requests.filter((r) => r.status === 429)).toHaveLength(1);
    const usage = stats.timing.llm!.total;
    expect(usage.retries).toBeGreaterThanOrEqual(1);
    expect(usage.failures).toBe(0);
    expect(usage.requests).toBe(llm.requests.length);
  });

  test('500 forever for one instance → llm:server_error (no fallback); its batch-mates retried alone and accepted', async () => {
    const llm = await scripted({
      synthesisReply: (ctx) =>
        ctx.db === 'cycling_club' && ctx.instances.some((i) => i.id === '28') ? { status: 500 } : undefined,
    });
    const { samples, rejections, stats } = await run(llm, { rest: { templateFallback: false } });
    expect(verdicts(rejections)).toEqual({ '28': 'rest.synthesize:llm:server_error' });
    expect(rejections[0].message).toContain('HTTP 500');
    const asked = synthesisRequestsOf(llm, '28', 'cycling_club');
    const mates = asked[0].instances!.filter((id) => id !== '28');
    expect(mates).toHaveLength(3);
    // The client's own retry of the batch, then round 2 with instance 28 alone (and its retry).
    expect(asked.map((r) => r.instances!.length)).toEqual([4, 4, 1, 1]);
    expect(asked[1].instances).toEqual(asked[0].instances);
    for (const id of mates) expect(samples.get(id)).toMatchObject({ synthesizer: LLM_LABEL, attempts: 2 });
    // The batch and the lone retry, each sent 1 + maxRetries times.
    expect(llm.requests.filter((r) => r.status === 500)).toHaveLength(4);
    expect(stats.timing.llm!.total).toMatchObject({ failures: 2, retries: 2, requests: llm.requests.length });
  });

  test('a reply slower than llm.timeoutMs → llm:timeout (no fallback), the connection cut', async () => {
    const llm = await scripted({
      // Never answered in the test's lifetime (the server's close clears the timer): the
      // run's ending at all shows the reply was not waited for. The other replies have
      // llm.timeoutMs to come, ample even on a loaded machine.
      synthesisReply: (ctx) =>
        ctx.db === 'bookstore' && ctx.instances.some((i) => i.id === '5') ? { delayMs: 600_000 } : undefined,
    });
    const { samples, rejections, stats } = await run(llm, {
      rest: { templateFallback: false },
      llm: { timeoutMs: 3000, maxRetries: 0 },
    });
    expect(verdicts(rejections)).toEqual({ '5': 'rest.synthesize:llm:timeout' });
    const slow = synthesisRequestsOf(llm, '5');
    expect(slow).toHaveLength(2);
    expect(slow[0].instances).toHaveLength(4);
    expect(slow[1].instances).toEqual(['5']);
    for (const id of slow[0].instances!.filter((id) => id !== '5'))
      expect(samples.get(id)).toMatchObject({ synthesizer: LLM_LABEL, attempts: 2 });
    // The cut reaches the server when it reaches it: wait for it, with a bound for a hang only.
    for (let i = 0; i < 3000 && !slow.every((r) => r.abandoned); i++) await new Promise((r) => setTimeout(r, 10));
    for (const request of slow) expect(request.abandoned).toBe(true);
    expect(stats.timing.llm!.total.failures).toBe(2);
  });
});

describe('the answer judge', () => {
  const QUESTION_0 = 'List the titles of Mystery books that cost less than 10 dollars.';
  const RATIONALE = 'The titles are all there; the price column only adds context.';
  /** Instance 0's gold is one column (title); this endpoint adds the price. */
  const extraColumn: Behaviour['endpoint'] = (instance) => {
    const good = goodEndpoint(instance);
    return instance.id === '0'
      ? { ...good, sql: good.sql.replace('SELECT title', 'SELECT title, `Price (USD)`') }
      : good;
  };

  test('judge "yes" → accepted as semantic:judge_yes, the rationale recorded', async () => {
    const llm = await scripted({ endpoint: extraColumn, judge: () => ({ verdict: 'yes', rationale: RATIONALE }) });
    const { samples, stats } = await run(llm, { rest: { templateFallback: false } });
    expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL, rejected: 0 });
    // Asked once in the retry loop; the served endpoint's identical verdict comes from the reply cache.
    const judged = llm.of('judge');
    expect(judged).toHaveLength(1);
    expect(stats.timing.llm!.total.cacheHits).toBeGreaterThanOrEqual(1);
    for (const request of judged) expect(/^Question: (.*)$/m.exec(request.messages[1].content)![1]).toBe(QUESTION_0);
    const sample = samples.get('0')!;
    expect(sample).toMatchObject({ synthesizer: LLM_LABEL, attempts: 1 });
    // The extra column is a field named from its alias, in snake_case.
    expect(Object.keys(sample.output_after_executing_api[0])).toEqual(['title', 'price_usd']);
    expect(sample.verification.semantic).toMatchObject({ ok: true, category: 'semantic:judge_yes' });
    expect(sample.verification.semantic.message).toContain(RATIONALE);
  });

  test('judge "no" → rejected semantic:judge_no once the retries are spent (no fallback)', async () => {
    const llm = await scripted({
      endpoint: extraColumn,
      judge: () => ({ verdict: 'no', rationale: 'An extra column.' }),
    });
    const { rejections, stats } = await run(llm, { rest: { templateFallback: false } });
    expect(verdicts(rejections)).toEqual({ '0': 'rest.synthesize:semantic:judge_no' });
    expect(rejections[0].message).toContain('An extra column.');
    expect(stats.formulations.rest!.total).toMatchObject({ accepted: TOTAL - 1, rejected: 1 });
    const asked = synthesisRequestsOf(llm, '0');
    expect(asked).toHaveLength(2);
    expect(asked[1].messages.at(-1)!.content).toContain('semantic:judge_no');
    expect(llm.of('judge').length).toBeGreaterThanOrEqual(1);
  });

  test('without an LLM judge (rest.judge: false) → rejected semantic:undecidable, the judge never asked', async () => {
    const llm = await scripted({ endpoint: extraColumn });
    const { rejections } = await run(llm, { rest: { templateFallback: false, judge: false } });
    expect(verdicts(rejections)).toEqual({ '0': 'rest.synthesize:semantic:undecidable' });
    expect(llm.of('judge')).toHaveLength(0);
  });
});
