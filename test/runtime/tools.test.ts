import { Ajv } from 'ajv';
import type { SqlValue, ToolCall, ToolOutput, ToolPool } from '../../core/model.js';
import {
  compileSequence,
  executeSequence,
  keysForInitialization,
  keysForSequence,
  slotToolSpecs,
  toOpenApi,
  ToolError,
  ToolSession,
} from '../../runtime/slot/index.js';
import { createDb, type TestDb } from './helpers.js';

/** Unit tests of the SLOT runtime on a small fixed table. */

const ROWS: SqlValue[][] = [
  // id, city, pop, score, note
  [1, 'Oslo', 7, 2.5, 'a'],
  [2, 'Rome', 7, null, "O'Brien"],
  [3, 'Oslo', 3, 1.5, null],
  [4, null, 10, 4.0, 'b'],
  [5, 'Rome', null, 2.5, 'a'],
  [6, 'Lima', 3, 0.5, 'c'],
];

let t: TestDb;
beforeAll(() => {
  t = createDb({
    place: {
      columns: [
        ['id', 'INTEGER'],
        ['city', 'TEXT'],
        ['pop', 'INTEGER'],
        ['score', 'REAL'],
        ['note', 'TEXT'],
      ],
      rows: ROWS,
    },
    other: {
      columns: [
        ['id', 'INTEGER'],
        ['x', 'TEXT'],
      ],
      rows: [[1, 'q']],
    },
  });
});
afterAll(() => t.cleanup());

const INIT: ToolCall = {
  name: 'initialize_active_data',
  label: 'starting_table_var',
  arguments: { database: 'test', tables: [{ alias: 'T1', table: 'place' }], joins: [] },
};
const S = '$starting_table_var$';

function c(name: string, label: string, args: Record<string, unknown>): ToolCall {
  return { name, label, arguments: args };
}

async function run(calls: ToolCall[], answer: string[], pool: ToolPool = 'extended'): Promise<ToolOutput[]> {
  return executeSequence({ initialization: [INIT], calls, answerLabels: answer }, t.info, t.executor, {
    timeoutMs: 5000,
    pool,
  });
}

async function one(calls: ToolCall[], pool: ToolPool = 'extended'): Promise<ToolOutput> {
  return (await run(calls, [calls[calls.length - 1].label], pool))[0];
}

function codeOf(calls: ToolCall[], pool: ToolPool = 'extended'): string {
  try {
    compileSequence(t.info, [INIT], calls, pool);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as ToolError).code;
  }
  return 'ok';
}

