import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parseConfig } from '../../config/load.js';
import { EXPORT_DEFAULTS } from '../../config/schema.js';
import type { GoldResult, SelBinding, ToolCall, ToolSpec } from '../../core/model.js';
import { NARROWING, sequenceRule } from '../../export/negative-coverage.js';
import { runExport, type ExportSummary } from '../../export/run.js';
import { toolsOf } from '../../runtime/slot/catalog.js';
import { DEMO_SOURCE, generateDemo } from '../eval/fixtures.js';

/**
 * Negatives that are right: what is left of a negative's tools cannot answer its question.
 * The coverage rule's cases on small tool lists, then exports of the demo whose samples were
 * changed so that a tool left would answer: that tool is not offered, or the negative is not
 * made and export.json says why.
 */

const spec = (name: string): ToolSpec => ({ type: 'function', function: { name, description: name, parameters: {} } });
const call = (name: string, label: string): ToolCall => ({ name, arguments: {}, label });
const gold = (columns: number): GoldResult => ({
  columns: Array.from({ length: columns }, (_, i) => `c${i}`),
  rows: [Array.from({ length: columns }, (_, i) => i)],
  executedSql: '',
  ordered: false,
  distinct: false,
});
const SLOT_TOOLS = toolsOf('extended').map(spec);

describe('the coverage rule (SLOT and SEL)', () => {
  test('a removed max: a descending sort with limit 1 and a retrieve would give it, so every narrowing tool goes too', () => {
    // BIRD dev student_club 1378, "the highest amount of budget spent": MAX(spent).
    const rule = sequenceRule(
      { goldCalls: [call('aggregate_data', 'MAX_1')], tools: SLOT_TOOLS, bindings: undefined, gold: gold(1) },
      [7],
    );
    expect(rule).toEqual({
      ok: true,
      category: 'no_narrowing',
      removed: ['aggregate_data', 'combine_data', 'group_data_by', 'retrieve_data', 'select_unique_values'],
    });
  });

  test('a removed sort and retrieve: a max, a filter on it and an argmin would give the same row, so aggregate_data goes', () => {
    // BIRD dev financial 107: ORDER BY A11 DESC, birth_date ASC LIMIT 1 (sort, sort, retrieve).
    const rule = sequenceRule(
      {
        goldCalls: [call('sort_data', 'SORT_1'), call('sort_data', 'SORT_2'), call('retrieve_data', 'SELECT_1')],
        tools: SLOT_TOOLS,
        bindings: undefined,
        gold: gold(1),
      },
      [20],
    );
    expect(rule.ok && rule.removed).toEqual([
      'aggregate_data',
      'combine_data',
      'group_data_by',
      'retrieve_data',
      'select_unique_values',
      'sort_data',
    ]);
  });

  test('what is left only keeps or widens tables: filters, sorts, transforms, unions, joins and calculations', () => {
    const rule = sequenceRule(
      { goldCalls: [call('filter_data', 'F')], tools: SLOT_TOOLS, bindings: undefined, gold: gold(2) },
      [3, 5],
    );
    const left = SLOT_TOOLS.map((t) => t.function.name).filter((name) => rule.ok && !rule.removed.includes(name));
    expect(left).toEqual(['sort_data', 'transform_data', 'union_data', 'calculate', 'join_data']);
    expect(left.some((name) => NARROWING.has(name))).toBe(false);
  });

  test('an answer as wide as a starting table: filters and sorts alone could give it, so no negative', () => {
    const rule = sequenceRule(
      { goldCalls: [call('retrieve_data', 'S')], tools: SLOT_TOOLS, bindings: undefined, gold: gold(3) },
      [9, 3],
    );
    expect(rule).toMatchObject({ ok: false, category: 'negative:as_wide_as_start' });
  });

  const bindings: Record<string, SelBinding> = {
    select_data_equal_to: { slotTool: 'filter_data', boundArguments: { condition: 'equal_to' } },
    aggregate_data_max: { slotTool: 'aggregate_data', boundArguments: { aggregation_type: 'max' } },
    sort_data_descending: { slotTool: 'sort_data', boundArguments: { ascending: false } },
    get_t_a: { slotTool: 'retrieve_data', boundArguments: { key_name: 't_a' } },
    get_t_b: { slotTool: 'retrieve_data', boundArguments: { key_name: 't_b' } },
  };

  test('SEL, getters only left: they read a starting column as it is, and are tried rather than all removed', () => {
    const rule = sequenceRule(
      {
        goldCalls: [call('select_data_equal_to', 'F'), call('get_t_a', 'S')],
        tools: ['select_data_equal_to', 'get_t_a', 'get_t_b'].map(spec),
        bindings,
        gold: gold(1),
      },
      [2],
    );
    expect(rule).toEqual({
      ok: true,
      category: 'getters_only',
      removed: ['get_t_a', 'select_data_equal_to'],
      getters: ['get_t_b'],
    });
  });

  test('SEL with a reshaping tool left: getters and other narrowing tools go by their SLOT tool', () => {
    const rule = sequenceRule(
      {
        goldCalls: [call('select_data_equal_to', 'F'), call('get_t_a', 'S')],
        tools: Object.keys(bindings).map(spec),
        bindings,
        gold: gold(1),
      },
      [2],
    );
    expect(rule).toEqual({
      ok: true,
      category: 'no_narrowing',
      removed: ['aggregate_data_max', 'get_t_a', 'get_t_b', 'select_data_equal_to'],
    });
  });
});

