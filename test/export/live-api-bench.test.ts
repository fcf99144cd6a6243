import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../config/load.js';
import { ExportConfigSchema, type LiveApiBenchLayout } from '../../config/schema.js';
import { mulberry32 } from '../../core/random.js';
import type { GoldResult, SelBinding, SqlValue, ToolCall, ToolSpec } from '../../core/model.js';
import type { EvalItem } from '../../eval/dataset.js';
import {
  liveApiBenchExample,
  LiveApiBenchExampleSchema,
  liveApiBenchUnsupported,
  liveApiBenchJson,
  liveApiBenchRestTools,
  PyFloat,
  sharedPart,
  squeezeAnswer,
} from '../../export/live-api-bench.js';
import {
  joinProblem,
  keyContextOf,
  makeSafe,
  publishedInitialization,
  publishedKeyName,
} from '../../eval/predictions/published-names.js';
import { parseDescriptionCsv } from '../../export/published/key-descriptions.js';
import { REFUSAL } from '../../export/negatives.js';
import { runExport } from '../../export/run.js';
import { exportSettings } from '../../export/settings.js';
import type { ExportSample } from '../../export/sample.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { liveApiBenchLayout } from '../../pipeline/sources/live-api-bench.js';
import { slotToolSpecs } from '../../runtime/slot/specs.js';
import { selToolSpecs } from '../../runtime/sel/specs.js';
import { DEMO_SOURCE, generateDemo } from '../eval/fixtures.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

/**
 * The Live API-Bench export (export/live-api-bench.ts): nl2api's keys under the published
 * runtime's names, the published init object, answers squeezed as the runtime returns them,
 * Python floats; the source layout that reads such a folder back; and the stdlib Python
 * harness that checks a folder against the published format.
 */

afterAll(removeTempDirs);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const HARNESS = path.join(HERE, 'live_api_bench_check.py');

const init = (
  tables: [alias: string, table: string][],
  joins: ToolCall['arguments'][] = [],
  label = 'starting_table_var',
): ToolCall => ({
  name: 'initialize_active_data',
  arguments: { database: 'db', tables: tables.map(([alias, table]) => ({ alias, table })), joins },
  label,
});
const join = (alias: string, ...on: [string, string][]) => ({
  type: 'inner',
  alias,
  on: on.map(([left, right]) => ({ left, right })),
});

describe('publishedKeyName: nl2api keys under the published runtime names', () => {
  const joined = keyContextOf(
    init(
      [
        ['T1', 'frpm'],
        ['T2', 'schools'],
      ],
      [join('T2', ['T1.CDSCode', 'T2.CDSCode'])],
    ),
  );

  test("columns made safe as make_safe does: strip, ' ' → _, no parentheses, / and - → _", () => {
    expect(publishedKeyName('frpm_Enrollment (K-12)', joined)).toBe('frpm_Enrollment_K_12');
    expect(publishedKeyName('frpm_Charter School (Y/N)', joined)).toBe('frpm_Charter_School_Y_N');
    expect(publishedKeyName('schools_CDSCode', joined)).toBe('schools_CDSCode');
    expect(makeSafe(' Percent (%) Eligible ')).toBe('Percent_%_Eligible');
  });

  test("a table's second alias is <table>_1 (nl2api: <table>_2), its first keeps the table name", () => {
    const selfJoin = keyContextOf(
      init(
        [
          ['T1', 'superhero'],
          ['T2', 'colour'],
          ['T3', 'colour'],
          ['T4', 'colour'],
        ],
        [
          join('T2', ['T1.eye_colour_id', 'T2.id']),
          join('T3', ['T1.hair_colour_id', 'T3.id']),
          join('T4', ['T1.skin_colour_id', 'T4.id']),
        ],
      ),
    );
    expect(publishedKeyName('colour_colour', selfJoin)).toBe('colour_colour');
    expect(publishedKeyName('colour_2_colour', selfJoin)).toBe('colour_1_colour');
    expect(publishedKeyName('colour_3_colour', selfJoin)).toBe('colour_2_colour');
    expect(publishedKeyName('superhero_superhero_name', selfJoin)).toBe('superhero_superhero_name');
  });

  test('counting rows is key "" (nl2api "*")', () => {
    expect(publishedKeyName('*', joined)).toBe('');
  });

  test('a single table without an alias has bare column keys; with an alias, prefixed ones', () => {
    const aliasless = keyContextOf(init([['frpm', 'frpm']]));
    expect(publishedKeyName('frpm_County Name', aliasless)).toBe('County_Name');
    const aliased = keyContextOf(init([['T1', 'frpm']]));
    expect(publishedKeyName('frpm_County Name', aliased)).toBe('frpm_County_Name');
  });

  test('derived keys follow the key they derive from; keys of no starting table are made safe whole', () => {
    const aliasless = keyContextOf(init([['frpm', 'frpm']]));
    expect(publishedKeyName('frpm_Free Meal Count (K-12)_cast_divide', aliasless)).toBe(
      'Free_Meal_Count_K_12_cast_divide',
    );
    expect(publishedKeyName('count_frpm_CDSCode', aliasless)).toBe('count_CDSCode');
    expect(publishedKeyName('sum_distinct_frpm_Enrollment (K-12)', joined)).toBe('sum_distinct_frpm_Enrollment_K_12');
    expect(publishedKeyName('count_rows', aliasless)).toBe('count_rows');
    expect(publishedKeyName('my key (new)', aliasless)).toBe('my_key_new');
  });

  test('the longest table prefix wins (Player_Attributes_ before Player_)', () => {
    const both = keyContextOf(
      init(
        [
          ['T1', 'Player'],
          ['T2', 'Player_Attributes'],
        ],
        [join('T2', ['T1.player_api_id', 'T2.player_api_id'])],
      ),
    );
    expect(publishedKeyName('Player_Attributes_overall_rating', both)).toBe('Player_Attributes_overall_rating');
    expect(publishedKeyName('Player_player_name', both)).toBe('Player_player_name');
  });
});