describe('ToolError codes', () => {
  const cases: [string, ToolCall[], ToolPool?][] = [
    ['unknown_tool', [c('drop_table', 'a', {})]],
    ['unknown_tool', [c('initialize_active_data', 'a', INIT.arguments)]],
    ['not_in_pool', [c('union_data', 'a', { data_source: S, other_data_source: S })], 'paper'],
    ['not_in_pool', [c('calculate', 'a', { value: 1, operation_type: 'abs' })], 'paper'],
    [
      'not_in_pool',
      [c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'in', value: [1] })],
      'paper',
    ],
    ['not_in_pool', [c('retrieve_data', 'a', { data_source: S, key_name: 'place_pop', offset: 1 })], 'paper'],
    ['not_in_pool', [c('sort_data', 'a', { data_source: S, key_name: 'place_pop', limit: 2 })], 'paper'],
    ['bad_value', [c('sort_data', 'a', { data_source: S, key_name: 'place_pop', offset: -1 })]],
    ['not_in_pool', [c('group_data_by', 'a', { data_source: S, key_name: ['place_pop', 'place_city'] })], 'paper'],
    [
      'not_in_pool',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'add',
          operation_args: { operand: { value: 1 } },
        }),
      ],
      'paper',
    ],
    ['unknown_argument', [c('sort_data', 'a', { data_source: S, key_name: 'place_pop', order: 'asc' })]],
    [
      'unknown_argument',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'abs',
          operation_args: { digits: 2 },
        }),
      ],
    ],
    ['missing_argument', [c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'equal_to' })]],
    ['missing_argument', [c('aggregate_data', 'a', { data_source: S, key_name: 'place_pop' })]],
    [
      'missing_argument',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_note',
          operation_type: 'substring',
          operation_args: {},
        }),
      ],
    ],
    ['bad_value', [c('calculate', 'a', { value: 1, operation_type: 'rank' })]],
    [
      'not_in_pool',
      [c('transform_data', 'a', { data_source: S, key_name: 'place_pop', operation_type: 'rank' })],
      'paper',
    ],
    [
      'wrong_type',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'rank',
          operation_args: { partition_by: 'place_city' },
        }),
      ],
    ],
    [
      'unknown_key',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'rank',
          operation_args: { partition_by: ['place_town'] },
        }),
      ],
    ],
    ['wrong_type', [c('sort_data', 'a', { data_source: S, key_name: 'place_pop', ascending: 'yes' })]],
    ['wrong_type', [c('retrieve_data', 'a', { data_source: S, key_name: 'place_pop', limit: 1.5 })]],
    // An integer to JavaScript that SQLite cannot bind: refused by the tool, not by the driver.
    ['bad_value', [c('retrieve_data', 'a', { data_source: S, key_name: 'place_pop', limit: 1e308 })]],
    // The same for values and integer operation arguments (the sweep found them run, then refused by the driver).
    ...[1e308, -1e308, 2 ** 64].map((value): [string, ToolCall[]] => [
      'bad_value',
      [c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'equal_to', value })],
    ]),
    ['bad_value', [c('calculate', 'a', { value: 1e308, operation_type: 'abs' })]],
    [
      'bad_value',
      [
        c('filter_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          condition: 'in',
          value: [1, 2 ** 64],
        }),
      ],
    ],
    [
      'bad_value',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_note',
          operation_type: 'substring',
          operation_args: { start_index: 1e308 },
        }),
      ],
    ],
    [
      'bad_value',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_score',
          operation_type: 'round',
          operation_args: { digits: -1e308 },
        }),
      ],
    ],
    [
      'wrong_type',
      [c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'equal_to', value: { x: 1 } })],
    ],
    [
      'wrong_type',
      [
        c('aggregate_data', 'm', { data_source: S, key_name: 'place_pop', aggregation_type: 'max' }),
        c('filter_data', 'a', { data_source: '$m$', key_name: 'place_pop', condition: 'equal_to', value: 1 }),
      ],
    ],
    ['bad_value', [c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'equals', value: 1 })]],
    ['bad_value', [c('aggregate_data', 'a', { data_source: S, key_name: '*', aggregation_type: 'sum' })]],
    [
      'bad_value',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'cast',
          operation_args: { to: 'date' },
        }),
      ],
    ],
    [
      'bad_value',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'abs',
          operation_args: { new_key_name: 'place_city' },
        }),
      ],
    ],
    [
      'bad_value',
      [
        c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'greater_than', value: 3 }),
        c('filter_data', 'b', { data_source: '$a$', key_name: 'place_pop', condition: 'less_than', value: 9 }),
        c('transform_data', 'x', { data_source: '$b$', key_name: 'place_pop', operation_type: 'abs' }),
        c('union_data', 'u', { data_source: '$a$', other_data_source: '$x$' }),
      ],
    ],
    ['unknown_key', [c('retrieve_data', 'a', { data_source: S, key_name: 'pop' })]],
    ['unknown_key', [c('sort_data', 'a', { data_source: S, key_name: 'place_pop" DESC; --' })]],
    [
      'not_grouped',
      [
        c('group_data_by', 'g', { data_source: S, key_name: 'place_city' }),
        c('retrieve_data', 'a', { data_source: '$g$', key_name: 'place_pop' }),
      ],
    ],
    ['bad_reference', [c('retrieve_data', 'a', { data_source: '$nope$', key_name: 'place_pop' })]],
    ['bad_reference', [c('retrieve_data', 'a', { data_source: 'starting_table_var', key_name: 'place_pop' })]],
    [
      'bad_reference',
      [
        c('retrieve_data', 'a', { data_source: '$b$', key_name: 'place_pop' }),
        c('retrieve_data', 'b', { data_source: S, key_name: 'place_pop' }),
      ],
    ],
    [
      'bad_reference',
      [c('filter_data', 'a', { data_source: S, key_name: 'place_pop', condition: 'equal_to', value: S })],
    ],
    [
      'bad_reference',
      [
        c('filter_data', 'a', {
          data_source: S,
          key_name: 'place_pop',
          condition: 'equal_to',
          value: '$starting_table_var.nope$',
        }),
      ],
    ],
    [
      'duplicate_label',
      [
        c('retrieve_data', 'a', { data_source: S, key_name: 'place_pop' }),
        c('retrieve_data', 'a', { data_source: S, key_name: 'place_id' }),
      ],
    ],
    ['not_in_pool', [c('combine_data', 'a', { data_source: S, other_data_source: S, operation: 'union' })], 'paper'],
    [
      'not_in_pool',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_note',
          operation_type: 'datetime',
          operation_args: { pattern: '%Y', modifiers: ['+1 day'] },
        }),
      ],
      'paper',
    ],
    [
      'wrong_type',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_note',
          operation_type: 'datetime',
          operation_args: { pattern: '%Y', modifiers: '+1 day' },
        }),
      ],
    ],
    [
      'bad_value',
      [
        c('transform_data', 'a', {
          data_source: S,
          key_name: 'place_note',
          operation_type: 'datetime',
          operation_args: { pattern: '%Y', modifiers: ['+1 day', 'localtime'] },
        }),
      ],
    ],
    [
      'bad_value',
      [c('calculate', 'a', { value: 'now', operation_type: 'datetime', operation_args: { pattern: '%Y' } })],
    ],
    ['bad_value', [c('combine_data', 'a', { data_source: S, other_data_source: S, operation: 'minus' })]],
    [
      'bad_value',
      [
        c('retrieve_data', 'r', { data_source: S, key_name: 'place_pop' }),
        c('combine_data', 'a', { data_source: '$r$', other_data_source: S, operation: 'union' }),
      ],
    ],
    [
      'wrong_type',
      [
        c('group_data_by', 'g', { data_source: S, key_name: 'place_city' }),
        c('combine_data', 'a', { data_source: '$g$', other_data_source: '$g$', operation: 'union' }),
      ],
    ],
    [
      'wrong_type',
      [
        c('aggregate_data', 'm', { data_source: S, key_name: 'place_pop', aggregation_type: 'max' }),
        c('combine_data', 'a', { data_source: '$m$', other_data_source: S, operation: 'union' }),
      ],
    ],
  ];
  // A default keeps the callback's arity at 2: jest would take a third parameter for `done`.
  test.each(cases)('%s (%#)', (code, calls, pool = 'extended') => {
    expect(codeOf(calls, pool)).toBe(code);
  });

  test('messages name the argument and the allowed values', () => {
    try {
      compileSequence(
        t.info,
        [INIT],
        [c('filter_data', 'f', { data_source: S, key_name: 'pop', condition: 'equal_to', value: 1 })],
        'paper',
      );
      throw new Error('expected a ToolError');
    } catch (error) {
      const e = error as ToolError;
      expect(e.label).toBe('f');
      expect(e.message).toContain('key_name');
      expect(e.message).toContain('"place_pop"');
    }
    try {
      compileSequence(
        t.info,
        [INIT],
        [c('filter_data', 'f', { data_source: S, key_name: 'place_pop', condition: 'in', value: [1] })],
        'paper',
      );
      throw new Error('expected a ToolError');
    } catch (error) {
      expect((error as ToolError).message).toContain('"like"');
      expect((error as ToolError).message).not.toContain('"not_like"');
    }
  });
});

