import { Validator } from '@cfworker/json-schema';
import type { SelSequence, SlotSequence, SqlValue, ToolCall } from '../../core/model.js';
import { expandToSel } from '../../generators/sel/expand.js';
import {
  executeSelSequence,
  SelToolSession,
  sanitizeToolName,
  selToolSpec,
  selToolSpecs,
  TOOL_NAME_PATTERN,
} from '../../runtime/sel/index.js';
import { choicesOf, OPERATIONS } from '../../runtime/slot/catalog.js';
import { SHAPE_ARGS, SHAPE_REQUIRED } from '../../runtime/slot/operations.js';
import { slotToolSpec } from '../../runtime/slot/specs.js';
import { ToolRegistry } from '../../pipeline/tool-registry.js';
import { executeSequence, keysForInitialization, ToolError } from '../../runtime/slot/index.js';
import { createDb, createTestDb, INIT_ITEM, INIT_JOIN, int, pick, prng, type TestDb } from '../runtime/helpers.js';

/** SEL expansion: valid names, the instance universe, and SEL execution == SLOT execution. */

const OPTS = { timeoutMs: 5000, pool: 'extended' as const };
const COLUMNS = ['item_id', 'item_qty', 'item_price', 'item_name', 'item_code', 'item_grp', 'item_day'];

function expand(seq: SlotSequence, t: TestDb, pool: 'paper' | 'extended' = 'extended'): SelSequence {
  const outcome = expandToSel(seq, t.info, pool);
  if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
  return outcome.value;
}

/** The specs of a SEL sequence's tool universe (as sel.expand built them before it stored bindings only). */
function toolsOf(sel: SelSequence, t: TestDb, pool: 'paper' | 'extended' = 'extended') {
  return selToolSpecs(sel.bindings, [...keysForInitialization(t.info, sel.initialization), ...sel.derivedKeys], pool);
}

/** A random but valid SLOT sequence touching every SEL binding kind. */
function randomSequence(rand: () => number): SlotSequence {
  const calls: ToolCall[] = [];
  const add = (name: string, args: Record<string, unknown>): string => {
    const label = `c${calls.length}`;
    calls.push({ name, label, arguments: args });
    return label;
  };
  let table = 'starting_table_var';
  for (let i = 0, n = int(rand, 1, 4); i < n; i++) {
    const kind = pick(rand, ['filter', 'sort', 'transform', 'union']);
    if (kind === 'filter') {
      const condition = pick(rand, ['equal_to', 'greater_than', 'less_than_equal_to', 'like', 'is_not_null', 'in']);
      const value = condition === 'in' ? [1, 2, '10'] : pick(rand, [3, 'a%', 2.5]);
      table = add('filter_data', { data_source: `$${table}$`, key_name: pick(rand, COLUMNS), condition, value });
    } else if (kind === 'sort') {
      table = add('sort_data', { data_source: `$${table}$`, key_name: pick(rand, COLUMNS), ascending: rand() < 0.5 });
    } else if (kind === 'transform') {
      table = add('transform_data', {
        data_source: `$${table}$`,
        key_name: 'item_qty',
        operation_type: pick(rand, ['abs', 'negate']),
        operation_args: { new_key_name: `derived ${calls.length}` },
      });
      const derived = `derived ${calls.length - 1}`;
      if (rand() < 0.5) add('retrieve_data', { data_source: `$${table}$`, key_name: derived, limit: 3 });
    } else {
      const other = add('filter_data', {
        data_source: `$${table}$`,
        key_name: 'item_grp',
        condition: 'equal_to',
        value: int(rand, 1, 4),
      });
      const one = add('filter_data', {
        data_source: `$${table}$`,
        key_name: 'item_qty',
        condition: 'less_than',
        value: int(rand, 0, 8),
      });
      table = add('union_data', { data_source: `$${one}$`, other_data_source: `$${other}$` });
    }
  }
  const answers: string[] = [];
  if (rand() < 0.5) {
    const g = add('group_data_by', { data_source: `$${table}$`, key_name: pick(rand, ['item_grp', 'item_code']) });
    answers.push(
      add('aggregate_data', {
        data_source: `$${g}$`,
        key_name: pick(rand, ['*', 'item_price']),
        aggregation_type: 'count',
      }),
    );
  } else {
    answers.push(
      add('aggregate_data', {
        data_source: `$${table}$`,
        key_name: 'item_price',
        aggregation_type: pick(rand, ['sum', 'mean', 'max', 'std']),
      }),
    );
  }
  answers.push(
    add('retrieve_data', { data_source: `$${table}$`, key_name: pick(rand, COLUMNS), distinct: rand() < 0.5 }),
  );
  answers.push(add('select_unique_values', { data_source: `$${table}$`, key_name: pick(rand, COLUMNS) }));
  const total = add('aggregate_data', { data_source: `$${table}$`, key_name: '*', aggregation_type: 'count' });
  answers.push(
    add('calculate', { value: `$${total}$`, operation_type: 'multiply', operation_args: { operand: { value: 2 } } }),
  );
  return { initialization: [rand() < 0.7 ? INIT_ITEM : INIT_JOIN], calls, answerLabels: answers };
}