describe('the published init object', () => {
  test("each join's new table on the right: conditions written the other way are turned, aliases as declared", () => {
    const step = publishedInitialization(
      init(
        [
          ['T2', 'schools'],
          ['T1', 'satscores'],
          ['T3', 'frpm'],
        ],
        [join('T1', ['T1.cds', 'T2.CDSCode']), { ...join('T3', ['t2.CDSCode', 'T3.CDSCode']), type: 'left' }],
      ),
      'california_schools',
    );
    expect(step).toEqual({
      name: 'initialize_active_data',
      arguments: {
        condition_sequence: [
          ['T2.CDSCode', 'T1.cds', 'INNER'],
          ['T2.CDSCode', 'T3.CDSCode', 'LEFT'],
        ],
        alias_to_table_dict: {
          T2: { original_table_name: 'schools', modified_table_name: 'schools' },
          T1: { original_table_name: 'satscores', modified_table_name: 'satscores' },
          T3: { original_table_name: 'frpm', modified_table_name: 'frpm' },
        },
        database_path: 'california_schools/california_schools.sqlite',
      },
      label: 'starting_table_var',
    });
    expect(joinProblem(step.arguments)).toBeUndefined();
  });

  test('a self-join numbers the later aliases <table>_1, <table>_2', () => {
    const step = publishedInitialization(
      init(
        [
          ['T1', 'superhero'],
          ['T2', 'colour'],
          ['T3', 'colour'],
        ],
        [join('T2', ['T1.eye_colour_id', 'T2.id']), join('T3', ['T3.id', 'T1.hair_colour_id'])],
      ),
      'superhero',
    );
    expect(step.arguments.alias_to_table_dict).toEqual({
      T1: { original_table_name: 'superhero', modified_table_name: 'superhero' },
      T2: { original_table_name: 'colour', modified_table_name: 'colour' },
      T3: { original_table_name: 'colour', modified_table_name: 'colour_1' },
    });
    expect(step.arguments.condition_sequence[1]).toEqual(['T1.hair_colour_id', 'T3.id', 'INNER']);
  });

  test('a single table without an alias is alias ""', () => {
    const step = publishedInitialization(init([['frpm', 'frpm']], [], 'starting_table_var_2'), 'california_schools');
    expect(step.arguments).toMatchObject({
      condition_sequence: [],
      alias_to_table_dict: { '': { original_table_name: 'frpm', modified_table_name: 'frpm' } },
    });
    expect(step.label).toBe('starting_table_var_2');
  });

  test('a join on two equalities, or on none, has no published form', () => {
    const twoKeys = publishedInitialization(
      init(
        [
          ['T1', 'superhero'],
          ['T2', 'colour'],
        ],
        [join('T2', ['T1.eye_colour_id', 'T2.id'], ['T1.hair_colour_id', 'T2.id'])],
      ),
      'superhero',
    );
    expect(joinProblem(twoKeys.arguments)).toMatch(/T2\.id is of a table joined before it/);
    const cross = publishedInitialization(
      init(
        [
          ['T1', 'superhero'],
          ['T2', 'colour'],
        ],
        [join('T2')],
      ),
      'superhero',
    );
    expect(joinProblem(cross.arguments)).toMatch(/"T1", "T2" never joined/);
  });
});

describe('answers as the published runtime returns them', () => {
  test('one value is a scalar, one column a flat list, several columns column-major lists', () => {
    expect(squeezeAnswer([[7]])).toBe(7);
    expect(squeezeAnswer([['a'], ['b']])).toEqual(['a', 'b']);
    expect(squeezeAnswer([['a', 1]])).toEqual(['a', 1]);
    expect(
      squeezeAnswer([
        ['a', 1],
        ['b', 2],
        ['c', null],
      ]),
    ).toEqual([
      ['a', 'b', 'c'],
      [1, 2, null],
    ]);
    expect(squeezeAnswer([])).toEqual([]);
  });

  test('columns of float aggregates have their whole numbers as floats', () => {
    expect(squeezeAnswer([[23]], [true])).toEqual(new PyFloat(23));
    expect(squeezeAnswer([[2.5, 3]], [true, false])).toEqual([2.5, 3]);
  });
});

describe('liveApiBenchJson: Python json.dump text, floats marked', () => {
  test('PyFloats are written as floats, the rest as JSON writes it, non-ASCII escaped', () => {
    const text = liveApiBenchJson([
      1,
      new PyFloat(5),
      new PyFloat(2.5),
      new PyFloat(-0),
      new PyFloat(1e16),
      'é ✓',
      { a: undefined, b: null, c: [true, new PyFloat(-3)] },
    ]);
    expect(text).toBe('[1, 5.0, 2.5, -0.0, 1e+16, "\\u00e9 \\u2713", {"b": null, "c": [true, -3.0]}]');
    expect(JSON.parse(text)).toEqual([1, 5, 2.5, -0, 1e16, 'é ✓', { b: null, c: [true, -3] }]);
    // JSON.stringify of a PyFloat still gives a number.
    expect(JSON.stringify({ x: new PyFloat(5) })).toBe('{"x":5}');
  });

  test('any other value as JSON.stringify writes it, with Python separators and escapes; shared parts spliced alike', () => {
    // The plain way to that text: JSON.stringify, then Python's escapes, then its separators outside strings.
    const reference = (value: unknown) =>
      (JSON.stringify(value) ?? 'null')
        .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
        .replace(/"(?:[^"\\]|\\.)*"|[,:]/g, (token) => (token === ',' ? ', ' : token === ':' ? ': ' : token));
    const random = mulberry32(35);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const texts = [
      '',
      'a',
      'é ✓',
      'q"u\\o',
      'line\nbreak\t',
      '\u007f',
      '\u0000\u0001x',
      '😀',
      '\ud800',
      'a, b: c',
      '{"x": 1}',
    ];
    const numbers = [0, -0, 1, -17, 2.5, 1e21, 1e-7, 123456789012, Number.NaN, Number.POSITIVE_INFINITY];
    const value = (depth: number): unknown => {
      const kind = Math.floor(random() * (depth > 3 ? 5 : 8));
      if (kind === 0) return pick(texts);
      if (kind === 1) return pick(numbers);
      if (kind === 2) return pick([true, false, null]);
      if (kind === 3) return pick([undefined, () => 1, new Date(0)]);
      if (kind === 4) return pick(texts) + pick(texts);
      if (kind === 5) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      const members = Array.from({ length: Math.floor(random() * 4) }, () => [pick(texts), value(depth + 1)]);
      return Object.fromEntries(members);
    };
    for (let i = 0; i < 500; i++) {
      const sample = value(0);
      expect(liveApiBenchJson(sample)).toBe(reference(sample));
      // A shared part is written as its own text, wherever it stands.
      const part = sharedPart({ tool: sample, name: 'é' });
      expect(liveApiBenchJson([part, { part }])).toBe(
        reference([{ tool: sample, name: 'é' }, { part: { tool: sample, name: 'é' } }]),
      );
    }
  });
});