describe('semantics', () => {
  test('literals are bound parameters, never inlined', () => {
    const seq = compileSequence(
      t.info,
      [INIT],
      [c('filter_data', 'f', { data_source: S, key_name: 'place_note', condition: 'equal_to', value: "O'Brien" })],
      'extended',
    );
    expect(seq.relations.f.sql).not.toContain('Brien');
    expect(seq.relations.f.params).toEqual(["O'Brien"]);
  });

  test('scalar, list and column references', async () => {
    const out = await run(
      [
        c('aggregate_data', 'avg', { data_source: S, key_name: 'place_pop', aggregation_type: 'mean' }),
        c('filter_data', 'big', { data_source: S, key_name: 'place_pop', condition: 'greater_than', value: '$avg$' }),
        c('retrieve_data', 'ids', { data_source: '$big$', key_name: 'place_id' }),
        c('filter_data', 'same', { data_source: S, key_name: 'place_id', condition: 'in', value: '$ids$' }),
        c('filter_data', 'cols', {
          data_source: S,
          key_name: 'place_id',
          condition: 'not_in',
          value: '$big.place_id$',
        }),
        c('retrieve_data', 'r', { data_source: '$same$', key_name: 'place_city' }),
        c('retrieve_data', 'r2', { data_source: '$cols$', key_name: 'place_id' }),
        c('calculate', 'half', { value: '$avg$', operation_type: 'divide', operation_args: { operand: { value: 2 } } }),
      ],
      ['avg', 'ids', 'r', 'r2', 'half'],
    );
    expect(out[0]).toEqual({ kind: 'scalar', value: 6 });
    expect(out[1]).toEqual({ kind: 'list', values: [1, 2, 4] });
    expect(out[2]).toEqual({ kind: 'list', values: ['Oslo', 'Rome', null] });
    expect(out[3]).toEqual({ kind: 'list', values: [3, 5, 6] });
    expect(out[4]).toEqual({ kind: 'scalar', value: 3 });
  });

  test('stable multi-key sort: sort by k2, then k1 orders by k1, then k2; NULLs first ascending, last descending', async () => {
    const out = await run(
      [
        c('sort_data', 's2', { data_source: S, key_name: 'place_score', ascending: false }),
        c('sort_data', 's1', { data_source: '$s2$', key_name: 'place_city', ascending: true }),
        c('retrieve_data', 'r', { data_source: '$s1$', key_name: 'place_id' }),
        c('sort_data', 'd', { data_source: S, key_name: 'place_pop', ascending: false }),
        c('retrieve_data', 'rd', { data_source: '$d$', key_name: 'place_id' }),
        c('filter_data', 'f', { data_source: '$d$', key_name: 'place_pop', condition: 'less_than', value: 8 }),
        c('transform_data', 'tr', { data_source: '$f$', key_name: 'place_pop', operation_type: 'abs' }),
        c('retrieve_data', 'rf', { data_source: '$tr$', key_name: 'place_id', limit: 3 }),
      ],
      ['r', 'rd', 'rf'],
    );
    // city asc (NULL first), then score desc (NULL last), ties by original order.
    expect(out[0]).toEqual({ kind: 'list', values: [4, 6, 1, 3, 5, 2] });
    expect(out[1]).toEqual({ kind: 'list', values: [4, 1, 2, 3, 6, 5] });
    expect(out[2]).toEqual({ kind: 'list', values: [1, 2, 3] });
  });

  test('sort_data limit/offset keep the rows LIMIT/OFFSET leaves of the sorted table (of a grouped table: groups)', async () => {
    const out = await run(
      [
        // pop desc, NULL last, ties in source order: 4, 1, 2, 3, 6, 5.
        c('sort_data', 's', { data_source: S, key_name: 'place_pop', ascending: false, limit: 3, offset: 1 }),
        c('retrieve_data', 'r', { data_source: '$s$', key_name: 'place_id' }),
        c('filter_data', 'f', { data_source: '$s$', key_name: 'place_city', condition: 'equal_to', value: 'Oslo' }),
        c('aggregate_data', 'n', { data_source: '$f$', key_name: '*', aggregation_type: 'count' }),
        c('sort_data', 'all', { data_source: S, key_name: 'place_id', ascending: false, limit: 0, offset: 4 }),
        c('retrieve_data', 'ra', { data_source: '$all$', key_name: 'place_id' }),
        c('group_data_by', 'g', { data_source: S, key_name: 'place_city' }),
        c('aggregate_data', 'c', { data_source: '$g$', key_name: '*', aggregation_type: 'count' }),
        c('sort_data', 'top', { data_source: '$c$', key_name: 'count_rows', ascending: false, limit: 2 }),
        c('aggregate_data', 'm', { data_source: '$top$', key_name: 'place_pop', aggregation_type: 'max' }),
        c('retrieve_data', 'rc', { data_source: '$m$', key_name: 'place_city' }),
        c('retrieve_data', 'rm', { data_source: '$m$', key_name: 'max_place_pop' }),
      ],
      ['r', 'n', 'ra', 'rc', 'rm'],
    );
    expect(out[0]).toEqual({ kind: 'list', values: [1, 2, 3] });
    expect(out[1]).toEqual({ kind: 'scalar', value: 2 });
    expect(out[2]).toEqual({ kind: 'list', values: [2, 1] });
    // Groups by count desc, ties in group order (NULL, Lima, Oslo, Rome): Oslo, Rome.
    expect(out[3]).toEqual({ kind: 'list', values: ['Oslo', 'Rome'] });
    expect(out[4]).toEqual({ kind: 'list', values: [7, 7] });
  });

  test('grouped aggregates: derived keys, NULL group, HAVING-like filters, later aggregates', async () => {
    const out = await run(
      [
        c('group_data_by', 'g', { data_source: S, key_name: 'place_city' }),
        c('aggregate_data', 'a1', { data_source: '$g$', key_name: '*', aggregation_type: 'count' }),
        c('aggregate_data', 'a2', { data_source: '$a1$', key_name: '*', aggregation_type: 'count' }),
        c('aggregate_data', 'a3', {
          data_source: '$a2$',
          key_name: 'place_score',
          aggregation_type: 'sum',
          distinct: true,
        }),
        c('filter_data', 'h', { data_source: '$a3$', key_name: 'count_rows', condition: 'greater_than', value: 1 }),
        c('aggregate_data', 'a4', { data_source: '$h$', key_name: 'place_pop', aggregation_type: 'count' }),
        c('sort_data', 's', { data_source: '$a4$', key_name: 'count_place_pop', ascending: true }),
        c('retrieve_data', 'r', { data_source: '$s$', key_name: 'place_city' }),
      ],
      ['a3', 's', 'r'],
    );
    expect(out[0]).toEqual({
      kind: 'table',
      columns: ['place_city', 'count_rows', 'count_rows_2', 'sum_distinct_place_score'],
      rows: [
        [null, 1, 1, 4.0],
        ['Lima', 1, 1, 0.5],
        ['Oslo', 2, 2, 4.0],
        ['Rome', 2, 2, 2.5],
      ],
    });
    expect(out[1]).toMatchObject({
      columns: ['place_city', 'count_rows', 'count_rows_2', 'sum_distinct_place_score', 'count_place_pop'],
    });
    expect(out[2]).toEqual({ kind: 'list', values: ['Rome', 'Oslo'] });
    const seq = compileSequence(
      t.info,
      [INIT],
      [
        c('group_data_by', 'g', { data_source: S, key_name: 'place_city' }),
        c('aggregate_data', 'a', { data_source: '$g$', key_name: 'place_pop', aggregation_type: 'mean' }),
      ],
      'paper',
    );
    expect(seq.relations.a).toMatchObject({ kind: 'table', grouped: true, keys: ['place_city', 'mean_place_pop'] });
    expect(seq.derivedKeys.map((d) => d.key)).toEqual(['mean_place_pop']);
  });

  test('NULL semantics: comparisons drop NULLs, COUNT ignores them, empty SUM is NULL, empty COUNT is 0', async () => {
    const out = await run(
      [
        c('filter_data', 'ne', { data_source: S, key_name: 'place_city', condition: 'not_equal_to', value: 'Oslo' }),
        c('retrieve_data', 'r', { data_source: '$ne$', key_name: 'place_id' }),
        c('aggregate_data', 'cnt', { data_source: S, key_name: 'place_pop', aggregation_type: 'count' }),
        c('aggregate_data', 'rows', { data_source: S, key_name: '*', aggregation_type: 'count' }),
        c('filter_data', 'none', { data_source: S, key_name: 'place_pop', condition: 'greater_than', value: 100 }),
        c('aggregate_data', 'sum', { data_source: '$none$', key_name: 'place_pop', aggregation_type: 'sum' }),
        c('aggregate_data', 'cnt0', { data_source: '$none$', key_name: 'place_pop', aggregation_type: 'count' }),
        c('aggregate_data', 'std1', { data_source: '$ne$', key_name: 'place_pop', aggregation_type: 'std', limit: 1 }),
        c('filter_data', 'isn', { data_source: S, key_name: 'place_note', condition: 'is_null' }),
        c('retrieve_data', 'ri', { data_source: '$isn$', key_name: 'place_id' }),
      ],
      ['r', 'cnt', 'rows', 'sum', 'cnt0', 'std1', 'ri'],
    );
    expect(out).toEqual([
      { kind: 'list', values: [2, 5, 6] },
      { kind: 'scalar', value: 5 },
      { kind: 'scalar', value: 6 },
      { kind: 'scalar', value: null },
      { kind: 'scalar', value: 0 },
      { kind: 'scalar', value: null },
      { kind: 'list', values: [3] },
    ]);
  });

  test('rank: ties share a rank (RANK skips after them, DENSE_RANK does not), NULLs last descending, per partition, over the rows it is given', async () => {
    const rank = (label: string, source: string, args: Record<string, unknown>) =>
      c('transform_data', label, {
        data_source: source,
        key_name: 'place_pop',
        operation_type: 'rank',
        operation_args: { ...args, new_key_name: label },
      });
    const out = await run(
      [
        rank('r', S, {}),
        rank('d', '$r$', { dense: true, ascending: true }),
        rank('p', '$d$', { partition_by: ['place_city'] }),
        c('retrieve_data', 'rr', { data_source: '$p$', key_name: 'r' }),
        c('retrieve_data', 'dd', { data_source: '$p$', key_name: 'd' }),
        c('retrieve_data', 'pp', { data_source: '$p$', key_name: 'p' }),
        c('filter_data', 'f', { data_source: S, key_name: 'place_id', condition: 'greater_than', value: 2 }),
        rank('fr', '$f$', {}),
        c('retrieve_data', 'ff', { data_source: '$fr$', key_name: 'fr' }),
      ],
      ['rr', 'dd', 'pp', 'ff'],
    );
    // pop by id: 7, 7, 3, 10, NULL, 3; city: Oslo, Rome, Oslo, NULL, Rome, Lima.
    expect(out).toEqual([
      { kind: 'list', values: [2, 2, 4, 1, 6, 4] },
      { kind: 'list', values: [3, 3, 2, 4, 1, 2] },
      { kind: 'list', values: [1, 1, 2, 1, 2, 1] },
      { kind: 'list', values: [2, 1, 4, 2] },
    ]);
  });

  test('integer division stays integer; a real operand or cast makes it real; x / 0 is NULL', async () => {
    const out = await run(
      [
        c('calculate', 'a', { value: 7, operation_type: 'divide', operation_args: { operand: { value: 2 } } }),
        c('calculate', 'b', { value: 7, operation_type: 'divide', operation_args: { operand: { value: 2.5 } } }),
        c('calculate', 'r', { value: 7, operation_type: 'cast', operation_args: { to: 'real' } }),
        c('calculate', 'c', { value: '$r$', operation_type: 'divide', operation_args: { operand: { value: 2 } } }),
        c('calculate', 'z', { value: 7, operation_type: 'divide', operation_args: { operand: { value: 0 } } }),
        c('transform_data', 'tp', {
          data_source: S,
          key_name: 'place_pop',
          operation_type: 'divide',
          operation_args: { operand: { value: 2 }, new_key_name: 'half' },
        }),
        c('retrieve_data', 'h', { data_source: '$tp$', key_name: 'half' }),
      ],
      ['a', 'b', 'c', 'z', 'h'],
    );
    expect(out).toEqual([
      { kind: 'scalar', value: 3 },
      { kind: 'scalar', value: 2.8 },
      { kind: 'scalar', value: 3.5 },
      { kind: 'scalar', value: null },
      { kind: 'list', values: [3, 3, 1, 5, null, 1] },
    ]);
  });

  test('argmax returns the first row holding the maximum; hidden columns never show', async () => {
    const out = await one(
      [c('aggregate_data', 'a', { data_source: S, key_name: 'place_pop', aggregation_type: 'argmin' })],
      'paper',
    );
    expect(out).toEqual({
      kind: 'table',
      columns: ['place_id', 'place_city', 'place_pop', 'place_score', 'place_note'],
      rows: [[3, 'Oslo', 3, 1.5, null]],
    });
  });

  test('select_unique_values keeps first-occurrence order; a key list gives a table', async () => {
    const out = await run(
      [
        c('select_unique_values', 'u', { data_source: S, key_name: 'place_city' }),
        c('select_unique_values', 'v', { data_source: S, key_name: ['place_city', 'place_pop'] }),
      ],
      ['u', 'v'],
    );
    expect(out[0]).toEqual({ kind: 'list', values: ['Oslo', 'Rome', null, 'Lima'] });
    expect(out[1]).toMatchObject({ kind: 'table', columns: ['place_city', 'place_pop'] });
    expect((out[1] as { rows: unknown[] }).rows).toHaveLength(6);
  });

  test('a union keeps each source row once, in the sorted order of a common sorted source', async () => {
    const out = await one([
      c('sort_data', 's', { data_source: S, key_name: 'place_score', ascending: true }),
      c('filter_data', 'a', { data_source: '$s$', key_name: 'place_city', condition: 'equal_to', value: 'Oslo' }),
      c('filter_data', 'b', { data_source: '$s$', key_name: 'place_pop', condition: 'equal_to', value: 3 }),
      c('union_data', 'u', { data_source: '$a$', other_data_source: '$b$' }),
      c('retrieve_data', 'r', { data_source: '$u$', key_name: 'place_id' }),
    ]);
    expect(out).toEqual({ kind: 'list', values: [6, 3, 1] });
  });

  test('joins: repeated tables get <table>_<n>_ keys; left joins keep unmatched rows', async () => {
    const init: ToolCall = {
      name: 'initialize_active_data',
      label: 'starting_table_var',
      arguments: {
        database: 'test',
        tables: [
          { alias: 'T1', table: 'place' },
          { alias: 'T2', table: 'other' },
          { alias: 'T3', table: 'place' },
        ],
        joins: [
          { type: 'left', alias: 'T2', on: [{ left: 'T1.id', right: 'T2.id' }] },
          { type: 'inner', alias: 'T3', on: [{ left: 'T1.id', right: 'T3.id' }] },
        ],
      },
    };
    const out = await executeSequence(
      {
        initialization: [init],
        calls: [
          c('retrieve_data', 'r', { data_source: S, key_name: 'other_x' }),
          c('retrieve_data', 'r2', { data_source: S, key_name: 'place_2_city' }),
        ],
        answerLabels: ['r', 'r2'],
      },
      t.info,
      t.executor,
      { timeoutMs: 5000, pool: 'paper' },
    );
    expect(out[0]).toEqual({ kind: 'list', values: ['q', null, null, null, null, null] });
    expect(out[1]).toEqual({ kind: 'list', values: ['Oslo', 'Rome', 'Oslo', null, 'Rome', 'Lima'] });
  });
});