describe('SEL round trip on random sequences', () => {
  const seeds = Array.from({ length: 8 }, (_, i) => 500 + i);
  test.each(seeds)('seed %i: SEL execution equals SLOT execution', async (seed) => {
    const t = createTestDb(seed, 24);
    const rand = prng(seed);
    try {
      for (let i = 0; i < 15; i++) {
        const slot = randomSequence(rand);
        const sel = expand(slot, t);
        for (const tool of toolsOf(sel, t)) expect(tool.function.name).toMatch(TOOL_NAME_PATTERN);
        expect(new Set(toolsOf(sel, t).map((s) => s.function.name)).size).toBe(toolsOf(sel, t).length);
        expect(Object.keys(sel.bindings).sort()).toEqual(
          toolsOf(sel, t)
            .map((s) => s.function.name)
            .sort(),
        );
        for (const call of sel.calls) expect(sel.bindings[call.name]).toBeDefined();
        const expected = await executeSequence(slot, t.info, t.executor, OPTS);
        expect(await executeSelSequence(sel, t.info, t.executor, OPTS)).toEqual(expected);
      }
    } finally {
      await t.cleanup();
    }
  });
});

describe('SEL expansion', () => {
  let t: TestDb;
  beforeAll(() => {
    t = createTestDb(7, 10);
  });
  afterAll(() => t.cleanup());

  const seq: SlotSequence = {
    initialization: [INIT_ITEM],
    calls: [
      {
        name: 'filter_data',
        label: 'f',
        arguments: { data_source: '$starting_table_var$', key_name: 'item_qty', condition: 'greater_than', value: 2 },
      },
      { name: 'sort_data', label: 's', arguments: { data_source: '$f$', key_name: 'item_price', ascending: false } },
      {
        name: 'aggregate_data',
        label: 'a',
        arguments: { data_source: '$s$', key_name: 'item_price', aggregation_type: 'max' },
      },
      { name: 'retrieve_data', label: 'r', arguments: { data_source: '$s$', key_name: 'item_name', limit: 2 } },
    ],
    answerLabels: ['r', 'a'],
  };

  test('binds categorical arguments into names; one getter per starting key', () => {
    const sel = expand(seq, t, 'paper');
    expect(sel.calls.map((c) => c.name)).toEqual([
      'select_data_greater_than',
      'sort_data_descending',
      'aggregate_data_max',
      'get_item_name',
    ]);
    expect(sel.calls[0].arguments).toEqual({ data_source: '$starting_table_var$', key_name: 'item_qty', value: 2 });
    expect(sel.calls[3].arguments).toEqual({ data_source: '$s$', limit: 2 });
    expect(sel.bindings.sort_data_descending).toEqual({ slotTool: 'sort_data', boundArguments: { ascending: false } });
    expect(sel.bindings.get_item_name).toEqual({
      slotTool: 'retrieve_data',
      boundArguments: { key_name: 'item_name' },
    });
    expect(toolsOf(sel, t, 'paper').map((s) => s.function.name)).toEqual([
      'select_data_greater_than',
      'sort_data_descending',
      'aggregate_data_max',
      ...COLUMNS.map((k) => `get_${k}`),
    ]);
    const params = (name: string) =>
      toolsOf(sel, t, 'paper').find((s) => s.function.name === name)!.function.parameters as {
        properties: Record<string, unknown>;
        required: string[];
      };
    expect(Object.keys(params('select_data_greater_than').properties)).toEqual(['data_source', 'key_name', 'value']);
    expect(Object.keys(params('get_item_name').properties)).toEqual(['data_source', 'distinct', 'limit']);
    expect(params('aggregate_data_max').required).toEqual(['data_source', 'key_name']);
  });

  test('combine_data binds its operation: combine_data_<operation>, same output as SLOT', async () => {
    const combined: SlotSequence = {
      initialization: [INIT_ITEM],
      calls: [
        {
          name: 'filter_data',
          label: 'f',
          arguments: { data_source: '$starting_table_var$', key_name: 'item_qty', condition: 'greater_than', value: 2 },
        },
        { name: 'retrieve_data', label: 'a', arguments: { data_source: '$f$', key_name: 'item_name' } },
        {
          name: 'retrieve_data',
          label: 'b',
          arguments: { data_source: '$starting_table_var$', key_name: 'item_code' },
        },
        {
          name: 'combine_data',
          label: 'c',
          arguments: { data_source: '$a$', other_data_source: '$b$', operation: 'except' },
        },
      ],
      answerLabels: ['c'],
    };
    const sel = expand(combined, t, 'extended');
    expect(sel.calls[3]).toEqual({
      name: 'combine_data_except',
      label: 'c',
      arguments: { data_source: '$a$', other_data_source: '$b$' },
    });
    expect(sel.bindings.combine_data_except).toEqual({
      slotTool: 'combine_data',
      boundArguments: { operation: 'except' },
    });
    const spec = toolsOf(sel, t).find((s) => s.function.name === 'combine_data_except')!.function;
    expect(spec.description).toContain('EXCEPT');
    expect(Object.keys((spec.parameters as { properties: Record<string, unknown> }).properties)).toEqual([
      'data_source',
      'other_data_source',
      'key_name',
      'other_key_name',
    ]);
    const opts = { timeoutMs: 5000, pool: 'extended' as const };
    expect(await executeSelSequence(sel, t.info, t.executor, opts)).toEqual(
      await executeSequence(combined, t.info, t.executor, opts),
    );
  });

  test('join_data binds its type: join_data_<type>; a window operation binds as transform_data_<o>; same output as SLOT', async () => {
    const S = '$starting_table_var$';
    const joined: SlotSequence = {
      initialization: [INIT_ITEM],
      calls: [
        {
          name: 'transform_data',
          label: 'w',
          arguments: {
            data_source: S,
            key_name: 'item_qty',
            operation_type: 'row_number',
            operation_args: { then_by: [{ key_name: 'item_id' }], partition_by: ['item_grp'] },
          },
        },
        { name: 'group_data_by', label: 'g', arguments: { data_source: S, key_name: 'item_grp' } },
        {
          name: 'join_data',
          label: 'j',
          arguments: {
            data_source: '$w$',
            other_data_source: '$g$',
            key_name: 'item_grp',
            other_key_name: 'item_grp',
            type: 'left',
          },
        },
        { name: 'retrieve_data', label: 'r', arguments: { data_source: '$j$', key_name: 'item_grp_2' } },
      ],
      answerLabels: ['j', 'r'],
    };
    const sel = expand(joined, t, 'extended');
    expect(sel.calls.map((call) => call.name)).toEqual([
      'transform_data_row_number',
      'group_data_by',
      'join_data_left',
      'get_item_grp_2',
    ]);
    expect(sel.calls[2].arguments).toEqual({
      data_source: '$w$',
      other_data_source: '$g$',
      key_name: 'item_grp',
      other_key_name: 'item_grp',
    });
    expect(sel.bindings.join_data_left).toEqual({ slotTool: 'join_data', boundArguments: { type: 'left' } });
    expect(sel.derivedKeys.map((k) => k.key)).toEqual(['item_qty_row_number', 'item_grp_2']);
    const spec = toolsOf(sel, t).find((s) => s.function.name === 'join_data_left')!.function;
    expect(spec.description).toContain('LEFT JOIN');
    const parameters = spec.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(parameters.required).toEqual(['data_source', 'other_data_source', 'key_name', 'other_key_name']);
    const opts = { timeoutMs: 5000, pool: 'extended' as const };
    expect(await executeSelSequence(sel, t.info, t.executor, opts)).toEqual(
      await executeSequence(joined, t.info, t.executor, opts),
    );
  });

  test('a sequence carries bindings over its key universe; the registry builds each spec once', () => {
    const sel = expand(seq, t, 'paper');
    expect(Object.keys(sel)).not.toContain('tools');
    expect(sel.derivedKeys).toEqual([]);
    const registry = new ToolRegistry(t.info, 'paper');
    const names = Object.keys(sel.bindings);
    const tools = names.map((name) => registry.selTool(sel, name));
    expect(tools).toEqual(toolsOf(sel, t, 'paper'));
    // An equal sequence (e.g. read back from the cache) gets the very same spec objects.
    const copy = JSON.parse(JSON.stringify(sel)) as SelSequence;
    names.forEach((name, i) => expect(registry.selTool(copy, name)).toBe(tools[i]));
  });

  test('a SEL call naming a bound argument or an unknown tool is a ToolError', async () => {
    const sel = expand(seq, t);
    const bad = {
      ...sel,
      calls: sel.calls.map((c, i) => (i === 0 ? { ...c, arguments: { ...c.arguments, condition: 'less_than' } } : c)),
    };
    await expect(executeSelSequence(bad, t.info, t.executor, OPTS)).rejects.toMatchObject({ code: 'unknown_argument' });
    const unknown = { ...sel, calls: sel.calls.map((c, i) => (i === 0 ? { ...c, name: 'select_data_equal_to' } : c)) };
    await expect(executeSelSequence(unknown, t.info, t.executor, OPTS)).rejects.toBeInstanceOf(ToolError);
    await expect(executeSelSequence(unknown, t.info, t.executor, OPTS)).rejects.toMatchObject({ code: 'unknown_tool' });
  });

  test("a live SEL call's refusal names the SEL tool called and only the arguments it takes", async () => {
    const sel = expand(seq, t);
    const session = new SelToolSession(t.info, t.executor, OPTS, sel.bindings);
    await session.define(INIT_ITEM);
    const filter = sel.calls[0];
    const refusal = await session
      .call({ ...filter, arguments: { ...filter.arguments, value_typo: 1 } })
      .catch((error: unknown) => error as ToolError);
    expect(refusal).toBeInstanceOf(ToolError);
    const { message } = refusal as ToolError;
    expect(message.startsWith(`${filter.name} (label "${filter.label}"): unknown argument "value_typo"`)).toBe(true);
    // The binding fixes the condition: not the caller's to give, so not listed.
    expect(message).not.toMatch(/"condition"|filter_data/);
  });

  test('an invalid or unbindable SLOT sequence is rejected as unsupported', () => {
    const invalid = expandToSel(
      { ...seq, calls: [{ name: 'filter_data', label: 'f', arguments: { data_source: '$nope$' } }] },
      t.info,
      'paper',
    );
    expect(invalid).toMatchObject({ ok: false, category: 'unsupported:invalid_slot:bad_reference' });
    const paper = expandToSel(
      {
        ...seq,
        calls: [
          {
            name: 'union_data',
            label: 'u',
            arguments: { data_source: '$starting_table_var$', other_data_source: '$starting_table_var$' },
          },
        ],
      },
      t.info,
      'paper',
    );
    expect(paper).toMatchObject({ ok: false, category: 'unsupported:invalid_slot:not_in_pool' });
  });
});