// ---------------------------------------------------------------------------------------
// Samples

const KEYS = [
  { key: 'frpm_CDSCode', description: 'CDSCode' },
  { key: 'frpm_County Name', description: 'County name' },
  { key: 'frpm_Enrollment (K-12)', description: 'Enrollment (K-12) (commonsense evidence:\n\nK-12: grades)' },
  { key: 'schools_CDSCode', description: 'CDSCode' },
  { key: 'schools_City', description: 'City' },
  { key: 'frpm_Enrollment (K-12)_cast', description: 'frpm_Enrollment (K-12) after cast: converts the type' },
  { key: 'frpm_2_CDSCode', description: 'CDSCode (a self-join of another sample)' },
  { key: 'count_rows', description: 'Number of the rows in each group' },
];
const INIT_TOOL: ToolSpec = {
  type: 'function',
  function: {
    name: 'initialize_active_data',
    description: 'the starting table',
    parameters: { type: 'object', properties: {} },
  },
};
const SLOT_TOOLS = [INIT_TOOL, ...slotToolSpecs(KEYS, 'extended')];
const SOURCE = { name: 'bird-dev', dir: '/out', dataset: 'bird-dev', databases: '/bird', weight: 1 };

function gold(rows: SqlValue[][], sql: string): GoldResult {
  return {
    columns: rows[0]?.map((_, i) => `column_${i + 1}`) ?? [],
    rows,
    executedSql: sql,
    ordered: false,
    distinct: false,
  };
}

function exportSample(item: Partial<EvalItem> & Pick<EvalItem, 'goldCalls' | 'gold'>, negative = false): ExportSample {
  const full: EvalItem = {
    key: `slot/california_schools/${item.id ?? '5'}`,
    id: '5',
    db: 'california_schools',
    formulation: 'slot',
    question: 'What is the most enrollment in Alameda?',
    evidence: 'Alameda is a county',
    sql: "SELECT MAX(`Enrollment (K-12)`) FROM frpm WHERE `County Name` = 'Alameda'",
    difficulty: 'simple',
    initialization: [init([['frpm', 'frpm']])],
    tools: SLOT_TOOLS,
    constructs: [],
    hash: 'h',
    published: { answer_labels: [item.goldCalls[item.goldCalls.length - 1]?.label] },
    ...item,
  };
  return {
    key: `bird-dev/${full.key}${negative ? '!negative' : ''}`,
    unit: `bird-dev/${full.db}/${full.id}`,
    source: SOURCE,
    item: full,
    copy: 0,
    split: 'train',
    negative,
    tools: negative ? full.tools.filter((t) => t.function.name !== 'aggregate_data') : full.tools,
    outputs: [],
    startKeys: [],
  };
}

const MAX_CALLS: ToolCall[] = [
  {
    name: 'filter_data',
    arguments: {
      data_source: '$starting_table_var$',
      key_name: 'frpm_County Name',
      condition: 'equal_to',
      value: 'Alameda',
    },
    label: 'FILTER_1',
  },
  {
    name: 'filter_data',
    arguments: { data_source: '$FILTER_1$', key_name: 'frpm_Enrollment (K-12)', condition: 'greater_than', value: 5 },
    label: 'FILTER_2',
  },
  {
    name: 'aggregate_data',
    arguments: { data_source: '$FILTER_2$', key_name: 'frpm_Enrollment (K-12)', aggregation_type: 'max' },
    label: 'MAX_1',
  },
];