describe('ToolSession', () => {
  test('keeps state between calls and survives a rejected call', async () => {
    const session = new ToolSession(t.info, t.executor, { timeoutMs: 5000, pool: 'paper' });
    expect((await session.call(INIT)).kind).toBe('table');
    await expect(
      session.call(c('filter_data', 'f', { data_source: S, key_name: 'nope', condition: 'equal_to', value: 1 })),
    ).rejects.toMatchObject({ code: 'unknown_key' });
    await session.call(
      c('filter_data', 'f', { data_source: S, key_name: 'place_city', condition: 'like', value: 'o%' }),
    );
    expect(
      await session.call(c('aggregate_data', 'n', { data_source: '$f$', key_name: '*', aggregation_type: 'count' })),
    ).toEqual({ kind: 'scalar', value: 2 });
    expect(session.labels()).toEqual(['starting_table_var', 'f', 'n']);
  });

  test('answers the calls defined in it with the statements executeSequence runs for them', async () => {
    const statements: string[] = [];
    const executor = {
      ...t.executor,
      run: (request: Parameters<typeof t.executor.run>[0]) => {
        statements.push(request.sql);
        return t.executor.run(request);
      },
    };
    const calls = [
      c('filter_data', 'f', { data_source: S, key_name: 'place_city', condition: 'like', value: 'o%' }),
      c('retrieve_data', 'r', { data_source: '$f$', key_name: 'place_id' }),
      c('aggregate_data', 'n', { data_source: '$f$', key_name: '*', aggregation_type: 'count' }),
    ];
    const options = { timeoutMs: 5000, pool: 'extended' as const };
    const sequence = await executeSequence(
      { initialization: [INIT], calls, answerLabels: ['r', 'n'] },
      t.info,
      executor,
      options,
    );
    const ran = statements.splice(0);
    const session = new ToolSession(t.info, executor, options);
    await session.define(INIT);
    for (const call of calls) await session.define(call, false);
    expect(await session.answer(['r', 'n'])).toEqual(sequence);
    expect(statements.filter((sql) => !sql.startsWith('SELECT name FROM pragma_table_list'))).toEqual(
      ran.filter((sql) => !sql.startsWith('SELECT name FROM pragma_table_list')),
    );
  });

  test('a starting table defined as a sequence call is refused, as executeSequence refuses it', async () => {
    const session = new ToolSession(t.info, t.executor, { timeoutMs: 5000, pool: 'extended' });
    await session.define(INIT);
    await expect(session.define({ ...INIT, label: 'again' }, false)).rejects.toMatchObject({ code: 'unknown_tool' });
    await expect(
      executeSequence(
        { initialization: [INIT], calls: [{ ...INIT, label: 'again' }], answerLabels: ['again'] },
        t.info,
        t.executor,
        {
          timeoutMs: 5000,
          pool: 'extended',
        },
      ),
    ).rejects.toMatchObject({ code: 'unknown_tool' });
    expect(session.labels()).toEqual(['starting_table_var']);
  });
});

