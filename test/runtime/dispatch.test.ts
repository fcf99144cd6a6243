import { parseConfig } from '../../config/load.js';
import type { GoldResult, SlotSequence, ToolCall } from '../../core/model.js';
import { executeStage } from '../../pipeline/stages/execute.js';
import { verifyStage } from '../../pipeline/stages/verify.js';
import { INITIALIZE_TOOL, toolsOf, type SlotTool } from '../../runtime/slot/catalog.js';
import { compileSequence, ToolError, type CompiledRelation } from '../../runtime/slot/index.js';
import { TOOL_COMPILERS, toolCompiler } from '../../runtime/slot/tools.js';
import { checkExecution } from '../../verifiers/execution.js';
import { createTestDb, INIT_ITEM, type TestDb } from './helpers.js';

/** The dispatch table of the SLOT runtime (runtime/slot/tools.ts) against the catalog. */

let t: TestDb;
beforeAll(() => {
  t = createTestDb(7);
});
afterAll(() => t.cleanup());

const S = '$starting_table_var$';

function c(name: string, label: string, args: Record<string, unknown>): ToolCall {
  return { name, label, arguments: args };
}

function compile(calls: ToolCall[], pool: 'paper' | 'extended' = 'extended'): Record<string, CompiledRelation> {
  return compileSequence(t.info, [INIT_ITEM], calls, pool).relations;
}

