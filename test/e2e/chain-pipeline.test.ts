import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { packageRoot } from '../../core/package-root.js';
import { generate } from '../../pipeline/generate.js';
import { serveDataset } from '../../pipeline/serve.js';
import { transformOf, type TransformKind } from '../../generators/chain/transforms.js';

/**
 * The chain formulation through the whole pipeline on the demo: chains made of the REST
 * samples, every hop of every chain replayed over HTTP against `nl2api serve` (the agent's
 * way: each response's field made into the next argument), the counts adding up, a rerun
 * served from the cache, and chain refused without REST.
 */

const demo = path.join(packageRoot(), 'seeds', 'demo');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-chain-e2e-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (out: string, overrides: Record<string, unknown> = {}) =>
  parseConfig({
    source: demo,
    formulations: ['rest', 'chain'],
    out,
    cacheDir: path.join(out, '.cache'),
    progress: 'none',
    ...overrides,
  });

interface ChainLine {
  sample_id: string;
  input: string;
  hops: number;
  output: {
    name: string;
    path: string;
    arguments: Record<string, string | number>;
    binds?: Record<string, string>;
    transform?: TransformKind;
  }[];
  output_after_executing_api: unknown[];
  gold_answer: (string | number | null)[][];
  query: string;
}

const readJsonl = (file: string): ChainLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ChainLine);

describe('the chain formulation on the demo', () => {
  let out: string;
  beforeAll(async () => {
    out = path.join(dir, 'demo');
    await generate({ config: config(out) });
  });

  test('every instance ends with chains or a reason', () => {
    const stats = JSON.parse(readFileSync(path.join(out, 'stats.json'), 'utf8'));
    const total = stats.formulations.chain.total;
    expect(total.input).toBe(50);
    expect(total.accepted + total.rejected).toBe(50);
    expect(total.accepted).toBeGreaterThan(0);
    const rejections = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { formulation: string; stage: string; category: string });
    const refused = rejections.filter((r) => r.formulation === 'chain');
    expect(refused).toHaveLength(total.rejected);
    // A chain's instance goes through REST first: its refusals are REST's stages or chain.compose.
    for (const r of refused)
      expect(['gold', 'rest.synthesize', 'rest.dedup', 'execute', 'verify', 'chain.compose']).toContain(r.stage);
    const lines = ['bookstore', 'cycling_club'].flatMap((db) => readJsonl(path.join(out, 'chain', `${db}.jsonl`)));
    // The demo's endpoints link into 2-hop chains only (3 hops: test/chain/chains.test.ts and BIRD dev).
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect([2, 3]).toContain(line.hops);
    expect(new Set(lines.map((l) => l.sample_id)).size).toBe(lines.length);
  });

  test('every chain, replayed hop by hop over HTTP as an agent would, gives its recorded responses and answer', async () => {
    const handle = await serveDataset({ config: config(out), host: '127.0.0.1', port: 0 });
    try {
      for (const db of ['bookstore', 'cycling_club']) {
        for (const sample of readJsonl(path.join(out, 'chain', `${db}.jsonl`))) {
          let previous: unknown;
          for (const [i, call] of sample.output.entries()) {
            const args = { ...call.arguments };
            if (call.binds) {
              // `$HOP<k>.<field>$`: that field of hop k's response, made one value by the transform.
              const [[param, ref]] = Object.entries(call.binds);
              const field = ref.slice(1, -1).split('.')[1];
              const rows = (Array.isArray(previous) ? previous : [previous]) as Record<string, string | number>[];
              const value = transformOf(call.transform!).apply(rows.map((row) => row[field]));
              expect(value).toBe(call.arguments[param]);
              args[param] = value as string | number;
            }
            const url = new URL(call.path, handle.server.url);
            for (const [name, value] of Object.entries(args)) url.searchParams.set(name, String(value));
            const response = await fetch(url);
            expect(response.status).toBe(200);
            previous = await response.json();
            expect(previous).toEqual(sample.output_after_executing_api[i]);
          }
          // The question leaks neither the answer nor a bridged value.
          const bridged = sample.output.flatMap((c) =>
            c.binds ? Object.keys(c.binds).map((p) => c.arguments[p]) : [],
          );
          for (const value of [...bridged, ...sample.gold_answer.flat()])
            if (value !== null && String(value) !== '')
              expect(sample.input.toLowerCase()).not.toContain(String(value).toLowerCase());
        }
      }
    } finally {
      await handle.close();
    }
  });

  test('a question whose gold SQL nests a subquery as a value is a chain of its own: its question, its endpoints served', () => {
    type Nested = ChainLine & { origin: string; first_hop: { sample_id: string; question: string } };
    const lines = ['bookstore', 'cycling_club'].flatMap((db) =>
      readJsonl(path.join(out, 'chain', `${db}.jsonl`)),
    ) as Nested[];
    const nested = lines.filter((l) => l.origin === 'nested_sql');
    // The demo's `= (SELECT MAX(…))` questions (20, 41); its `IN (SELECT …)` ones have several values there.
    expect(nested.map((l) => l.sample_id).sort()).toEqual(['20.sql', '41.sql']);
    for (const line of nested) {
      expect(line.input).toBe(line.first_hop.question);
      expect(line.output[1]).toMatchObject({ transform: 'value' });
      const db = line.sample_id === '20.sql' ? 'bookstore' : 'cycling_club';
      const served = JSON.parse(readFileSync(path.join(out, 'rest', 'endpoints', `${db}.json`), 'utf8')) as {
        endpoints: { operationId: string; path: string }[];
      };
      for (const call of line.output)
        expect(served.endpoints).toContainEqual(expect.objectContaining({ operationId: call.name, path: call.path }));
    }
    expect(lines.filter((l) => l.origin === 'endpoints').length).toBeGreaterThan(0);
  });

  test('a rerun takes the chains from the cache; chain without REST is refused', async () => {
    const again = path.join(dir, 'again');
    const result = await generate({ config: { ...config(again), cacheDir: path.join(out, '.cache') } });
    expect(result.stats!.timing.stages['chain.compose']).toMatchObject({ runs: 0, cacheHits: 2 });
    for (const db of ['bookstore', 'cycling_club'])
      expect(readFileSync(path.join(again, 'chain', `${db}.jsonl`), 'utf8')).toBe(
        readFileSync(path.join(out, 'chain', `${db}.jsonl`), 'utf8'),
      );
    expect(() => config(path.join(dir, 'alone'), { formulations: ['chain'] })).toThrow(/list rest with it/);
  });
});