describe('a SLOT sample in the published form', () => {
  const sample = exportSample({ goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') });
  const example = liveApiBenchExample(sample, 0) as Record<string, any>;

  test('the G1 data record: dataset_name the database, numeric sample_id, init object, renamed calls', () => {
    expect(LiveApiBenchExampleSchema.parse(example)).toBeDefined();
    expect(example).toMatchObject({
      query: sample.item.sql,
      input: sample.item.question,
      dataset_name: 'california_schools',
      sample_id: 5,
      evidence: 'Alameda is a county',
      difficulty: 'simple',
      negative: false,
      initialization_step: {
        name: 'initialize_active_data',
        arguments: {
          condition_sequence: [],
          alias_to_table_dict: { '': { original_table_name: 'frpm', modified_table_name: 'frpm' } },
        },
        label: 'starting_table_var',
      },
    });
    expect(example.output.map((c: ToolCall) => [c.label, c.arguments.key_name])).toEqual([
      ['FILTER_1', 'County_Name'],
      ['FILTER_2', 'Enrollment_K_12'],
      ['MAX_1', 'Enrollment_K_12'],
    ]);
  });

  test('a max is a float answer; a filter value is JSON as given (the runtime compares an int with a text column as text)', () => {
    expect(example.gold_answer).toEqual(new PyFloat(1200));
    expect(example.output[1].arguments.value).toBe(5);
    const text = liveApiBenchJson([example]);
    expect(text).toContain('"gold_answer": 1200.0');
    expect(text).toContain('"value": 5,');
    expect(text).toContain('"value": "Alameda"');
  });

  test("tools trimmed to {description, name, arguments}, no init, key enums the sample's keys renamed", () => {
    expect(example.tools.map((t: { name: string }) => t.name)).not.toContain('initialize_active_data');
    const filter = example.tools.find((t: { name: string }) => t.name === 'filter_data');
    expect(Object.keys(filter)).toEqual(['description', 'name', 'arguments']);
    expect(filter.arguments.key_name.enum).toEqual([
      'CDSCode',
      'County_Name',
      'Enrollment_K_12',
      'Enrollment_K_12_cast',
    ]);
    // The key list of the description follows, a description of several lines kept whole.
    expect(filter.arguments.key_name.description).toBe(
      [
        'The column to test.',
        'Keys:',
        'CDSCode: CDSCode',
        'County_Name: County name',
        'Enrollment_K_12: Enrollment (K-12) (commonsense evidence:\n\nK-12: grades)',
        'Enrollment_K_12_cast: frpm_Enrollment (K-12) after cast: converts the type',
      ].join('\n'),
    );
    const aggregate = example.tools.find((t: { name: string }) => t.name === 'aggregate_data');
    expect(aggregate.arguments.key_name.enum[0]).toBe('');
    // Keys of another sample's second frpm, and count_rows (no starting table's, unused), are left out;
    // what follows the key list stays.
    const group = example.tools.find((t: { name: string }) => t.name === 'group_data_by');
    expect(group.arguments.key_name.anyOf[1].items.enum).toEqual(filter.arguments.key_name.enum);
    expect(group.arguments.key_name.description).toMatch(
      /\nEnrollment_K_12_cast: frpm_Enrollment \(K-12\) after cast: converts the type\nA list of keys is also accepted\.$/,
    );
  });

  test("a transform rewrites its column in place, as the runtime's does: its new key is that column's name", () => {
    const calls: ToolCall[] = [
      {
        name: 'transform_data',
        arguments: {
          data_source: '$starting_table_var$',
          key_name: 'frpm_County Name',
          operation_type: 'substring',
          operation_args: { start_index: 0, end_index: 3 },
        },
        label: 'SUBSTRING_1',
      },
      {
        name: 'retrieve_data',
        arguments: { data_source: '$SUBSTRING_1$', key_name: 'frpm_County Name_substring', distinct: true },
        label: 'SELECT_1',
      },
    ];
    const renamed = liveApiBenchExample(
      exportSample({ goldCalls: calls, gold: gold([['Ala'], ['Fre']], 'SELECT …') }),
    ) as Record<string, any>;
    expect(renamed.output.map((c: ToolCall) => c.arguments)).toEqual([
      {
        data_source: '$starting_table_var$',
        key_name: 'County_Name',
        operation_type: 'substring',
        operation_args: { start_index: 0, end_index: 3 },
      },
      { data_source: '$SUBSTRING_1$', key_name: 'County_Name', distinct: true },
    ]);
  });

  test('what the published runtime has no tools for is left out, with the reason', () => {
    const rank = exportSample({
      goldCalls: [
        {
          name: 'transform_data',
          arguments: {
            data_source: '$starting_table_var$',
            key_name: 'frpm_Enrollment (K-12)',
            operation_type: 'rank',
          },
          label: 'RANK_1',
        },
      ],
      gold: gold([[1]], 'SELECT …'),
    });
    expect(liveApiBenchUnsupported(rank)).toMatch(/transform_data has no operation rank/);
    const list = exportSample({
      goldCalls: [
        {
          ...MAX_CALLS[1],
          arguments: { ...MAX_CALLS[1].arguments, data_source: '$starting_table_var$', condition: 'in', value: [5, 7] },
        },
      ],
      gold: gold([[1]], 'SELECT …'),
    });
    expect(liveApiBenchUnsupported(list)).toMatch(/no condition in/);
    expect(
      liveApiBenchUnsupported(exportSample({ goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') })),
    ).toBeUndefined();
  });

  test('a negative expects no call and the refusal; its tools are the ones it is offered', () => {
    const negative = liveApiBenchExample(
      exportSample({ goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') }, true),
    ) as Record<string, any>;
    expect(LiveApiBenchExampleSchema.parse(negative)).toBeDefined();
    expect(negative).toMatchObject({
      negative: true,
      output: [],
      expected_reply: REFUSAL,
      // Its tools cannot answer it: no positive answer a scorer could take for right.
      gold_answer: null,
    });
    expect(negative.tools.map((t: { name: string }) => t.name)).not.toContain('aggregate_data');
  });

  test('a nested SELECT: its own starting table in output first, each call keyed in its own', () => {
    const item = exportSample({
      sql: 'SELECT City FROM schools WHERE CDSCode = (SELECT MAX(`Enrollment (K-12)`) FROM frpm)',
      initialization: [init([['schools', 'schools']]), init([['T1', 'frpm']], [], 'starting_table_var_2')],
      goldCalls: [
        {
          name: 'aggregate_data',
          arguments: {
            data_source: '$starting_table_var_2$',
            key_name: 'frpm_Enrollment (K-12)',
            aggregation_type: 'max',
          },
          label: 'MAX_1',
        },
        {
          name: 'filter_data',
          arguments: {
            data_source: '$starting_table_var$',
            key_name: 'schools_CDSCode',
            condition: 'equal_to',
            value: '$MAX_1$',
          },
          label: 'FILTER_1',
        },
        {
          name: 'retrieve_data',
          arguments: { data_source: '$FILTER_1$', key_name: 'schools_City' },
          label: 'SELECT_2',
        },
      ],
      gold: gold([['Oakland']], 'SELECT …'),
    });
    const example = liveApiBenchExample(item) as Record<string, any>;
    expect(LiveApiBenchExampleSchema.parse(example)).toBeDefined();
    expect(example.gold_answer).toBe('Oakland');
    expect(example.output.map((c: ToolCall) => [c.name, c.label, c.arguments.key_name])).toEqual([
      ['initialize_active_data', 'starting_table_var_2', undefined],
      ['aggregate_data', 'MAX_1', 'frpm_Enrollment_K_12'],
      ['filter_data', 'FILTER_1', 'CDSCode'],
      ['retrieve_data', 'SELECT_2', 'City'],
    ]);
    // The runtime rewrites only the first init call's database path: a further one names the database's own file.
    expect(example.output[0].arguments.database_path).toBe('california_schools/california_schools.sqlite');
    expect(example.output[2].arguments.value).toBe('$MAX_1$');
    // The enum holds each starting table's keys under its own names.
    const retrieve = example.tools.find((t: { name: string }) => t.name === 'retrieve_data');
    expect(retrieve.arguments.key_name.enum).toEqual(
      expect.arrayContaining(['frpm_CDSCode', 'CDSCode', 'City', 'frpm_Enrollment_K_12']),
    );
  });

  test("a SEL sample: its calls and tools under the runtime's names (compute_data_<aggregate>)", () => {
    const bindings: Record<string, SelBinding> = {
      select_data_greater_than: { slotTool: 'filter_data', boundArguments: { condition: 'greater_than' } },
      aggregate_data_mean: { slotTool: 'aggregate_data', boundArguments: { aggregation_type: 'mean' } },
    };
    const item = exportSample({
      formulation: 'sel',
      key: 'sel/california_schools/5',
      bindings,
      tools: selToolSpecs(bindings, KEYS, 'extended'),
      goldCalls: [
        {
          name: 'select_data_greater_than',
          arguments: { data_source: '$starting_table_var$', key_name: 'frpm_Enrollment (K-12)', value: 100 },
          label: 'FILTER_1',
        },
        {
          name: 'aggregate_data_mean',
          arguments: { data_source: '$FILTER_1$', key_name: 'frpm_Enrollment (K-12)' },
          label: 'AVG_1',
        },
      ],
      gold: gold([[350]], 'SELECT …'),
    });
    const example = liveApiBenchExample(item) as Record<string, any>;
    expect(LiveApiBenchExampleSchema.parse(example)).toBeDefined();
    expect(example.gold_answer).toEqual(new PyFloat(350));
    expect(example.output).toEqual([
      {
        name: 'select_data_greater_than',
        arguments: { data_source: '$starting_table_var$', key_name: 'Enrollment_K_12', value: 100 },
        label: 'FILTER_1',
      },
      {
        name: 'compute_data_mean',
        arguments: { data_source: '$FILTER_1$', key_name: 'Enrollment_K_12', distinct: false },
        label: 'AVG_1',
      },
    ]);
    expect(example.tools.map((t: { name: string }) => t.name)).toEqual([
      'select_data_greater_than',
      'compute_data_mean',
    ]);
  });
});

describe('the schema refuses what the published format cannot hold', () => {
  const example = liveApiBenchExample(
    exportSample({ goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') }),
  ) as Record<string, any>;
  const refused = (change: Record<string, unknown>) =>
    LiveApiBenchExampleSchema.safeParse({ ...example, ...change }).success === false;

  test('a valid example passes; malformed ones do not', () => {
    expect(LiveApiBenchExampleSchema.safeParse(example).success).toBe(true);
    expect(refused({ input: undefined })).toBe(true);
    expect(refused({ dataset_name: 7 })).toBe(true);
    expect(refused({ gold_answer: [1200] })).toBe(true);
    expect(refused({ gold_answer: [['a', 'b'], ['c']] })).toBe(true);
    expect(refused({ sample_id: -1 })).toBe(true);
    expect(refused({ output: [] })).toBe(true);
    expect(refused({ negative: true })).toBe(true);
    expect(refused({ extra: 1 })).toBe(true);
    expect(refused({ output: [{ ...example.output[0], arguments: { data_source: '$NOWHERE$' } }] })).toBe(true);
    expect(refused({ output: [example.output[0], example.output[0]] })).toBe(true);
    expect(refused({ initialization_step: { ...example.initialization_step, name: 'start' } })).toBe(true);
  });

  test('a join on two equalities is refused with the reason', () => {
    const twoKeys = exportSample({
      initialization: [
        init(
          [
            ['T1', 'superhero'],
            ['T2', 'colour'],
          ],
          [join('T2', ['T1.eye_colour_id', 'T2.id'], ['T1.hair_colour_id', 'T2.id'])],
        ),
      ],
      goldCalls: [
        {
          name: 'retrieve_data',
          arguments: { data_source: '$starting_table_var$', key_name: 'superhero_superhero_name' },
          label: 'SELECT_1',
        },
      ],
      gold: gold([['A'], ['B']], 'SELECT …'),
    });
    const parsed = LiveApiBenchExampleSchema.safeParse(liveApiBenchExample(twoKeys));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.message).toMatch(/a join on several equalities, or a cycle, has no published form/);
  });
});

describe('a REST sample in the REST-BIRD form', () => {
  const endpoint: ToolSpec = {
    type: 'function',
    function: {
      name: 'getCityByCounty',
      description: 'Get the cities of a county',
      parameters: { type: 'object', properties: { county: { type: 'string' } }, required: ['county'] },
    },
  };
  const other: ToolSpec = { ...endpoint, function: { ...endpoint.function, name: 'getCountyCount' } };
  const rest = (negative: boolean) =>
    exportSample(
      {
        formulation: 'rest',
        key: 'rest/california_schools/5',
        id: 'q5',
        initialization: [],
        tools: [endpoint, other],
        goldCalls: [{ name: 'getCityByCounty', arguments: { county: 'Alameda' }, label: '' }],
        gold: gold(
          [
            ['Oakland', 3],
            ['Fremont', 1],
          ],
          'SELECT …',
        ),
        published: {
          output_after_executing_api: {
            columns: ['City', 'n'],
            rows: [
              ['Oakland', 3],
              ['Fremont', 1],
            ],
          },
        },
      },
      negative,
    );

  test("BIRD's fields, the endpoint call and its response", () => {
    const example = liveApiBenchExample(rest(false));
    expect(LiveApiBenchExampleSchema.parse(example)).toBeDefined();
    expect(example).toEqual({
      question_id: 'q5',
      sample_id: 'q5',
      db_id: 'california_schools',
      question: 'What is the most enrollment in Alameda?',
      evidence: 'Alameda is a county',
      SQL: "SELECT MAX(`Enrollment (K-12)`) FROM frpm WHERE `County Name` = 'Alameda'",
      difficulty: 'simple',
      dataset_name: 'california_schools',
      gold_answer: [
        ['Oakland', 3],
        ['Fremont', 1],
      ],
      output: [{ name: 'getCityByCounty', arguments: { county: 'Alameda' } }],
      output_after_executing_api: {
        columns: ['City', 'n'],
        rows: [
          ['Oakland', 3],
          ['Fremont', 1],
        ],
      },
      negative: false,
    });
  });

  test('a negative: no call, the refusal, the endpoints it is offered named', () => {
    const sample = rest(true);
    sample.tools = [other];
    const example = liveApiBenchExample(sample);
    expect(LiveApiBenchExampleSchema.parse(example)).toBeDefined();
    expect(example).toMatchObject({
      output: [],
      output_after_executing_api: null,
      expected_reply: REFUSAL,
      tools: ['getCountyCount'],
    });
  });

  test("the database's endpoints in OpenAI function format", () => {
    expect(liveApiBenchRestTools([endpoint])).toEqual([endpoint]);
  });
});

// ---------------------------------------------------------------------------------------
// Reading an export back, and the Python harness

const SCHEMA_SQL = `
  CREATE TABLE frpm (CDSCode TEXT PRIMARY KEY, "County Name" TEXT, "Enrollment (K-12)" INTEGER);
  CREATE TABLE schools (CDSCode TEXT PRIMARY KEY, City TEXT);
  INSERT INTO frpm VALUES ('1', 'Alameda', 1200);
  INSERT INTO schools VALUES ('1', 'Oakland');
`;

/** A live-api-bench folder of two databases: california_schools (a copy kept in databases/) and linked_db (a link). */
function exportFolder(): string {
  const root = path.join(tempDir(), 'live-slot');
  mkdirSync(root);
  createDb(path.join(root, 'databases', 'california_schools.sqlite'), SCHEMA_SQL);
  const elsewhere = createDb(path.join(tempDir(), 'linked_db.sqlite'), SCHEMA_SQL);
  mkdirSync(path.join(root, 'linked_db'));
  symlinkSync(elsewhere, path.join(root, 'linked_db', 'linked_db.sqlite'));
  const sample = exportSample({ goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') });
  const copy = { ...sample, copy: 1 };
  const negative = exportSample({ goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') }, true);
  const other = exportSample({
    id: 'x-7',
    db: 'linked_db',
    question: 'Which city?',
    sql: 'SELECT City FROM schools',
    evidence: '',
    difficulty: null,
    initialization: [init([['schools', 'schools']])],
    goldCalls: [
      {
        name: 'retrieve_data',
        arguments: { data_source: '$starting_table_var$', key_name: 'schools_City' },
        label: 'SELECT_1',
      },
    ],
    gold: gold([['Oakland']], 'SELECT City FROM schools'),
  });
  writeFileSync(
    path.join(root, 'california_schools.json'),
    liveApiBenchJson([sample, copy, negative].map((s) => liveApiBenchExample(s))),
  );
  writeFileSync(path.join(root, 'linked_db.json'), liveApiBenchJson([liveApiBenchExample(other)]));
  return root;
}

describe('the live-api-bench source layout', () => {
  test('loadSource reads a folder back: ids, questions, SQL, evidence, databases (negatives and copies skipped)', async () => {
    const root = exportFolder();
    const source = await loadSource(root);
    expect(source.layout).toBe('live-api-bench');
    expect(source.datasetName).toBe('live-slot');
    expect(source.rejections).toEqual([]);
    expect(source.instances).toEqual([
      {
        id: '5',
        index: 0,
        dbId: 'california_schools',
        question: 'What is the most enrollment in Alameda?',
        evidence: 'Alameda is a county',
        sql: "SELECT MAX(`Enrollment (K-12)`) FROM frpm WHERE `County Name` = 'Alameda'",
        difficulty: 'simple',
      },
      {
        id: 'x-7',
        index: 1,
        dbId: 'linked_db',
        question: 'Which city?',
        evidence: '',
        sql: 'SELECT City FROM schools',
        difficulty: null,
      },
    ]);
    expect(source.databases.map((db) => [db.dbId, db.tables.map((t) => t.name)])).toEqual([
      ['california_schools', ['frpm', 'schools']],
      ['linked_db', ['frpm', 'schools']],
    ]);
    // A file names its folder.
    const one = await loadSource(path.join(root, 'linked_db.json'));
    expect(one.instances.map((i) => i.id)).toEqual(['5', 'x-7']);
    expect(one.warnings[0]).toMatch(/one database of a Live API-Bench folder/);
  });

  test('REST records read back too; ids that count per database are qualified by it', async () => {
    const root = path.join(tempDir(), 'live-rest');
    createDb(path.join(root, 'a.sqlite'), SCHEMA_SQL);
    createDb(path.join(root, 'databases', 'b', 'b.sqlite'), SCHEMA_SQL);
    const record = (db: string, id: number, question: string) => ({
      question_id: id,
      sample_id: id,
      db_id: db,
      question,
      evidence: 'e',
      SQL: 'SELECT City FROM schools',
      difficulty: 'simple',
      dataset_name: db,
      gold_answer: [['Oakland']],
      output: [{ name: 'getCities', arguments: {} }],
      output_after_executing_api: null,
      negative: false,
    });
    writeFileSync(
      path.join(root, 'a.json'),
      liveApiBenchJson([record('a', 0, 'Cities?'), { ...record('a', 1, 'Neg?'), negative: true }]),
    );
    writeFileSync(path.join(root, 'b.json'), liveApiBenchJson([record('b', 0, 'Towns?')]));
    const source = await loadSource(root);
    expect(source.layout).toBe('live-api-bench');
    expect(source.instances.map((i) => [i.id, i.dbId, i.question, i.sql])).toEqual([
      ['a:0', 'a', 'Cities?', 'SELECT City FROM schools'],
      ['b:0', 'b', 'Towns?', 'SELECT City FROM schools'],
    ]);
    expect(source.warnings).toContain(
      'sample ids repeat across databases (ids count per database): ids are <db>:<sample_id>',
    );
  });

  test('folders other layouts own are left to them', () => {
    const bird = tempDir();
    writeFileSync(
      path.join(bird, 'dev.json'),
      JSON.stringify([
        { question_id: 0, db_id: 'a', question: 'q', evidence: '', SQL: 'SELECT 1', difficulty: 'simple' },
      ]),
    );
    writeFileSync(path.join(bird, 'dev_tables.json'), JSON.stringify([{ db_id: 'a', table_names_original: [] }]));
    expect(liveApiBenchLayout.detect({ folder: bird, files: ['dev.json', 'dev_tables.json'] })).toBeUndefined();
    // An nl2api output folder: manifest.json and stats.json are objects (its tools are in tools/).
    const generated = tempDir();
    writeFileSync(path.join(generated, 'manifest.json'), JSON.stringify({ dataset: 'bird-dev', databases: [] }));
    writeFileSync(path.join(generated, 'stats.json'), JSON.stringify({}));
    expect(liveApiBenchLayout.detect({ folder: generated, files: ['manifest.json', 'stats.json'] })).toBeUndefined();
    // A folder of tool lists (tools/slot) is arrays, not of samples.
    const tools = tempDir();
    writeFileSync(path.join(tools, 'california_schools.json'), JSON.stringify(SLOT_TOOLS));
    expect(liveApiBenchLayout.detect({ folder: tools, files: ['california_schools.json'] })).toBeUndefined();
    // A sample file beside another JSON file: not a Live API-Bench folder.
    const mixed = exportFolder();
    writeFileSync(path.join(mixed, 'notes.json'), '{}');
    expect(
      liveApiBenchLayout.detect({ folder: mixed, files: ['california_schools.json', 'linked_db.json', 'notes.json'] }),
    ).toBeUndefined();
  });
});

const hasPython = spawnSync('python3', ['--version']).status === 0;

(hasPython ? describe : describe.skip)('the Python harness (live_api_bench_check.py)', () => {
  const run = (...args: string[]) => {
    const result = spawnSync('python3', [HARNESS, ...args], { encoding: 'utf8' });
    return { status: result.status, summary: JSON.parse(result.stdout) };
  };

  test('passes an export, and rejects a broken sample naming why', () => {
    const root = exportFolder();
    const good = run(root);
    expect(good.summary).toMatchObject({ files: 2, samples: 4, ok: 4, failures: [] });
    expect(good.status).toBe(0);

    const broken = liveApiBenchExample(
      exportSample({ id: '9', goldCalls: MAX_CALLS, gold: gold([[1200]], 'SELECT …') }),
    ) as Record<string, any>;
    broken.output[2].arguments.key_name = 'frpm_Enrollment (K-12)';
    broken.output[1].arguments.data_source = '$LATER$';
    broken.gold_answer = [1200];
    broken.initialization_step.arguments.condition_sequence = [['T9.a', 'T8.b', 'INNER']];
    writeFileSync(path.join(root, 'linked_db.json'), liveApiBenchJson([broken]));
    const bad = run(root);
    expect(bad.status).toBe(1);
    expect(bad.summary).toMatchObject({ files: 2, samples: 4, ok: 3 });
    expect(bad.summary.failures.map((f: { problem: string }) => f.problem)).toEqual(
      expect.arrayContaining([
        "dataset_name 'california_schools' is not the file's database 'linked_db'",
        'gold_answer is not squeezed (a list of one value stands for that value)',
        'initialization_step: condition 0 names an alias alias_to_table_dict lacks',
      ]),
    );
    // With a valid init, the calls are checked: an unsafe key, a label read before it is defined.
    broken.initialization_step.arguments.condition_sequence = [];
    writeFileSync(path.join(root, 'linked_db.json'), liveApiBenchJson([{ ...broken, dataset_name: 'linked_db' }]));
    const calls = run(root);
    expect(calls.summary.failures.map((f: { problem: string }) => f.problem)).toEqual([
      'gold_answer is not squeezed (a list of one value stands for that value)',
      'reads $LATER$, which no earlier call defines',
      "key 'frpm_Enrollment (K-12)' is not identifier-safe (make_safe makes it 'frpm_Enrollment_K_12')",
      "key 'frpm_Enrollment (K-12)' is not in its tool's key enum",
    ]);
  });
});

describe('the SLOT/SEL file layouts (--live-api-bench-layout), on the demo', () => {
  let demo: string;
  beforeAll(async () => {
    demo = await generateDemo();
  }, 120_000);
  afterAll(() => rmSync(demo, { recursive: true, force: true }));

  const exported = async (layout: LiveApiBenchLayout | undefined) => {
    const out = path.join(demo, `layout-${layout ?? 'default'}`);
    await runExport({
      ...exportSettings(undefined, { formats: ['live-api-bench'], negatives: 0.3, seed: 7 }),
      ...(layout ? { liveApiBenchLayout: layout } : {}),
      from: [{ dir: path.join(demo, 'dataset'), databases: DEMO_SOURCE, weight: 1 }],
      out,
      config: parseConfig({ source: DEMO_SOURCE, progress: 'none' }),
    });
    const root = path.join(out, 'live-api-bench');
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.json')).sort();
    const read = (file: string): any => JSON.parse(readFileSync(path.join(root, file), 'utf8'));
    return { files, read };
  };
  /** The records layout's SLOT/SEL records by `<formulation>/<split>/<db>`. */
  let records: Awaited<ReturnType<typeof exported>>;
  beforeAll(async () => {
    records = await exported(undefined);
  }, 120_000);
  const recordsOf = (formulation: string, split: string, db: string) =>
    records.read(`${formulation}/${split}/${db}.json`) as any[];
  const sequenceFiles = () =>
    records.files
      .map((f) => f.split('/'))
      .filter(([f, split]) => ['slot', 'sel'].includes(f) && split !== 'tools')
      .map(([formulation, split, file]) => ({ formulation, split, db: file.slice(0, -'.json'.length) }));

  test('records (the default): <slot|sel>/<split>/<db>.json, REST and departures.json beside them', () => {
    expect(sequenceFiles().length).toBeGreaterThanOrEqual(2);
    expect(records.files).toContain('departures.json');
    expect(records.files.some((f) => f.startsWith('rest/tools/'))).toBe(true);
    const [first] = sequenceFiles();
    expect(Object.keys(recordsOf(first.formulation, first.split, first.db)[0])).toEqual(
      expect.arrayContaining(['initialization_step', 'output', 'tools']),
    );
  });

  test('builder: <split>/<slot|sel>/<db>.json, bare arrays, the init call first in output, keys described, no tools', async () => {
    const builder = await exported('builder');
    const rest = records.files.filter((f) => f.startsWith('rest/') || f === 'departures.json');
    const expected = sequenceFiles().map(({ formulation, split, db }) => `${split}/${formulation}/${db}.json`);
    expect(builder.files).toEqual([...rest, ...expected].sort());
    for (const file of rest) expect(builder.read(file)).toEqual(records.read(file));
    for (const { formulation, split, db } of sequenceFiles()) {
      const mine = builder.read(`${split}/${formulation}/${db}.json`) as any[];
      const theirs = recordsOf(formulation, split, db);
      expect(mine.map((r) => [r.sample_id, r.negative])).toEqual(theirs.map((r) => [r.sample_id, r.negative]));
      mine.forEach((record, i) => {
        const { initialization_step, output, tools, ...same } = theirs[i];
        expect(tools.length).toBeGreaterThan(0);
        expect(record).toEqual({
          ...same,
          output: [initialization_step, ...output],
          key_values_and_descriptions: expect.any(Array),
        });
        expect(record.output[0]).toMatchObject({ name: 'initialize_active_data', label: 'starting_table_var' });
        expect(Object.keys(record).slice(0, 7)).toEqual([
          'query',
          'input',
          'dataset_name',
          'sample_id',
          'gold_answer',
          'output',
          'key_values_and_descriptions',
        ]);
        // Every key of the starting table, under its published name, described from the BIRD CSV.
        const keys = record.key_values_and_descriptions as { key_name: string; description: unknown; dtype: string }[];
        expect(keys.length).toBeGreaterThan(0);
        expect(new Set(keys.map((k) => k.key_name)).size).toBe(keys.length);
        for (const key of keys) {
          expect(Object.keys(key)).toEqual(['key_name', 'description', 'dtype']);
          expect(['string', 'integer', 'number', 'object']).toContain(key.dtype);
          expect(key.key_name).toBe(makeSafe(key.key_name));
        }
        const used = (record.output as { arguments: Record<string, unknown> }[])
          .slice(1)
          .flatMap((call) => (typeof call.arguments.key_name === 'string' ? [call.arguments.key_name] : []))
          .filter((key) => key !== '');
        const named = new Set(keys.map((k) => k.key_name));
        if (record.output.filter((c: { name: string }) => c.name === 'initialize_active_data').length === 1)
          for (const key of used.filter((k) => !/^(min|max|sum|mean|count|std)_/.test(k))) expect(named).toContain(key);
      });
    }
  }, 60_000);

  test('m3: <split>/slot_filling_bird_<db>.json and sequencing_bird_<db>.json, {"data": [...]}, full tool specs', async () => {
    const m3 = await exported('m3');
    const expected = sequenceFiles().map(
      ({ formulation, split, db }) =>
        `${split}/${formulation === 'sel' ? 'sequencing' : 'slot_filling'}_bird_${db}.json`,
    );
    expect(m3.files.filter((f) => !f.startsWith('rest/') && f !== 'departures.json')).toEqual(expected.sort());
    for (const { formulation, split, db } of sequenceFiles()) {
      const file = m3.read(`${split}/${formulation === 'sel' ? 'sequencing' : 'slot_filling'}_bird_${db}.json`);
      expect(Object.keys(file)).toEqual(['data']);
      // What m3's reader takes the database and builder from.
      const theirs = recordsOf(formulation, split, db);
      (file.data as any[]).forEach((record, i) => {
        const { initialization_step, output, tools, ...same } = theirs[i];
        expect(record).toMatchObject({ ...same, output: [initialization_step, ...output] });
        expect(record.key_values_and_descriptions.length).toBeGreaterThan(0);
        const specs = record.tools as { name: string; description: string; parameters: any }[];
        expect(specs[0].name).toBe('initialize_active_data');
        expect(specs[0].parameters.required).toEqual(['condition_sequence', 'alias_to_table_dict', 'database_path']);
        // m3 trims a spec to {description, name, arguments: parameters.properties}: the records layout's tools.
        expect(
          specs
            .slice(1)
            .map((spec) => ({ description: spec.description, name: spec.name, arguments: spec.parameters.properties })),
        ).toEqual(tools);
        for (const spec of specs) {
          expect(spec.parameters.type).toBe('object');
          for (const name of spec.parameters.required) expect(Object.keys(spec.parameters.properties)).toContain(name);
        }
      });
    }
  }, 60_000);

  test('the layout is an export setting: from the config, a flag over it; an unknown one is refused', () => {
    expect(exportSettings(undefined, {}).liveApiBenchLayout).toBe('records');
    expect(exportSettings({ liveApiBenchLayout: 'm3' }, {}).liveApiBenchLayout).toBe('m3');
    expect(exportSettings({ liveApiBenchLayout: 'm3' }, { liveApiBenchLayout: 'builder' }).liveApiBenchLayout).toBe(
      'builder',
    );
    const refused = ExportConfigSchema.safeParse({ liveApiBenchLayout: 'flat' });
    expect(refused.success).toBe(false);
    expect(refused.error?.message).toMatch(
      /liveApiBenchLayout[\s\S]*expected one of \\"records\\"\|\\"builder\\"\|\\"m3\\"/,
    );
  });
});

describe('BIRD description CSVs read as the published builders read them (pandas)', () => {
  test('description as written (missing → null); dtype from data_format as their translate_data_type gives it', () => {
    const csv =
      '\ufefforiginal_column_name,column_name,column_description,data_format,value_description\r\n' +
      'Enrollment (K-12),,Enrollment,integer,\r\n' +
      'City , city,,text ,\r\n' +
      'OpenDate,,"the date, opened",date,\r\n' +
      'Rate,,N/A,real,\r\n' +
      'Notes,,free text,,\r\n' +
      'Odd,,odd,TEXT,\r\n' +
      ',,no column,text,\r\n';
    expect(parseDescriptionCsv(Buffer.from(csv))).toEqual([
      { column: 'Enrollment_K_12', description: 'Enrollment', dtype: 'integer' },
      { column: 'City', description: null, dtype: 'string' },
      { column: 'OpenDate', description: 'the date, opened', dtype: 'object' },
      { column: 'Rate', description: null, dtype: 'number' },
      { column: 'Notes', description: 'free text', dtype: 'number' },
      { column: 'Odd', description: 'odd', dtype: 'object' },
    ]);
    // Not UTF-8: Latin-1, as pandas is retried with.
    expect(
      parseDescriptionCsv(
        Buffer.from('original_column_name,column_description,data_format\nA,\x95 bullet,text\n', 'latin1'),
      ),
    ).toEqual([{ column: 'A', description: '\x95 bullet', dtype: 'string' }]);
  });
});
