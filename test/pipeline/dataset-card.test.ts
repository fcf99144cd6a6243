import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { datasetCard, yamlScalar } from '../../pipeline/dataset-card.js';
import { generate } from '../../pipeline/generate.js';
import { accept } from '../../core/outcome.js';
import type { Manifest, RunDescription } from '../../pipeline/manifest.js';
import type { DeterministicStats, RunStats, Tally } from '../../pipeline/stats.js';
import { nullExecutor, toyConfig, toyStages } from './fixtures/toy.js';

/**
 * The dataset card (README.md of the output) and the manifest's provenance: valid YAML front
 * matter, tables that agree with stats.json, the same bytes on a rerun, and hashes that are
 * those of the files the run read.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const demo = path.resolve(here, '../../seeds/demo');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-card-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sha256Of = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const read = (out: string, file: string) => readFileSync(path.join(out, file), 'utf8');

async function toyGenerate(out: string, cacheDir: string) {
  return generate({
    config: toyConfig({ source: demo, out, cacheDir, concurrency: 4 }),
    executor: nullExecutor,
    stages: toyStages().stages,
  });
}

/** The card split into its YAML front matter (parsed) and its Markdown body. */
function splitCard(card: string): { meta: Record<string, unknown>; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(card);
  expect(match).not.toBeNull();
  return { meta: parseYaml(match![1]) as Record<string, unknown>, body: match![2] };
}