describe('exports of the demo whose remaining tools could answer', () => {
  let root: string;
  let summary: ExportSummary;
  let records: Record<string, unknown>[];
  const dataset = () => path.join(root, 'dataset');
  const samplesOf = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const rewrite = (formulation: string, id: string, change: (sample: Record<string, unknown>) => void) => {
    const file = path.join(dataset(), formulation, 'bookstore.jsonl');
    const samples = samplesOf(file);
    change(samples.find((s) => s.sample_id === id)!);
    writeFileSync(file, samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
  };
  const negative = (formulation: string, id: string) =>
    records.find((r) => r.negative && r.formulation === formulation && r.db_id === 'bookstore' && r.sample_id === id);

  beforeAll(async () => {
    root = await generateDemo();
    // SEL 0 (a filtered title): its answer is now the first genre of the book table, which
    // get_book_genre, a getter its negative keeps otherwise, reads off the starting table.
    const db = new Database(path.join(DEMO_SOURCE, 'dev_databases', 'bookstore', 'bookstore.sqlite'), {
      readonly: true,
    });
    const { genre } = db.prepare('SELECT genre FROM book ORDER BY rowid LIMIT 1').get() as { genre: string };
    db.close();
    rewrite('sel', '0', (s) => (s.gold_answer = [[genre]]));
    // SLOT 1 now answers with as many columns as its starting table; SLOT 3 answers nothing.
    rewrite('slot', '1', (s) => (s.gold_answer = [Array.from({ length: 40 }, (_, i) => i)]));
    rewrite('slot', '3', (s) => (s.gold_answer = []));
    const result = await runExport({
      ...EXPORT_DEFAULTS,
      formats: ['nl2api'],
      split: 'none',
      seed: 7,
      negatives: 1,
      restTools: 0,
      from: [{ dir: dataset(), databases: DEMO_SOURCE, weight: 1 }],
      out: path.join(root, 'out'),
      config: parseConfig({ source: DEMO_SOURCE, progress: 'none' }),
    });
    summary = result.summary;
    records = ['slot', 'sel', 'rest'].flatMap((f) => samplesOf(path.join(root, 'out', 'nl2api', f, 'train.jsonl')));
  }, 180_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('a SEL getter that reads the answer off the starting table is not offered; the others are', () => {
    const tools = negative('sel', '0')!.tools as string[];
    expect(tools).not.toContain('get_book_genre');
    expect(tools).toContain('get_book_author_id');
  });

  test('a REST endpoint whose response begins with the answer is not offered (the top 3 titles by price, for the top 1)', () => {
    // bookstore 20 is getTitleHighestPriceUsd; getTitleTop3ByPriceUsd (13) lists it first.
    const tools = negative('rest', '20')!.tools as string[];
    expect(tools).not.toContain('getTitleHighestPriceUsd');
    expect(tools).not.toContain('getTitleTop3ByPriceUsd');
    expect(tools.length).toBeGreaterThan(0);
  });

  test('no SLOT negative offers a tool that narrows a table', () => {
    const slot = records.filter((r) => r.negative && r.formulation === 'slot');
    expect(slot.length).toBeGreaterThan(0);
    for (const r of slot) for (const name of r.tools as string[]) expect(NARROWING.has(name)).toBe(false);
  });

  test('a negative that cannot be made sure of is not made; export.json counts it and says why', () => {
    expect(negative('slot', '1')).toBeUndefined();
    expect(negative('slot', '3')).toBeUndefined();
    expect(summary.negativesDropped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          key: expect.stringMatching(/slot\/bookstore\/1$/),
          category: 'negative:as_wide_as_start',
        }),
        expect.objectContaining({
          key: expect.stringMatching(/slot\/bookstore\/3$/),
          category: 'negative:empty_answer',
        }),
      ]),
    );
    expect(summary.counts.negativesDropped).toBe(summary.negativesDropped.length);
    expect(summary.counts.negatives).toBe(records.filter((r) => r.negative).length);
  });
});