function toolErrorOf(calls: ToolCall[], pool: 'paper' | 'extended' = 'extended'): ToolError {
  try {
    compile(calls, pool);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected a ToolError');
}

describe('the dispatch table', () => {
  test('has an entry for every tool the catalog declares, and for no other name', () => {
    expect(Object.keys(TOOL_COMPILERS).sort()).toEqual([...toolsOf('extended')].sort());
    for (const tool of toolsOf('extended')) expect(typeof toolCompiler(tool)).toBe('function');
    expect(toolCompiler(INITIALIZE_TOOL)).toBeUndefined();
  });

  // Typed by SlotTool: a tool added to the catalog needs a case here too.
  const cases: Record<
    SlotTool,
    { calls: ToolCall[]; kind: string; keys?: string[]; grouped?: boolean; sorted?: boolean }
  > = {
    filter_data: {
      calls: [c('filter_data', 'x', { data_source: S, key_name: 'item_qty', condition: 'greater_than', value: 2 })],
      kind: 'table',
    },
    sort_data: {
      calls: [c('sort_data', 'x', { data_source: S, key_name: 'item_qty', ascending: false })],
      kind: 'table',
      sorted: true,
    },
    retrieve_data: {
      calls: [c('retrieve_data', 'x', { data_source: S, key_name: 'item_name' })],
      kind: 'list',
      keys: ['item_name'],
    },
    aggregate_data: {
      calls: [c('aggregate_data', 'x', { data_source: S, key_name: '*', aggregation_type: 'count' })],
      kind: 'scalar',
      keys: [],
    },
    group_data_by: {
      calls: [c('group_data_by', 'x', { data_source: S, key_name: 'item_grp' })],
      kind: 'table',
      keys: ['item_grp'],
      grouped: true,
    },
    select_unique_values: {
      calls: [c('select_unique_values', 'x', { data_source: S, key_name: 'item_code' })],
      kind: 'list',
      keys: ['item_code'],
    },
    transform_data: {
      calls: [c('transform_data', 'x', { data_source: S, key_name: 'item_qty', operation_type: 'abs' })],
      kind: 'table',
      keys: ['item_id', 'item_qty', 'item_price', 'item_name', 'item_code', 'item_grp', 'item_day', 'item_qty_abs'],
    },
    union_data: {
      calls: [
        c('filter_data', 'a', { data_source: S, key_name: 'item_qty', condition: 'less_than', value: 0 }),
        c('filter_data', 'b', { data_source: S, key_name: 'item_qty', condition: 'greater_than', value: 9 }),
        c('union_data', 'x', { data_source: '$a$', other_data_source: '$b$' }),
      ],
      kind: 'table',
    },
    calculate: { calls: [c('calculate', 'x', { value: -3, operation_type: 'abs' })], kind: 'scalar', keys: [] },
    combine_data: {
      calls: [
        c('retrieve_data', 'a', { data_source: S, key_name: 'item_qty' }),
        c('retrieve_data', 'b', { data_source: S, key_name: 'item_grp' }),
        c('combine_data', 'x', { data_source: '$a$', other_data_source: '$b$', operation: 'intersect' }),
      ],
      kind: 'list',
      keys: ['item_qty'],
    },
    join_data: {
      calls: [
        c('group_data_by', 'g', { data_source: S, key_name: 'item_grp' }),
        c('join_data', 'x', {
          data_source: S,
          other_data_source: '$g$',
          key_name: 'item_grp',
          other_key_name: 'item_grp',
          type: 'inner',
        }),
      ],
      kind: 'table',
      keys: ['item_id', 'item_qty', 'item_price', 'item_name', 'item_code', 'item_grp', 'item_day', 'item_grp_2'],
    },
  };
  test.each(Object.entries(cases))('the entry of %s compiles that tool', (_tool, expected) => {
    const x = compile(expected.calls).x;
    expect(x.kind).toBe(expected.kind);
    expect(x.grouped).toBe(expected.grouped ?? false);
    expect(x.sorted).toBe(expected.sorted ?? false);
    if (expected.keys) expect(x.keys).toEqual(expected.keys);
  });
});

describe('an unknown tool', () => {
  // Names an object lookup would find on Object.prototype, a SEL name, the empty name.
  test.each(['drop_table', 'calculate_abs', 'constructor', '__proto__', 'toString', 'hasOwnProperty', ''])(
    '"%s" is a ToolError unknown_tool naming it and the tools there are',
    (name) => {
      const error = toolErrorOf([c(name, 'u', { value: 1, operation_type: 'abs' })]);
      expect(error.code).toBe('unknown_tool');
      expect(error.label).toBe('u');
      expect(error.message).toContain(`unknown tool "${name}"`);
      expect(error.message).toContain('"combine_data"');
    },
  );

  test("lists only the pool's tools; a tool of the other pool is not_in_pool, never compiled as another tool", () => {
    const unknown = toolErrorOf([c('drop_table', 'u', {})], 'paper');
    expect(unknown.code).toBe('unknown_tool');
    expect(unknown.message).toContain('"transform_data"');
    expect(unknown.message).not.toContain('"calculate"');
    expect(toolErrorOf([c('calculate', 'u', { value: 1, operation_type: 'abs' })], 'paper').code).toBe('not_in_pool');
  });

  test('ends its sequence as a categorized rejection in the pipeline, not an escaping exception', async () => {
    const sequence: SlotSequence = {
      initialization: [INIT_ITEM],
      calls: [c('drop_table', 'u', { data_source: S })],
      answerLabels: ['u'],
    };
    const ctx = { config: parseConfig({}), db: t.info, executor: t.executor };
    const executed = await executeStage.run({ formulation: 'slot', sequence }, ctx);
    expect(executed).toEqual({
      ok: true,
      value: { ok: false, error: expect.objectContaining({ name: 'ToolError', code: 'unknown_tool' }) },
    });
    if (!executed.ok) throw new Error('unreachable');
    expect(checkExecution(executed.value).category).toBe('execution:tool_error:unknown_tool');
    const gold: GoldResult = { columns: ['n'], rows: [[1]], executedSql: 'SELECT 1', ordered: false, distinct: false };
    const verified = await verifyStage.run({ formulation: 'slot', sequence, execution: executed.value, gold }, ctx);
    expect(verified).toEqual({
      ok: false,
      category: 'format:unknown_tool',
      message: expect.stringContaining('drop_table'),
    });
  });
});