describe('SEL specs of a bound operation', () => {
  const keys = [
    { key: 'item_qty', description: 'quantity' },
    { key: 'item_grp', description: 'group' },
  ];
  type Schema = { properties: Record<string, Schema>; required?: string[]; additionalProperties?: boolean };
  const parameters = (spec: { function: { parameters: unknown } }) => spec.function.parameters as Schema;

  test.each(['paper', 'extended'] as const)(
    '%s: transform_data_<o> / calculate_<o> list only the operation_args of o, those it needs required',
    (pool) => {
      for (const op of choicesOf(OPERATIONS, pool)) {
        for (const tool of ['transform_data', 'calculate'] as const) {
          const spec = selToolSpec(
            `${tool}_${op.name}`,
            { slotTool: tool, boundArguments: { operation_type: op.name } },
            keys,
            pool,
          );
          const params = parameters(spec);
          const args = params.properties.operation_args;
          const everyOperation = parameters(slotToolSpec(tool, keys, pool)).properties.operation_args.properties;
          const own = SHAPE_ARGS[op.shape].filter((name) => name in everyOperation);
          const expected = tool === 'transform_data' ? [...own, 'new_key_name'] : own;
          expect(Object.keys(args.properties).sort()).toEqual([...expected].sort());
          expect(args.additionalProperties).toBe(false);
          expect(args.required ?? []).toEqual(SHAPE_REQUIRED[op.shape].filter((name) => own.includes(name)));
          expect((params.required ?? []).includes('operation_args')).toBe((args.required ?? []).length > 0);
          expect(params.properties.operation_type).toBeUndefined();
        }
      }
    },
  );

  test("a call the runtime takes validates; another operation's argument or a missing one does not", () => {
    const spec = (op: string, tool = 'transform_data') =>
      new Validator(
        selToolSpec(op, { slotTool: tool, boundArguments: { operation_type: op } }, keys, 'extended').function
          .parameters,
        '2020-12',
        false,
      );
    const table = { data_source: '$starting_table_var$', key_name: 'item_qty' };
    expect(spec('abs').validate({ ...table, operation_args: {} }).valid).toBe(true);
    expect(spec('abs').validate(table).valid).toBe(true);
    expect(spec('abs').validate({ ...table, operation_args: { new_key_name: 'q' } }).valid).toBe(true);
    expect(spec('divide').validate({ ...table, operation_args: { operand: { value: 2 } } }).valid).toBe(true);
    expect(spec('divide').validate(table).valid).toBe(false);
    expect(spec('divide').validate({ ...table, operation_args: { to: 'real' } }).valid).toBe(false);
    expect(spec('rank').validate({ ...table, operation_args: { partition_by: ['item_grp'] } }).valid).toBe(true);
    expect(spec('rank').validate({ ...table, operation_args: { partition_by: ['nope'] } }).valid).toBe(false);
    expect(spec('cast', 'calculate').validate({ value: 1, operation_args: { to: 'real' } }).valid).toBe(true);
    expect(
      spec('cast', 'calculate').validate({ value: 1, operation_args: { to: 'real', new_key_name: 'x' } }).valid,
    ).toBe(false);
  });
});

