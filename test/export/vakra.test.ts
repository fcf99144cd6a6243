import type { SelBinding, ToolCall } from '../../core/model.js';
import { publishedSequence } from '../../export/published/calls.js';
import { VAKRA } from '../../export/published/dialects.js';
import { vakraVocabularyProblem } from './vakra-vocabulary.js';

/**
 * nl2api's gold calls in IBM VAKRA's vocabulary (export/vakra/calls.ts): the handles its
 * server names (mcp_server.py `_generate_handle`: prefix by tool, suffix from the table's
 * first key, n per prefix over tables only), its argument names, values written in where
 * VAKRA resolves no reference, and what it cannot say refused with the reason.
 */

const init = (tables: [alias: string, table: string][], joins: ToolCall['arguments'][] = []): ToolCall => ({
  name: 'initialize_active_data',
  arguments: { database: 'shop', tables: tables.map(([alias, table]) => ({ alias, table })), joins },
  label: 'starting_table_var',
});
const joined = init(
  [
    ['T1', 'district'],
    ['T2', 'account'],
  ],
  [{ type: 'inner', alias: 'T2', on: [{ left: 'T1.district_id', right: 'T2.district_id' }] }],
);
const call = (name: string, args: Record<string, unknown>, label: string): ToolCall => ({
  name,
  arguments: args,
  label,
});
const firstColumns: Record<string, string> = { orders: 'OrderID', order_lines: 'Line_No' };
const firstColumn = (table: string) => firstColumns[table];

function translated(
  formulation: 'slot' | 'sel',
  goldCalls: ToolCall[],
  outputs: unknown[] = [],
  initialization = [joined],
  bindings?: Record<string, SelBinding>,
) {
  const result = publishedSequence(
    { db: 'shop', formulation, initialization, goldCalls, bindings },
    outputs,
    VAKRA,
    firstColumn,
  );
  if ('problem' in result) throw new Error(result.problem);
  // As VAKRA's ground truth holds them: no labels.
  const calls = [result.init, ...result.calls].map(({ name, arguments: args }) => ({ name, arguments: args }));
  for (const c of calls.slice(1)) expect(vakraVocabularyProblem(c, formulation === 'sel')).toBeUndefined();
  return { calls, responses: result.responses, departures: result.departures };
}

function problem(
  goldCalls: ToolCall[],
  initialization = [joined],
  formulation: 'slot' | 'sel' = 'slot',
  bindings?: Record<string, SelBinding>,
): string {
  const result = publishedSequence(
    { db: 'shop', formulation, initialization, goldCalls, bindings },
    [],
    VAKRA,
    firstColumn,
  );
  if (!('problem' in result)) throw new Error('translated');
  return result.problem;
}