describe('tool specs', () => {
  const keys = () => keysForInitialization(t.info, [INIT]);

  test('keys carry column descriptions', () => {
    expect(keys()[0]).toEqual({ key: 'place_id', description: 'the id of the place' });
    expect(keys().map((k) => k.key)).toEqual(['place_id', 'place_city', 'place_pop', 'place_score', 'place_note']);
  });

  test('paper pool: exactly the seven tools with the paper conditions and operations', () => {
    const specs = slotToolSpecs(keys(), 'paper');
    expect(specs.map((s) => s.function.name)).toEqual([
      'filter_data',
      'sort_data',
      'retrieve_data',
      'aggregate_data',
      'group_data_by',
      'select_unique_values',
      'transform_data',
    ]);
    const props = (name: string) =>
      (
        specs.find((s) => s.function.name === name)!.function.parameters as {
          properties: Record<string, { enum?: string[]; description?: string }>;
        }
      ).properties;
    expect(props('filter_data').condition.enum).toEqual([
      'equal_to',
      'not_equal_to',
      'greater_than',
      'less_than',
      'greater_than_equal_to',
      'less_than_equal_to',
      'contains',
      'like',
    ]);
    expect(props('transform_data').operation_type.enum).toEqual(['substring', 'abs', 'datetime']);
    expect(props('aggregate_data').aggregation_type.enum).toEqual([
      'min',
      'max',
      'sum',
      'mean',
      'count',
      'std',
      'argmin',
      'argmax',
    ]);
    expect(Object.keys(props('retrieve_data'))).toEqual(['data_source', 'key_name', 'distinct', 'limit']);
    expect(
      Object.keys((props('transform_data').operation_args as { properties: Record<string, unknown> }).properties),
    ).not.toContain('modifiers');
    expect(props('filter_data').key_name.enum).toEqual(keys().map((k) => k.key));
    expect(props('filter_data').key_name.description).toContain('place_city: the city of the place');
    expect(props('aggregate_data').key_name.enum).toContain('*');
  });

  test('extended pool adds union_data, calculate and combine_data; every spec is a valid JSON schema', () => {
    const specs = slotToolSpecs(keys(), 'extended');
    expect(specs.map((s) => s.function.name)).toEqual(
      expect.arrayContaining(['union_data', 'calculate', 'combine_data']),
    );
    const combine = specs.find((s) => s.function.name === 'combine_data')!.function.parameters as {
      properties: Record<string, { enum?: string[] }>;
    };
    expect(combine.properties.operation.enum).toEqual(['union', 'union_all', 'intersect', 'except']);
    const ajv = new Ajv({ strict: false });
    for (const spec of specs) expect(() => ajv.compile(spec.function.parameters)).not.toThrow();
    const validate = ajv.compile(specs.find((s) => s.function.name === 'group_data_by')!.function.parameters);
    expect(validate({ data_source: S, key_name: ['place_city', 'place_pop'] })).toBe(true);
    expect(validate({ data_source: S, key_name: 'city' })).toBe(false);
  });

  test('keysForSequence adds the derived keys', () => {
    const seq = {
      initialization: [INIT],
      calls: [c('transform_data', 'x', { data_source: S, key_name: 'place_pop', operation_type: 'abs' })],
      answerLabels: ['x'],
    };
    expect(keysForSequence(t.info, seq, 'paper').map((k) => k.key)).toContain('place_pop_abs');
  });

  test('OpenAPI: one POST /tools/{name} per tool', () => {
    const specs = slotToolSpecs(keys(), 'paper');
    const doc = toOpenApi(specs, { title: 'test', version: '1' }) as {
      openapi: string;
      paths: Record<string, { post: { operationId: string; requestBody: unknown } }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(specs.map((s) => `/tools/${s.function.name}`));
    expect(doc.paths['/tools/filter_data'].post.operationId).toBe('filter_data');
    expect(doc.paths['/tools/filter_data'].post.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: specs[0].function.parameters } },
    });
  });
});