describe('SEL tool names', () => {
  test('sanitized, long names hashed, collisions numbered', async () => {
    const long = `Percent (%) Eligible Free (K-12) ${'x'.repeat(70)}`;
    const t = createDb({
      'frpm data': {
        columns: [
          ['a b', 'TEXT'],
          ['a_b', 'TEXT'],
          [long, 'REAL'],
          [`${long}y`, 'REAL'],
        ],
        rows: [['1', '2', 0.5, 1.5] as SqlValue[]],
      },
    });
    try {
      const init: ToolCall = {
        name: 'initialize_active_data',
        label: 'starting_table_var',
        arguments: { database: 'test', tables: [{ alias: 'T1', table: 'frpm data' }], joins: [] },
      };
      const slot: SlotSequence = {
        initialization: [init],
        calls: [
          {
            name: 'retrieve_data',
            label: 'r1',
            arguments: { data_source: '$starting_table_var$', key_name: 'frpm data_a_b' },
          },
          {
            name: 'retrieve_data',
            label: 'r2',
            arguments: { data_source: '$starting_table_var$', key_name: `frpm data_${long}y` },
          },
        ],
        answerLabels: ['r1', 'r2'],
      };
      const sel = expand(slot, t);
      const names = toolsOf(sel, t).map((s) => s.function.name);
      for (const name of names) expect(name).toMatch(TOOL_NAME_PATTERN);
      expect(names.slice(0, 2)).toEqual(['get_frpm_data_a_b', 'get_frpm_data_a_b_2']);
      expect(new Set(names).size).toBe(4);
      expect(sel.calls.map((c) => c.name)).toEqual(['get_frpm_data_a_b_2', names[3]]);
      expect(await executeSelSequence(sel, t.info, t.executor, OPTS)).toEqual([
        { kind: 'list', values: ['2'] },
        { kind: 'list', values: [1.5] },
      ]);
      expect(sanitizeToolName('get_' + long)).toHaveLength(64);
      expect(sanitizeToolName('get_' + long)).not.toBe(sanitizeToolName(`get_${long}y`));
    } finally {
      await t.cleanup();
    }
  });
});