describe('SLOT: handles, argument names and keys as VAKRA serves them', () => {
  test('filters pass tables by handle; n counts per prefix; an aggregate is a scalar, no handle', () => {
    const sequence = translated(
      'slot',
      [
        call(
          'filter_data',
          {
            data_source: '$starting_table_var$',
            key_name: 'district_A3',
            condition: 'equal_to',
            value: 'east Bohemia',
          },
          'F1',
        ),
        call('sort_data', { data_source: '$F1$', key_name: 'account_date', ascending: true }, 'S1'),
        call(
          'filter_data',
          { data_source: '$S1$', key_name: 'account_frequency', condition: 'like', value: 'POPLATEK%' },
          'F2',
        ),
        call('aggregate_data', { data_source: '$F2$', key_name: '*', aggregation_type: 'count', distinct: false }, 'C'),
      ],
      [null, null, null, 13],
    );
    expect(sequence.calls[0]).toEqual({
      name: 'initialize_active_data',
      arguments: {
        condition_sequence: [['T1.district_id', 'T2.district_id', 'INNER']],
        alias_to_table_dict: {
          T1: { original_table_name: 'district', modified_table_name: 'district' },
          T2: { original_table_name: 'account', modified_table_name: 'account' },
        },
        database_path: 'shop/shop.sqlite',
      },
    });
    expect(sequence.calls.slice(1)).toEqual([
      {
        name: 'filter_data',
        arguments: {
          data_label: 'retrieved_district_1',
          key_name: 'district_A3',
          value: 'east Bohemia',
          condition: 'equal_to',
        },
      },
      {
        name: 'sort_data',
        arguments: { data_label: 'filtered_district_1', key_name: 'account_date', ascending: true },
      },
      {
        name: 'filter_data',
        arguments: {
          data_label: 'sorted_district_1',
          key_name: 'account_frequency',
          value: 'POPLATEK%',
          condition: 'like',
        },
      },
      // VAKRA checks key_name against the table's keys: a count of rows leaves it out.
      {
        name: 'aggregate_data',
        arguments: { data_label: 'filtered_district_2', aggregation_operation: 'count', distinct: false },
      },
    ]);
    expect(sequence.responses).toEqual([
      { handle: 'retrieved_district_1' },
      { handle: 'filtered_district_1' },
      { handle: 'sorted_district_1' },
      { handle: 'filtered_district_2' },
      13,
    ]);
    expect(sequence.departures).toEqual([
      'like: VAKRA matches case-sensitively, as a regex, and fails on NULL',
      'sort: VAKRA puts NULLs last in both directions, SQLite first when ascending',
    ]);
  });

  test("one unaliased table: bare keys, and the handle's suffix is its first column's text before a _ (else data)", () => {
    const orders = translated(
      'slot',
      [call('retrieve_data', { data_source: '$starting_table_var$', key_name: 'orders_total (EUR)', limit: 3 }, 'R')],
      [],
      [init([['orders', 'orders']])],
    );
    expect(orders.calls[1]).toEqual({
      name: 'retrieve_data',
      arguments: { data_label: 'retrieved_data_1', key_name: 'total_EUR', limit: 3 },
    });
    expect(orders.responses[1]).toEqual({ handle: 'retrieved_total_2' });
    const lines = translated(
      'slot',
      [
        call(
          'filter_data',
          { data_source: '$starting_table_var$', key_name: 'order_lines_qty', condition: 'greater_than', value: 2 },
          'F',
        ),
      ],
      [],
      [init([['order_lines', 'order_lines']])],
    );
    expect(lines.calls[1].arguments.data_label).toBe('retrieved_Line_1');
    expect(lines.responses[1]).toEqual({ handle: 'filtered_Line_1' });
  });

  test("a value another call computed is written in (VAKRA resolves no $LABEL$); a transform's new key is VAKRA's rewritten column", () => {
    const sequence = translated(
      'slot',
      [
        call(
          'aggregate_data',
          { data_source: '$starting_table_var$', key_name: 'account_balance', aggregation_type: 'mean' },
          'AVG',
        ),
        call(
          'filter_data',
          {
            data_source: '$starting_table_var$',
            key_name: 'account_balance',
            condition: 'greater_than',
            value: '$AVG$',
          },
          'F',
        ),
        call(
          'transform_data',
          {
            data_source: '$F$',
            key_name: 'account_date',
            operation_type: 'datetime',
            operation_args: { pattern: '%Y' },
          },
          'Y',
        ),
        call('retrieve_data', { data_source: '$Y$', key_name: 'account_date_datetime', distinct: true }, 'R'),
      ],
      [1520.5, null, null, ['1995', '1996']],
    );
    expect(sequence.calls[2].arguments.value).toBe(1520.5);
    expect(sequence.calls[3]).toEqual({
      name: 'transform_data',
      arguments: {
        data_label: 'filtered_district_1',
        key_name: 'account_date',
        operation_type: 'datetime',
        operation_args: { pattern: '%Y' },
      },
    });
    expect(sequence.calls[4].arguments).toEqual({
      data_label: 'transformed_district_1',
      key_name: 'account_date',
      distinct: true,
    });
    expect(sequence.responses[1]).toBe(1520.5);
  });

  test('UNION ALL is concatenate_data of two handles; arithmetic on two values is the Calculator', () => {
    const sequence = translated(
      'slot',
      [
        call(
          'filter_data',
          { data_source: '$starting_table_var$', key_name: 'district_A3', condition: 'equal_to', value: 'a' },
          'A',
        ),
        call(
          'filter_data',
          { data_source: '$starting_table_var$', key_name: 'district_A3', condition: 'equal_to', value: 'b' },
          'B',
        ),
        call('combine_data', { data_source: '$A$', other_data_source: '$B$', operation: 'union_all' }, 'U'),
        call('aggregate_data', { data_source: '$U$', key_name: 'account_balance', aggregation_type: 'sum' }, 'S'),
        call('calculate', { value: '$S$', operation_type: 'divide', operation_args: { operand: { value: 4 } } }, 'Q'),
      ],
      [null, null, null, 100, 25],
    );
    expect(sequence.calls[3]).toEqual({
      name: 'concatenate_data',
      arguments: { data_label_1: 'filtered_district_1', data_label_2: 'filtered_district_2' },
    });
    expect(sequence.calls[5]).toEqual({
      name: 'Calculator',
      arguments: { input_1: 100, input_2: 4, operation: 'divide' },
    });
    expect(sequence.responses[3]).toEqual({ handle: 'concatenated_district_1' });
  });
});

