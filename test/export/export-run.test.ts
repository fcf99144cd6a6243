import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../config/load.js';
import { EXPORT_DEFAULTS } from '../../config/schema.js';
import { packageRoot } from '../../core/package-root.js';
import { generate } from '../../pipeline/generate.js';
import type { ToolSpec } from '../../core/model.js';
import { Ajv } from 'ajv';
import { DISTRACTORS } from '../../export/conversation.js';
import { LINE_FORMATS } from '../../export/formats.js';
import { REFUSAL } from '../../export/negatives.js';
import { runExport, type ExportOptions } from '../../export/run.js';
import { vakraVocabularyProblem } from './vakra-vocabulary.js';
import { DEMO_SOURCE, evalOptions, generateDemo } from '../eval/fixtures.js';
import { runEval } from '../../eval/run.js';

/**
 * `nl2api export` end to end on the embedded demo: every format for every formulation, each
 * line valid against its format's schema as read back from disk, counts that add up, splits
 * without shared databases, negatives that no offered tool answers, Parquet that an
 * independent reader gives back as the JSONL records, mixtures, and an unchanged output that
 * re-exports nothing.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const dataset = () => path.join(root, 'dataset');

function options(out: string, overrides: Partial<ExportOptions> = {}): ExportOptions {
  return {
    formats: [...EXPORT_DEFAULTS.formats],
    split: 'by-database',
    shares: { ...EXPORT_DEFAULTS.shares },
    seed: 7,
    negatives: 0.3,
    restTools: 4,
    rows: 5,
    encoding: 'o200k_base',
    nearDuplicate: 0.8,
    dropOver: false,
    from: [{ dir: dataset(), databases: DEMO_SOURCE, weight: 1 }],
    out: path.join(root, out),
    config: parseConfig({ source: DEMO_SOURCE, progress: 'none' }),
    ...overrides,
  };
}

const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('a whole export of the demo', () => {
  let out: string;
  let summary: Awaited<ReturnType<typeof runExport>>['summary'];
  beforeAll(async () => {
    const result = await runExport(options('all'));
    summary = result.summary;
    out = path.join(root, 'all');
  }, 120_000);

  test('counts add up, nothing invalid or failed, every formulation in every format', () => {
    const { counts } = summary;
    expect(counts.invalid).toBe(0);
    expect(counts.failed).toBe(0);
    expect(counts.loaded).toBe(counts.exported + counts.duplicates + counts.failed);
    expect(Object.keys(counts.examples).sort()).toEqual(['rest', 'sel', 'slot']);
    const examples: number[] = Object.values(counts.examples).flatMap((s) => Object.values(s ?? {}));
    expect(examples.reduce((a, b) => a + b, 0)).toBe(counts.exported + counts.negatives);
    expect(counts.negatives).toBeGreaterThan(0);
    for (const format of ['nl2api', 'openai', 'hermes', 'xlam'])
      for (const f of ['slot', 'sel', 'rest'])
        expect(readdirSync(path.join(out, format, f)).filter((n) => n.endsWith('.jsonl')).length).toBeGreaterThan(0);
  });

  test('every line read back from disk is valid against its format, and lines align with the provenance', () => {
    // Live API-Bench and VAKRA write one JSON array per database (tested below).
    for (const format of LINE_FORMATS.filter((f) => !['live-api-bench', 'vakra'].includes(f.name))) {
      for (const f of ['slot', 'sel', 'rest']) {
        for (const file of readdirSync(path.join(out, format.name, f))) {
          const lines = jsonl(path.join(out, format.name, f, file));
          const provenance = jsonl(path.join(out, 'provenance', f, file));
          expect(lines).toHaveLength(provenance.length);
          for (const line of lines) expect(format.schema.safeParse(line).success).toBe(true);
          if (format.name === 'nl2api')
            lines.forEach((line, i) => {
              expect(line.sample_id).toBe(provenance[i].sample_id);
              expect(line.negative).toBe(provenance[i].negative);
            });
        }
      }
    }
  });

  test('a conversation carries the real outputs of the gold calls, and ends with the answer in words', () => {
    const samples = jsonl(path.join(out, 'nl2api', 'slot', 'train.jsonl')).concat(
      ...['validation', 'test'].flatMap((s) =>
        existsSync(path.join(out, 'nl2api', 'slot', `${s}.jsonl`))
          ? [jsonl(path.join(out, 'nl2api', 'slot', `${s}.jsonl`))]
          : [],
      ),
    );
    const chats = ['train', 'validation', 'test'].flatMap((s) =>
      existsSync(path.join(out, 'openai', 'slot', `${s}.jsonl`))
        ? jsonl(path.join(out, 'openai', 'slot', `${s}.jsonl`))
        : [],
    );
    expect(chats).toHaveLength(samples.length);
    let checked = 0;
    samples.forEach((sample, i) => {
      if (sample.negative) return;
      const messages = chats[i].messages as { role: string; content?: string | null; tool_calls?: unknown[] }[];
      const toolMessages = messages.filter((m) => m.role === 'tool');
      expect(toolMessages).toHaveLength((sample.output as unknown[]).length);
      // A scalar answer is the last call's own output, as the sample records it.
      if (typeof sample.output_after_executing_api === 'number') {
        expect(JSON.parse(toolMessages[toolMessages.length - 1].content!)).toBe(sample.output_after_executing_api);
        expect(messages[messages.length - 1].content).toBe(`The answer is ${sample.output_after_executing_api}.`);
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(0);
  });

  test('negatives: no call, a refusal, and none of the tools that answer the question', () => {
    const natives = ['slot', 'sel', 'rest'].flatMap((f) =>
      readdirSync(path.join(out, 'nl2api', f)).flatMap((file) => jsonl(path.join(out, 'nl2api', f, file))),
    );
    const negatives = natives.filter((s) => s.negative);
    expect(negatives.length).toBe(summary.counts.negatives);
    for (const negative of negatives) {
      const positive = natives.find(
        (s) =>
          !s.negative &&
          s.sample_id === negative.sample_id &&
          s.formulation === negative.formulation &&
          s.db_id === negative.db_id,
      )!;
      expect(negative).toMatchObject({ output: [], expected_reply: REFUSAL });
      const gold = (positive.output as { name: string }[]).map((c) => c.name);
      for (const name of gold) expect(negative.tools).not.toContain(name);
    }
    const xlam = ['slot', 'sel', 'rest'].flatMap((f) =>
      readdirSync(path.join(out, 'xlam', f)).flatMap((file) => jsonl(path.join(out, 'xlam', f, file))),
    );
    expect(xlam.filter((x) => x.answers === '[]')).toHaveLength(negatives.length);
  });

  test('REST examples offer a few endpoints, the gold one among them', () => {
    for (const file of readdirSync(path.join(out, 'openai', 'rest'))) {
      const chats = jsonl(path.join(out, 'openai', 'rest', file));
      for (const chat of chats) {
        const tools = chat.tools as ToolSpec[];
        expect(tools.length).toBeLessThanOrEqual(4);
        const messages = chat.messages as { tool_calls?: { function: { name: string } }[] }[];
        for (const call of messages.flatMap((m) => m.tool_calls ?? []))
          expect(tools.map((t) => t.function.name)).toContain(call.function.name);
      }
    }
  });

  test("SLOT and SEL conversations: every gold call valid against the example's own tools; each key described once, in the prompt", () => {
    const ajv = new Ajv({ strict: false });
    const lines = (format: string, f: string) =>
      readdirSync(path.join(out, format, f)).flatMap((file) => jsonl(path.join(out, format, f, file)));
    for (const f of ['slot', 'sel']) {
      const chats = lines('openai', f);
      const hermes = lines('hermes', f);
      const xlam = lines('xlam', f);
      expect(hermes).toHaveLength(chats.length);
      chats.forEach((chat, i) => {
        const tools = chat.tools as ToolSpec[];
        const byName = new Map(tools.map((t) => [t.function.name, t.function.parameters]));
        const messages = chat.messages as {
          role: string;
          content?: string;
          tool_calls?: { function: { name: string; arguments: string } }[];
        }[];
        for (const { function: call } of messages.flatMap((m) => m.tool_calls ?? [])) {
          // The name offered, every argument declared, every key and choice among its enum.
          expect(byName.has(call.name)).toBe(true);
          const valid = ajv.validate(byName.get(call.name)!, JSON.parse(call.arguments));
          expect(ajv.errorsText()).toBe('No errors');
          expect(valid).toBe(true);
        }
        // Keys are listed in no tool's description: once each, in the system prompt.
        for (const tool of tools) expect(JSON.stringify(tool)).not.toContain('\\nKeys:\\n');
        const glossary = (messages[0].content ?? '').split('\n').filter((line) => /^\S+: /.test(line));
        const keys = glossary.map((line) => line.slice(0, line.indexOf(': ')));
        expect(new Set(keys).size).toBe(keys.length);
        // Hermes and xLAM offer the very same tools.
        const system = (hermes[i].conversations as { value: string }[])[0].value;
        for (const tool of tools) expect(system).toContain(JSON.stringify(tool));
        const xlamTools = JSON.parse(xlam[i].tools as string) as { name: string }[];
        expect(xlamTools.map((t) => t.name)).toEqual(tools.map((t) => t.function.name));
      });
    }
  });

  test('SLOT and SEL conversations offer the tools their calls use and a few others, the keys of their own tables', () => {
    const chats = readdirSync(path.join(out, 'openai', 'slot')).flatMap((file) =>
      jsonl(path.join(out, 'openai', 'slot', file)),
    );
    for (const chat of chats) {
      const tools = chat.tools as ToolSpec[];
      const messages = chat.messages as { tool_calls?: { function: { name: string } }[] }[];
      const used = new Set(messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name));
      // A negative offers as many as its question's sample would, none it calls.
      if (used.size > 0) expect(tools.length).toBeLessThanOrEqual(used.size + DISTRACTORS);
      const filter = tools.find((t) => t.function.name === 'filter_data');
      const keys = (filter?.function.parameters as { properties: { key_name: { enum: string[] } } } | undefined)
        ?.properties.key_name.enum;
      // A derived key (`…_equal_to`, `count_…`) is offered only to the sample whose calls use it.
      const calls = JSON.stringify(messages.flatMap((m) => m.tool_calls ?? []));
      for (const key of keys ?? [])
        if (/_(equal_to|if_then_else|like|is_null)$|^count_/.test(key)) expect(calls).toContain(`\\"${key}\\"`);
    }
  });

  test('splits by database: no database in two splits; the leakage report says so', () => {
    expect(summary.leakage.sharedDatabases).toEqual([]);
    const leakage = JSON.parse(readFileSync(path.join(out, 'leakage.json'), 'utf8')) as typeof summary.leakage;
    expect(leakage).toEqual(summary.leakage);
    const dbsBySplit = new Map<string, Set<unknown>>();
    for (const f of ['slot', 'sel', 'rest'])
      for (const file of readdirSync(path.join(out, 'nl2api', f)))
        for (const s of jsonl(path.join(out, 'nl2api', f, file)))
          dbsBySplit.set(String(s.db_id), (dbsBySplit.get(String(s.db_id)) ?? new Set()).add(s.split));
    for (const splits of dbsBySplit.values()) expect(splits.size).toBe(1);
  });

  test('the Hugging Face layout: Parquet shards read back as the JSONL records, a config per formulation', async () => {
    const card = readFileSync(path.join(out, 'hf', 'README.md'), 'utf8');
    for (const f of ['slot', 'sel', 'rest']) {
      expect(card).toContain(`- config_name: ${f}`);
      for (const shard of readdirSync(path.join(out, 'hf', 'data', f))) {
        const [, split] = /^(\w+)-00000-of-00001\.parquet$/.exec(shard) ?? [];
        expect(split).toBeDefined();
        expect(card).toContain(`path: "data/${f}/${split}-*.parquet"`);
        const buffer = readFileSync(path.join(out, 'hf', 'data', f, shard));
        const rows = await parquetReadObjects({
          file: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength),
        });
        const records = jsonl(path.join(out, 'nl2api', f, `${split}.jsonl`));
        expect(rows).toHaveLength(records.length);
        rows.forEach((row, i) => {
          expect(row.sample_id).toBe(records[i].sample_id);
          expect(row.input).toBe(records[i].input);
          expect(JSON.parse(row.gold_answer as string)).toEqual(records[i].gold_answer);
          expect(JSON.parse(row.output as string)).toEqual(records[i].output);
        });
      }
    }
    // The generated output's card, its metadata kept and its files restated.
    const sourceCard = readFileSync(path.join(dataset(), 'README.md'), 'utf8');
    expect(card).toContain(/^pretty_name: .*$/m.exec(sourceCard)![0]);
    expect(card).not.toContain('slot/*.jsonl');
    expect(card.match(/^configs:$/gm)).toHaveLength(1);
    expect(card).toMatch(/^---\nlicense: /);
    expect(card).toContain('## This export');
  });

  test('token statistics per training format and formulation', () => {
    for (const format of ['openai', 'hermes', 'xlam'])
      for (const f of ['slot', 'sel', 'rest'] as const) {
        const stats = summary.tokens[format][f]!;
        expect(stats.examples).toBeGreaterThan(0);
        expect(stats.p95).toBeGreaterThanOrEqual(stats.p50);
        expect(stats.max).toBeGreaterThanOrEqual(stats.p95);
      }
  });

  test("token statistics per split: they add up to the formulation's, with the tool specs' share", () => {
    for (const format of ['openai', 'hermes', 'xlam'])
      for (const f of ['slot', 'sel', 'rest'] as const) {
        const stats = summary.tokens[format][f]!;
        const splits = Object.values(stats.splits);
        expect(splits.reduce((n, s) => n + s.examples, 0)).toBe(stats.examples);
        expect(splits.reduce((n, s) => n + s.total, 0)).toBe(stats.total);
        expect(Math.max(...splits.map((s) => s.max))).toBe(stats.max);
        expect(stats.toolShare).toBeGreaterThan(0);
        expect(stats.toolShare).toBeLessThan(1);
      }
    expect(summary.budget).toBeUndefined();
  });

  test('incremental: an unchanged output writes nothing; a changed one only the files that changed', async () => {
    const again = await runExport(options('all'));
    expect(again).toMatchObject({ unchanged: true, written: 0 });
    // Drop one SLOT sample of one database: only SLOT's files of its split change.
    const copy = path.join(root, 'changed-dataset');
    cpSync(dataset(), copy, { recursive: true });
    const file = path.join(copy, 'slot', readdirSync(path.join(copy, 'slot'))[0]);
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    writeFileSync(file, `${lines.slice(1).join('\n')}\n`);
    const changed = await runExport(options('all', { from: [{ dir: copy, databases: DEMO_SOURCE, weight: 1 }] }));
    expect(changed.unchanged).toBe(false);
    expect(changed.written).toBeGreaterThan(0);
    expect(changed.written).toBeLessThan(Object.keys(changed.summary.files).length / 2);
    expect(changed.summary.counts.loaded).toBe(summary.counts.loaded - 1);
  }, 120_000);
});

describe("IBM VAKRA's files: what its runner, its evaluator and its mapping script read", () => {
  const vakra = () => path.join(root, 'all', 'vakra');
  const arrays = (folder: string) =>
    existsSync(folder)
      ? readdirSync(folder).map((file) => ({
          db: file.replace(/\.json$/, ''),
          records: JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as Record<string, unknown>[],
        }))
      : [];

  test('per split and capability: input and ground truth pair by uuid and turn id, one file per domain', () => {
    let records = 0;
    for (const split of readdirSync(vakra()))
      for (const capability of ['capability_1_bi_apis', 'capability_2_dashboard_apis']) {
        const inputs = arrays(path.join(vakra(), split, capability, 'input'));
        const outputs = arrays(path.join(vakra(), split, capability, 'output'));
        expect(outputs.map((o) => o.db)).toEqual(inputs.map((i) => i.db));
        inputs.forEach(({ db, records: input }, i) => {
          const output = outputs[i].records as {
            uuid: string;
            domain: string;
            output: { turn_id: number; sequence: unknown }[];
          }[];
          expect(output.map((r) => r.uuid)).toEqual(input.map((r) => r.uuid));
          for (const [j, record] of input.entries()) {
            const turns = (record as { dialogue: { turns: { turn_id: number }[] } }).dialogue.turns;
            expect(record.domain).toBe(db);
            expect(output[j].output.map((t) => t.turn_id)).toEqual(turns.map((t) => t.turn_id));
            expect(Array.isArray(output[j].output[0].sequence)).toBe(false);
            records++;
          }
        });
      }
    expect(records).toBeGreaterThan(0);
  });

  test("capability 1: every call in VAKRA's vocabulary, starting from initialize_active_data; one universe per sample", () => {
    for (const split of readdirSync(vakra())) {
      const universes = parseYaml(
        readFileSync(path.join(vakra(), split, 'mcp_tool_universe_id_mapping.yaml'), 'utf8'),
      ) as Record<string, { server_type: string; domain: string }>;
      const samples = arrays(path.join(vakra(), split, 'capability_1_bi_apis', 'output')).flatMap((f) => f.records) as {
        uuid: string;
        domain: string;
        output: { sequence: { tool_call: { name: string; arguments: Record<string, unknown> }[] } }[];
      }[];
      expect(Object.keys(universes).sort()).toEqual(samples.map((s) => s.uuid).sort());
      for (const sample of samples) {
        const [init, ...calls] = sample.output[0].sequence.tool_call;
        expect(init.name).toBe('initialize_active_data');
        const selection = universes[sample.uuid].server_type === 'selection';
        expect(selection).toBe(sample.uuid.startsWith('sel-'));
        for (const call of calls) expect(vakraVocabularyProblem(call, selection)).toBeUndefined();
      }
    }
  });

  test.each(['slot', 'sel'] as const)(
    "%s: the ground truth's calls, read back as VAKRA's runner writes an agent's, complete every sample (keys in VAKRA's names)",
    async (formulation) => {
      // The runner records the agent's calls after its own get_data: the ground truth's, init left out.
      const predictions = path.join(root, `vakra-as-predictions-${formulation}`);
      mkdirSync(predictions, { recursive: true });
      // An aggregate's value a later call uses is written in (VAKRA references no value): read
      // back, nothing says the aggregate was used, so it counts as part of the answer.
      let written = 0;
      let writtenIn = 0;
      for (const split of readdirSync(vakra()))
        for (const { db, records } of arrays(path.join(vakra(), split, 'capability_1_bi_apis', 'output'))) {
          const mine = (records as { uuid: string; output: { sequence: { tool_call: unknown[] } }[] }[])
            .filter((r) => r.uuid.startsWith(`${formulation}-`))
            .map((r) => ({
              ...r,
              output: r.output.map((turn) => ({
                ...turn,
                sequence: { tool_call: turn.sequence.tool_call.slice(1) },
              })),
            }));
          written += mine.length;
          writtenIn += mine.filter((r) => {
            const calls = r.output[0].sequence.tool_call as { name: string }[];
            return calls.some((c, i) => /^(aggregate_data|compute_data_)/.test(c.name) && i < calls.length - 1);
          }).length;
          writeFileSync(path.join(predictions, `${split}-${db}.json`), JSON.stringify(mine));
        }
      const { summary } = await runEval(
        evalOptions(root, {
          formulation,
          predictions: { path: predictions, format: 'vakra' },
          report: `vakra-gt-${formulation}`,
        }),
      );
      expect(written).toBeGreaterThan(0);
      expect(summary.predictions).toMatchObject({ read: written, unknown: [], invalid: [], duplicates: [] });
      const [model] = summary.models;
      expect(Math.round(model.completion.mean * model.attempts)).toBe(written - writtenIn);
    },
    120_000,
  );

  test('what VAKRA cannot hold is left out with its reason: negatives, and calls it has no form for', () => {
    const summary = JSON.parse(readFileSync(path.join(root, 'all', 'export.json'), 'utf8')) as {
      counts: { negatives: number };
      unsupported: { format: string; key: string; message: string }[];
    };
    const left = summary.unsupported.filter((u) => u.format === 'vakra');
    expect(left.filter((u) => u.key.endsWith('!negative')).length).toBe(summary.counts.negatives);
    for (const entry of left) expect(entry.message).toMatch(/VAKRA|table|value|column/);
  });
});

describe('a token budget', () => {
  test('--max-tokens reports the examples over it; --drop-over leaves them out of every format and the provenance', async () => {
    const formats: ExportOptions['formats'] = ['nl2api', 'openai', 'xlam'];
    const reported = (await runExport(options('budget-report', { formats }))).summary;
    const budget = Math.round(reported.tokens.openai.slot!.p50);
    const told = (await runExport(options('budget-told', { formats, maxTokens: budget }))).summary;
    const overOpenai = told.budget!.over.openai.slot!;
    expect(overOpenai).toBeGreaterThan(0);
    expect(told.counts.dropped).toBe(0);
    expect(told.counts.examples).toEqual(reported.counts.examples);

    const dir = path.join(root, 'budget-dropped');
    const { summary } = await runExport(options('budget-dropped', { formats, maxTokens: budget, dropOver: true }));
    const { dropped } = summary.budget!;
    expect(summary.counts.dropped).toBe(dropped.length);
    expect(summary.budget!.over.openai.slot).toBe(overOpenai);
    for (const d of dropped) expect(Math.max(...Object.values(d.tokens))).toBeGreaterThan(budget);
    const total = (counts: typeof summary.counts) =>
      Object.values(counts.examples).reduce(
        (n, perSplit) => n + Object.values(perSplit ?? {}).reduce((a, b) => a + b, 0),
        0,
      );
    expect(total(summary.counts) + dropped.length).toBe(total(reported.counts));
    for (const format of ['openai', 'xlam'])
      for (const [f, stats] of Object.entries(summary.tokens[format])) {
        expect(stats.max).toBeLessThanOrEqual(budget);
        expect(stats.examples + dropped.filter((d) => d.formulation === f).length).toBe(
          reported.tokens[format][f as 'slot']!.examples,
        );
      }
    // Every format's lines still align with the provenance, which lists none of the dropped.
    const droppedKeys = new Set(dropped.map((d) => d.key));
    for (const f of ['slot', 'sel', 'rest'])
      for (const file of readdirSync(path.join(dir, 'provenance', f))) {
        const provenance = jsonl(path.join(dir, 'provenance', f, file));
        for (const line of provenance) expect(droppedKeys.has(line.key as string)).toBe(false);
        for (const format of formats) expect(jsonl(path.join(dir, format, f, file))).toHaveLength(provenance.length);
      }
  }, 120_000);
});

describe('Live API-Bench: read by an independent harness, and re-imported to the same samples', () => {
  const HARNESS = path.join(packageRoot(), 'test', 'export', 'live_api_bench_check.py');

  test('the Python harness (the fields the published format documents) accepts every exported sample', () => {
    const out = path.join(root, 'all', 'live-api-bench');
    const folders = ['slot', 'sel', 'rest'].flatMap((f) =>
      readdirSync(path.join(out, f))
        .filter((d) => ['train', 'validation', 'test'].includes(d))
        .map((d) => path.join(out, f, d)),
    );
    expect(folders.length).toBeGreaterThanOrEqual(3);
    const result = spawnSync('python3', [HARNESS, ...folders], { encoding: 'utf8' });
    expect(result.error).toBeUndefined();
    const report = JSON.parse(result.stdout) as { samples: number; ok: number; failures: unknown[] };
    expect(report.failures).toEqual([]);
    expect(result.status).toBe(0);
    expect(report.ok).toBe(report.samples);
    expect(report.samples).toBeGreaterThan(0);
  });

  test('nl2api generate --source <export> gives the samples the export was made from', async () => {
    const { summary } = await runExport(
      options('round-trip', { formats: ['live-api-bench'], formulations: ['slot'], split: 'none', negatives: 0.5 }),
    );
    // What the published runtime has no tools for is left out of the export, so it cannot come back.
    const left = new Set(summary.unsupported.map((u) => u.key.split('/').slice(-2).join('/')));
    const exported = path.join(root, 'round-trip', 'live-api-bench', 'slot', 'train');
    // The databases beside the samples, as a user replaying the published format keeps them.
    symlinkSync(path.join(DEMO_SOURCE, 'dev_databases'), path.join(exported, 'databases'));
    const again = path.join(root, 're-imported');
    await generate({
      config: parseConfig({
        source: exported,
        datasetName: 'nl2api-demo',
        formulations: ['slot'],
        out: again,
        cacheDir: path.join(root, 're-import-cache'),
        progress: 'none',
      }),
    });
    const fields = (record: Record<string, unknown>) => ({
      id: record.sample_id,
      input: record.input,
      evidence: record.evidence,
      query: record.query,
      difficulty: record.difficulty,
      gold_answer: record.gold_answer,
      initialization_step: record.initialization_step,
      output: record.output,
      answer_labels: record.answer_labels,
      output_after_executing_api: record.output_after_executing_api,
    });
    const read = (dir: string, keep: (db: string, id: unknown) => boolean = () => true) =>
      readdirSync(path.join(dir, 'slot'))
        .sort()
        .flatMap((file) =>
          jsonl(path.join(dir, 'slot', file))
            .filter((record) => keep(file.replace(/\.jsonl$/, ''), record.sample_id))
            .map(fields),
        );
    const original = read(dataset(), (db, id) => !left.has(`${db}/${String(id)}`));
    expect(read(again)).toEqual(original);
    expect(original.length).toBeGreaterThan(10);
  }, 120_000);
});

describe('splits and mixtures', () => {
  test('by question: every database in every split in proportion; near-duplicates counted', async () => {
    const { summary } = await runExport(
      options('by-question', { split: 'by-question', formats: ['nl2api'], formulations: ['slot'], negatives: 0 }),
    );
    const slot = summary.counts.examples.slot!;
    expect(slot.train! + slot.validation! + slot.test!).toBe(summary.counts.exported);
    expect(slot.train!).toBeGreaterThan(slot.test!);
    expect(summary.leakage.sharedDatabases.length).toBeGreaterThan(0);
    expect(summary.leakage.nearDuplicateQuestions.pairs).toBeGreaterThanOrEqual(0);
  }, 120_000);

  test('two sources: the second one’s repeated questions are dropped with their provenance; weights copy', async () => {
    const { summary } = await runExport(
      options('mixture', {
        formats: ['nl2api'],
        formulations: ['slot'],
        negatives: 0,
        split: 'none',
        from: [
          { dir: dataset(), databases: DEMO_SOURCE, weight: 2 },
          { dir: dataset(), databases: DEMO_SOURCE, weight: 1 },
        ],
      }),
    );
    const loadedEach = summary.sources[0].samples;
    expect(summary.sources.map((s) => s.name)).toEqual(['nl2api-demo', 'nl2api-demo-2']);
    expect(summary.counts.duplicates).toBe(loadedEach);
    expect(summary.duplicates[0]).toMatchObject({
      key: expect.stringMatching(/^nl2api-demo-2\//),
      of: expect.stringMatching(/^nl2api-demo\//),
      by: 'question',
    });
    expect(summary.counts.examples.slot!.train).toBe(2 * loadedEach);
    const records = jsonl(path.join(root, 'mixture', 'nl2api', 'slot', 'train.jsonl'));
    expect(new Set(records.map((r) => r.copy))).toEqual(new Set([0, 1]));
    expect(new Set(records.map((r) => r.source))).toEqual(new Set(['nl2api-demo']));
  }, 120_000);
});

describe('bad input gets a clear error', () => {
  test('a folder that is not a generated output', async () => {
    await expect(
      runExport(options('bad', { from: [{ dir: DEMO_SOURCE, databases: DEMO_SOURCE, weight: 1 }] })),
    ).rejects.toThrow(/manifest\.json/);
  });

  test('databases that are not the ones the output was generated from', async () => {
    const other = path.join(root, 'other-source');
    cpSync(DEMO_SOURCE, other, { recursive: true });
    const db = readdirSync(path.join(other, 'dev_databases'))[0];
    const sqlite = path.join(other, 'dev_databases', db, `${db}.sqlite`);
    const Database = (await import('better-sqlite3')).default;
    const handle = new Database(sqlite);
    handle.exec('CREATE TABLE nl2api_changed (x INTEGER)');
    handle.close();
    await expect(
      runExport(options('bad-db', { formats: ['nl2api'], from: [{ dir: dataset(), databases: other, weight: 1 }] })),
    ).rejects.toThrow(/changed since the dataset was generated/);
  }, 60_000);
});