/** The rows of the Markdown table after the line starting with `heading`, cells trimmed, header and rule dropped. */
function tableAfter(body: string, heading: string): string[][] {
  const lines = body.split('\n');
  let i = lines.findIndex((line) => line.startsWith(heading)) + 1;
  expect(i).toBeGreaterThan(0);
  while (i < lines.length && !lines[i].startsWith('|') && !lines[i].startsWith('#')) i++;
  const rows: string[][] = [];
  for (; lines[i]?.startsWith('|'); i++)
    rows.push(
      lines[i]
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  return rows.slice(2);
}

describe('dataset card', () => {
  test('README.md: Hugging Face front matter, counts and funnel as in stats.json, in the manifest; byte-identical on reruns', async () => {
    const out = path.join(dir, 'a');
    const cache = path.join(dir, 'cache');
    const first = await toyGenerate(out, cache);
    const card = read(out, 'README.md');
    const stats = JSON.parse(read(out, 'stats.json')) as RunStats;
    const manifest = JSON.parse(read(out, 'manifest.json')) as Manifest;

    const { meta, body } = splitCard(card);
    expect(meta).toMatchObject({
      license: 'mit',
      language: ['en'],
      pretty_name: 'bird-dev: verified tool-calling samples (SLOT, SEL)',
    });
    expect(meta.size_categories).toEqual(['n<1K']);
    // One config per formulation, its glob matching exactly that formulation's sample files.
    const configs = meta.configs as { config_name: string; data_files: { split: string; path: string }[] }[];
    expect(configs.map((c) => c.config_name)).toEqual(['slot', 'sel']);
    for (const c of configs) {
      expect(c.data_files).toEqual([{ split: 'dev', path: `${c.config_name}/*.jsonl` }]);
      expect(existsSync(path.join(out, c.config_name, 'bookstore.jsonl'))).toBe(true);
    }

    // Counts per database × formulation, and the total row.
    const counts = tableAfter(body, '## Counts');
    for (const [db, ...cells] of counts) {
      const name = db.replace(/[`*]/g, '');
      (['slot', 'sel'] as const).forEach((f, i) => {
        const tally = name === 'total' ? stats.formulations[f]!.total : stats.formulations[f]!.byDb[name];
        expect(cells[i].replace(/\*/g, '')).toMatch(new RegExp(`^${tally.accepted} / ${tally.input} \\(`));
      });
    }
    expect(counts.map(([db]) => db)).toEqual([
      ...Object.keys(stats.formulations.slot!.byDb)
        .sort()
        .map((db) => `\`${db}\``),
      '**total**',
    ]);
    // The funnel, stage by stage.
    const funnel = tableAfter(body, 'SEL:');
    expect(
      funnel.map(([stage, input, passed, rejected]) => [
        stage.replace(/`/g, ''),
        Number(input),
        Number(passed),
        Number(rejected),
      ]),
    ).toEqual(
      Object.entries(stats.formulations.sel!.stages).map(([stage, t]) => [stage, t.input, t.accepted, t.rejected]),
    );
    // Rejection categories, per formulation (the toy stages reject nothing here).
    expect(body).toContain('No question was rejected.');
    for (const [reason, slot, sel] of tableAfter(body, 'Rejections by stage and category:')) {
      expect(Number(slot)).toBe(stats.formulations.slot!.total.rejectedBy[reason.replace(/`/g, '')] ?? 0);
      expect(Number(sel)).toBe(stats.formulations.sel!.total.rejectedBy[reason.replace(/`/g, '')] ?? 0);
    }
    expect(body).toContain("License: **mit**, as stated by the source's `README.md`");
    // Nothing that differs between machines or runs.
    expect(card).not.toContain(dir);
    expect(card).not.toContain(demo);
    expect(manifest.files.find((f) => f.path === 'README.md')).toMatchObject({
      sha256: sha256Of(path.join(out, 'README.md')),
    });
    expect(first.files.map((f) => f.path)).toContain('README.md');

    // A rerun that keeps the outputs, and a rerun into a fresh folder: the same card and manifest.
    const kept = await toyGenerate(out, cache);
    expect(kept.stats?.timing.outputsReused).toBe(true);
    expect(read(out, 'README.md')).toBe(card);
    const fresh = path.join(dir, 'b');
    await toyGenerate(fresh, cache);
    expect(read(fresh, 'README.md')).toBe(card);
    expect(read(fresh, 'manifest.json')).toBe(read(out, 'manifest.json'));

    // A card deleted by hand comes back.
    rmSync(path.join(out, 'README.md'));
    const repaired = await toyGenerate(out, cache);
    expect(repaired.stats?.timing.outputsReused).toBe(false);
    expect(read(out, 'README.md')).toBe(card);
  });

  test('the manifest records provenance: question file and its sha256, database fingerprints, license, LLM, reference times', async () => {
    const out = path.join(dir, 'out');
    await toyGenerate(out, path.join(dir, 'cache'));
    const manifest = JSON.parse(read(out, 'manifest.json')) as Manifest;
    expect(manifest.source).toEqual({
      questionFile: 'dev.json',
      sha256: sha256Of(path.join(demo, 'dev.json')),
      license: { id: 'mit', from: 'README.md', bird: false },
    });
    expect(manifest.databases).toEqual(
      ['bookstore', 'cycling_club'].map((db) => ({
        db,
        fingerprint: sha256Of(path.join(demo, 'dev_databases', db, `${db}.sqlite`)),
      })),
    );
    expect(manifest.llm).toBeNull();
    expect(manifest.referenceTimes).toEqual([]);
    expect(JSON.stringify(manifest)).not.toContain(dir);
  });

  test('accepted samples whose gold read the clock are listed with their reference time, in manifest and card', async () => {
    const out = path.join(dir, 'out');
    const { stages } = toyStages();
    const gold = stages.gold;
    // The toy gold stamps instance 3's answer as SQL reading the clock would.
    stages.gold = {
      ...gold,
      run: async (input, ctx) => {
        const outcome = await gold.run(input, ctx);
        return outcome.ok && input.instance.id === '3'
          ? accept({ ...outcome.value, referenceTime: '2026-01-02T03:04:05.000Z' })
          : outcome;
      },
    };
    await generate({
      config: toyConfig({ source: demo, out, cacheDir: path.join(dir, 'cache') }),
      executor: nullExecutor,
      stages,
    });
    const manifest = JSON.parse(read(out, 'manifest.json')) as Manifest;
    expect(manifest.referenceTimes).toEqual(
      (['slot', 'sel'] as const).map((formulation) => ({
        formulation,
        db: 'bookstore',
        id: '3',
        referenceTime: '2026-01-02T03:04:05.000Z',
      })),
    );
    expect(read(out, 'README.md')).toContain('2 samples (SLOT, SEL) come from gold SQL that reads the clock');
  });

  test("a license set in the config wins over the source's, and is part of the output-relevant config", async () => {
    const out = path.join(dir, 'out');
    await generate({
      config: toyConfig({ source: demo, out, cacheDir: path.join(dir, 'cache'), license: 'cc-by-4.0' }),
      executor: nullExecutor,
      stages: toyStages().stages,
    });
    const manifest = JSON.parse(read(out, 'manifest.json')) as Manifest;
    expect(manifest.source.license).toEqual({ id: 'cc-by-4.0', from: 'config', bird: false });
    expect(manifest.config.license).toBe('cc-by-4.0');
    expect(splitCard(read(out, 'README.md')).meta.license).toBe('cc-by-4.0');
  });
});

describe('dataset card rendering', () => {
  const tally = (input: number, accepted: number): Tally => ({
    input,
    accepted,
    rejected: input - accepted,
    rejectedBy: input > accepted ? { 'gold:gold_error': input - accepted } : {},
    strength: {},
  });
  const stats: DeterministicStats = {
    dataset: 'bird-dev',
    formulations: {
      rest: {
        total: tally(3, 2),
        byDb: { financial: tally(3, 2) },
        stages: { ingest: { input: 3, accepted: 3, rejected: 0 } },
      },
    },
    rest: {
      byDb: { financial: { before: 2, after: 1, published: 1 } },
      merges: [{ db: 'financial', kept: '1', merged: '2', reason: 'same SQL' }],
    },
  };
  const run: RunDescription = {
    generator: { name: 'nl2api', version: '9.9.9' },
    formatVersion: 2,
    dataset: 'bird-dev',
    layout: 'bird',
    source: {
      questionFile: 'dev.json',
      sha256: 'abc',
      license: { id: 'cc-by-sa-4.0', from: 'bird-layout', bird: true },
    },
    databases: [{ db: 'financial', fingerprint: 'def' }],
    llm: { provider: 'mistral', model: 'mistral-large-latest', roles: ['synthesis', 'judge'] },
    referenceTimes: [
      { formulation: 'rest', db: 'financial', id: '7', referenceTime: '2026-01-02T03:04:05.000Z' },
      { formulation: 'rest', db: 'financial', id: '8', referenceTime: '2026-01-02T03:04:06.000Z' },
    ],
    configHash: 'h',
    config: { formulations: ['rest'], pool: 'extended', dbIds: ['financial'] },
    counts: { rest: { input: 3, accepted: 2, rejected: 1 } },
  };

  test('BIRD: share-alike license assumed from the layout, attribution, both citations; LLM, reference times, REST dedup', () => {
    const card = datasetCard(run, stats);
    const { meta, body } = splitCard(card);
    expect(meta).toMatchObject({
      license: 'cc-by-sa-4.0',
      source_datasets: ['extended|bird'],
      configs: [{ config_name: 'rest', default: true, data_files: [{ split: 'dev', path: 'rest/*.jsonl' }] }],
    });
    expect(body).toContain("assumed: the source has BIRD's layout");
    expect(body).toContain('https://bird-bench.github.io');
    expect(body).toContain('eprint        = {2305.03111}');
    expect(body).toContain('eprint        = {2506.11266}');
    expect(body).toContain('`mistral/mistral-large-latest` for: synthesis, judge');
    expect(body).toContain('between 2026-01-02T03:04:05.000Z and 2026-01-02T03:04:06.000Z');
    expect(body).toContain('--db financial');
    expect(tableAfter(body, 'Rejections by stage and category:')).toEqual([['`gold:gold_error`', '1']]);
    expect(tableAfter(body, 'verified sample); 1 merge')).toEqual([['`financial`', '2', '1', '1']]);
    expect(datasetCard(run, stats)).toBe(card);
  });

  test('an unknown license says what to do; YAML scalars are quoted where plain ones would mislead', () => {
    const body = datasetCard(
      { ...run, source: { ...run.source, license: { id: 'unknown', from: 'none', bird: false } } },
      stats,
    );
    expect(splitCard(body).meta.license).toBe('unknown');
    expect(body).toContain('set `license`');
    expect(body).not.toContain('bird-bench');
    for (const value of ['yes', 'null', '1K<n<10K', 'a: b', '#x', 'slot/*.jsonl', '12'])
      expect(parseYaml(`v: ${yamlScalar(value)}`)).toEqual({ v: value });
    expect(yamlScalar('cc-by-sa-4.0')).toBe('cc-by-sa-4.0');
  });
});