describe('SEL: the selection universe', () => {
  const bindings: Record<string, SelBinding> = {
    select_data_equal_to: { slotTool: 'filter_data', boundArguments: { condition: 'equal_to' } },
    select_data_is_null: { slotTool: 'filter_data', boundArguments: { condition: 'is_null' } },
    sort_data_descending: { slotTool: 'sort_data', boundArguments: { ascending: false } },
    aggregate_data_count: { slotTool: 'aggregate_data', boundArguments: { aggregation_type: 'count' } },
    get_account_account_id: { slotTool: 'retrieve_data', boundArguments: { key_name: 'account_account_id' } },
  };

  test('bound tools under their VAKRA names; a getter returns a list (no handle); a null test compares with None', () => {
    const sequence = translated(
      'sel',
      [
        call('select_data_equal_to', { data_source: '$starting_table_var$', key_name: 'district_A3', value: 'x' }, 'F'),
        call('select_data_is_null', { data_source: '$F$', key_name: 'account_date' }, 'N'),
        call('sort_data_descending', { data_source: '$N$', key_name: 'account_balance' }, 'S'),
        call('get_account_account_id', { data_source: '$S$' }, 'G'),
        call('aggregate_data_count', { data_source: '$S$', key_name: 'account_account_id', distinct: true }, 'C'),
      ],
      [null, null, null, [1, 2], 2],
      [joined],
      bindings,
    );
    expect(sequence.calls.slice(1)).toEqual([
      {
        name: 'select_data_equal_to',
        arguments: { data_label: 'retrieved_district_1', key_name: 'district_A3', value: 'x' },
      },
      {
        name: 'select_data_equal_to',
        arguments: { data_label: 'filtered_district_1', key_name: 'account_date', value: null },
      },
      { name: 'sort_data_descending', arguments: { data_label: 'filtered_district_2', key_name: 'account_balance' } },
      { name: 'get_account_account_ids', arguments: { data_label: 'sorted_district_1' } },
      {
        name: 'compute_data_count',
        arguments: { data_label: 'sorted_district_1', key_name: 'account_account_id', distinct: true },
      },
    ]);
    expect(sequence.departures).toContain('count of a key: VAKRA counts NULLs, SQLite does not');
  });

  test('a getter with a limit has no VAKRA form (its truncate takes a list written in, not a handle)', () => {
    expect(
      problem(
        [call('get_account_account_id', { data_source: '$starting_table_var$', limit: 1 }, 'G')],
        [joined],
        'sel',
        bindings,
      ),
    ).toMatch(/getters return the whole column/);
  });
});

