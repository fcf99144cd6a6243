import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { answerJson, sampleRecord } from '../../pipeline/emit.js';
import { FORMULATION_DEFS } from '../../pipeline/formulations.js';
import { generate } from '../../pipeline/generate.js';
import { nullExecutor, toyConfig, toyStages } from './fixtures/toy.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const demo = path.resolve(here, '../../seeds/demo');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-emit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every output file's content, stats.json without its `timing`. */
function snapshot(outDir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (name === '.cache') continue;
      if (statSync(p).isDirectory()) walk(p);
      else files[path.relative(outDir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(outDir);
  const stats = JSON.parse(files['stats.json']) as { timing?: unknown };
  expect(stats.timing).toBeDefined();
  delete stats.timing;
  files['stats.json'] = JSON.stringify(stats);
  return files;
}

async function toyGenerate(out: string, cacheDir: string) {
  return generate({
    config: toyConfig({ source: demo, out, cacheDir, concurrency: 4 }),
    executor: nullExecutor,
    stages: toyStages().stages,
  });
}

describe('emit', () => {
  test('two runs give byte-identical files (stats.timing aside); a warm rerun too', async () => {
    const a = await toyGenerate(path.join(dir, 'a'), path.join(dir, 'cache-a'));
    const b = await toyGenerate(path.join(dir, 'b'), path.join(dir, 'cache-b'));
    const warm = await toyGenerate(path.join(dir, 'c'), path.join(dir, 'cache-a'));
    expect(a.aborted).toBe(false);
    const files = snapshot(a.outDir);
    expect(Object.keys(files).sort()).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'rejections.jsonl',
        'stats.json',
        'slot/bookstore.jsonl',
        'sel/bookstore.jsonl',
        'tools/slot/bookstore.json',
        'tools/sel/bookstore.json',
        'openapi/slot/bookstore.json',
        'openapi/sel/bookstore.json',
      ]),
    );
    expect(snapshot(b.outDir)).toEqual(files);
    expect(snapshot(warm.outDir)).toEqual(files);
    expect(warm.stats?.timing.stages.gold).toMatchObject({ runs: 0 });
    expect(readdirSync(a.outDir).some((f) => f.endsWith('.tmp'))).toBe(false);

    // Samples are in instance order with the published keys; the manifest hashes the files.
    const lines = files['slot/bookstore.jsonl']
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(lines[0])).toEqual([
      'sample_id',
      'dataset_name',
      'formulation',
      'input',
      'evidence',
      'query',
      'gold_answer',
      'initialization_step',
      'output',
      'answer_labels',
      'output_after_executing_api',
      'difficulty',
      'verification',
    ]);
    const ids = lines.map((l) => Number(l.sample_id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    const sel = JSON.parse(files['sel/bookstore.jsonl'].split('\n')[0]) as Record<string, unknown>;
    expect(Object.keys(sel).pop()).toBe('tools');
    const manifest = JSON.parse(files['manifest.json']) as { files: { path: string; sha256: string }[] };
    expect(manifest.files.map((f) => f.path)).toContain('slot/bookstore.jsonl');
    expect(manifest.files.map((f) => f.path)).not.toContain('stats.json');
  });

  test('a rerun with nothing changed keeps the outputs on disk; a damaged or missing one is rewritten', async () => {
    const out = path.join(dir, 'out');
    const cache = path.join(dir, 'cache');
    const first = await toyGenerate(out, cache);
    const files = snapshot(first.outDir);
    expect(first.stats?.timing.outputsReused).toBe(false);

    const again = await toyGenerate(out, cache);
    expect(again.stats?.timing.outputsReused).toBe(true);
    expect(snapshot(out)).toEqual(files);

    writeFileSync(path.join(out, 'slot', 'bookstore.jsonl'), 'tampered\n');
    rmSync(path.join(out, 'tools', 'sel', 'bookstore.json'));
    const repaired = await toyGenerate(out, cache);
    expect(repaired.stats?.timing.outputsReused).toBe(false);
    expect(repaired.stats?.timing.stages.gold).toMatchObject({ runs: 0 });
    expect(snapshot(out)).toEqual(files);
  });

  test('answer outputs become plain JSON', () => {
    expect(answerJson([{ kind: 'scalar', value: 3 }])).toBe(3);
    expect(answerJson([{ kind: 'list', values: ['a', null] }])).toEqual(['a', null]);
    expect(answerJson([{ kind: 'table', columns: ['x', 'y'], rows: [[1, 'a']] }])).toEqual([{ x: 1, y: 'a' }]);
    expect(
      answerJson([
        { kind: 'scalar', value: 1 },
        { kind: 'list', values: [2] },
      ]),
    ).toEqual([1, [2]]);
  });

  test('a SEL sample lists its tool names last', () => {
    const verdict = { ok: true, category: 'ok', message: '' };
    const record = sampleRecord(
      'toy',
      'sel',
      { id: '7', index: 0, dbId: 'd', question: 'q', evidence: 'e', sql: 's', difficulty: null },
      {
        ok: true,
        sequence: {
          initialization: [],
          calls: [],
          answerLabels: [],
          bindings: { get_t_c: { slotTool: 'retrieve_data', boundArguments: { key_name: 't_c' } } },
          derivedKeys: [],
        },
        outputs: [],
        gold: { columns: [], rows: [], executedSql: 's', ordered: false, distinct: false },
        verification: { format: verdict, execution: verdict, semantic: verdict, differential: verdict },
      },
      FORMULATION_DEFS.sel,
    );
    expect(record.tools).toEqual(['get_t_c']);
    expect(Object.keys(record)[0]).toBe('sample_id');
  });
});