describe('what VAKRA cannot say is refused, with the reason', () => {
  const start = '$starting_table_var$';
  test.each([
    ['grouping', [call('group_data_by', { data_source: start, key_name: 'district_A3' }, 'G')], /no group_data_by/],
    [
      'a list filter',
      [call('filter_data', { data_source: start, key_name: 'district_A3', condition: 'in', value: ['a'] }, 'F')],
      /no condition in/,
    ],
    [
      'argmax',
      [call('aggregate_data', { data_source: start, key_name: 'account_balance', aggregation_type: 'argmax' }, 'A')],
      /index, not a row/,
    ],
    [
      'a sort that limits',
      [call('sort_data', { data_source: start, key_name: 'account_balance', ascending: false, limit: 1 }, 'S')],
      /no limit/,
    ],
    [
      'a column reference',
      [
        call(
          'filter_data',
          { data_source: '$starting_table_var.district_A3$', key_name: 'x', condition: 'equal_to', value: 1 },
          'F',
        ),
      ],
      /column of another call/,
    ],
    [
      'a cast',
      [
        call(
          'transform_data',
          { data_source: start, key_name: 'account_balance', operation_type: 'cast', operation_args: { to: 'real' } },
          'T',
        ),
      ],
      /no operation cast/,
    ],
  ])('%s', (_, calls, why) => {
    expect(problem(calls)).toMatch(why);
  });

  test('a nested SELECT (a second starting table), and a column read after VAKRA rewrote it in place', () => {
    expect(problem([], [joined, { ...joined, label: 'starting_table_var_2' }])).toMatch(/second table/);
    expect(
      problem([
        call(
          'transform_data',
          {
            data_source: '$starting_table_var$',
            key_name: 'account_date',
            operation_type: 'datetime',
            operation_args: { pattern: '%Y' },
          },
          'T',
        ),
        call('retrieve_data', { data_source: '$T$', key_name: 'account_date' }, 'R'),
      ]),
    ).toMatch(/rewrote it in place/);
  });

  test("aliases in the order VAKRA's mapping holds them (sorted, as yaml.dump writes), each join reachable from the first", () => {
    const chain = init(
      [
        ['T3', 'orders'],
        ['T2', 'account'],
        ['T1', 'district'],
      ],
      [
        { type: 'inner', alias: 'T2', on: [{ left: 'T3.account_id', right: 'T2.account_id' }] },
        { type: 'inner', alias: 'T1', on: [{ left: 'T2.district_id', right: 'T1.district_id' }] },
      ],
    );
    const sequence = translated(
      'slot',
      [call('retrieve_data', { data_source: '$starting_table_var$', key_name: 'orders_amount' }, 'R')],
      [],
      [chain],
    );
    const args = sequence.calls[0].arguments as { condition_sequence: string[][]; alias_to_table_dict: object };
    expect(Object.keys(args.alias_to_table_dict)).toEqual(['T1', 'T2', 'T3']);
    expect(args.condition_sequence).toEqual([
      ['T2.district_id', 'T1.district_id', 'INNER'],
      ['T3.account_id', 'T2.account_id', 'INNER'],
    ]);
    // The first table is then district: its handle is named after it.
    expect(sequence.calls[1].arguments.data_label).toBe('retrieved_district_1');
  });

  test('a LEFT JOIN is kept and listed: VAKRA joins INNER', () => {
    const left = init(
      [
        ['T1', 'district'],
        ['T2', 'account'],
      ],
      [{ type: 'left', alias: 'T2', on: [{ left: 'T1.district_id', right: 'T2.district_id' }] }],
    );
    const sequence = translated(
      'slot',
      [call('retrieve_data', { data_source: '$starting_table_var$', key_name: 'district_A3' }, 'R')],
      [],
      [left],
    );
    expect(sequence.departures).toEqual(['LEFT JOIN: VAKRA joins every table INNER']);
  });
});
