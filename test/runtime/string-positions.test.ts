import type { SqlValue, ToolCall, ToolOutput, ToolPool } from '../../core/model.js';
import { compileSequence, executeSequence, ToolError } from '../../runtime/slot/index.js';
import { createDb, reference, type TestDb } from './helpers.js';

/**
 * The `position` and `substr` operations (docs/TOOLS.md) against SQLite's own instr and
 * substr, on a grid of values chosen so that an off-by-one, a sign rule or a NULL rule
 * mishandled gives another answer: empty texts, a match at position 1, no match,
 * multi-byte characters (counted as characters), numbers read as text, NULLs, and bounds
 * that are negative, zero, past the end, text or real.
 */

const TEXTS: SqlValue[] = ['', 'a', 'abc', 'a b c', 'héllo wörld', '日本語のテキスト', 12345, 2.5, null];
const NEEDLES: SqlValue[] = ['', 'a', 'b c', 'l', 'ö', '語', 'zz', 3, 5, null];
const BOUNDS: SqlValue[] = [-9, -4, -3, -1, 0, 1, 2, 3, 7, 20, '2', 'x', 1.9, -1.5, null];

let t: TestDb;
const rows: SqlValue[][] = [];
beforeAll(() => {
  let id = 0;
  // One row per (text, start, length) combination, the needle cycling so every pair occurs.
  for (const s of TEXTS)
    for (const start of BOUNDS)
      for (const length of BOUNDS) rows.push([++id, s, NEEDLES[id % NEEDLES.length], start, length]);
  for (const s of TEXTS) for (const needle of NEEDLES) rows.push([++id, s, needle, 1, 1]);
  t = createDb({
    // Untyped columns: integers and reals stay numbers, as an expression's value may be.
    grid: {
      columns: [
        ['id', 'INTEGER'],
        ['s', ''],
        ['needle', ''],
        ['start', ''],
        ['len', ''],
      ],
      rows,
    },
  });
});
afterAll(() => t.cleanup());

const INIT: ToolCall = {
  name: 'initialize_active_data',
  label: 'starting_table_var',
  arguments: { database: 'test', tables: [{ alias: 'T1', table: 'grid' }], joins: [] },
};
const S = '$starting_table_var$';

function transform(operation: string, operationArgs: Record<string, unknown>, key = 'grid_s'): ToolCall {
  return {
    name: 'transform_data',
    label: 't',
    arguments: { data_source: S, key_name: key, operation_type: operation, operation_args: operationArgs },
  };
}

async function column(call: ToolCall): Promise<SqlValue[]> {
  const calls = [call, { name: 'retrieve_data', label: 'r', arguments: { data_source: '$t$', key_name: 'new' } }];
  (call.arguments.operation_args as Record<string, unknown>).new_key_name = 'new';
  const [out] = await executeSequence({ initialization: [INIT], calls, answerLabels: ['r'] }, t.info, t.executor, {
    timeoutMs: 5000,
    pool: 'extended',
  });
  return (out as { values: SqlValue[] }).values;
}

function sqlite(expression: string, params: unknown[] = []): SqlValue[] {
  return reference(t.raw, `SELECT ${expression} FROM grid ORDER BY rowid`, params).map((r) => r[0]);
}

describe('position is instr', () => {
  test('against another column', async () => {
    expect(await column(transform('position', { operand: { key_name: 'grid_needle' } }))).toEqual(
      sqlite('instr(s, needle)'),
    );
  });

  test.each(NEEDLES.map((n) => [n]))('against the value %p', async (needle) => {
    expect(await column(transform('position', { operand: { value: needle } }))).toEqual(
      sqlite('instr(s, ?)', [needle]),
    );
  });

  test('of a number, as text', async () => {
    expect(await column(transform('position', { operand: { value: '2' } }, 'grid_start'))).toEqual(
      sqlite("instr(start, '2')"),
    );
  });

  test('known values: 1-based, 0 when absent, characters not bytes, NULL when either is NULL', async () => {
    const out = await one([calc('héllo wörld', 'position', { operand: { value: 'w' } })]);
    expect(out).toEqual({ kind: 'scalar', value: 7 });
    expect(await one([calc('abc', 'position', { operand: { value: 'a' } })])).toEqual({ kind: 'scalar', value: 1 });
    expect(await one([calc('abc', 'position', { operand: { value: 'd' } })])).toEqual({ kind: 'scalar', value: 0 });
    expect(await one([calc(null, 'position', { operand: { value: 'a' } })])).toEqual({ kind: 'scalar', value: null });
    expect(await one([calc('abc', 'position', { operand: { value: null } })])).toEqual({ kind: 'scalar', value: null });
  });
});

describe('substr is SQLite substr', () => {
  test('start and length from columns', async () => {
    expect(
      await column(transform('substr', { start: { key_name: 'grid_start' }, length: { key_name: 'grid_len' } })),
    ).toEqual(sqlite('substr(s, start, len)'));
  });

  test('start from a column, no length', async () => {
    expect(await column(transform('substr', { start: { key_name: 'grid_start' } }))).toEqual(
      sqlite('substr(s, start)'),
    );
  });

  test.each(BOUNDS.map((b) => [b]))('the value %p as start, the length from a column', async (start) => {
    expect(await column(transform('substr', { start: { value: start }, length: { key_name: 'grid_len' } }))).toEqual(
      sqlite('substr(s, ?, len)', [start]),
    );
  });

  test.each(BOUNDS.map((b) => [b]))('the start from a column, the value %p as length', async (length) => {
    expect(await column(transform('substr', { start: { key_name: 'grid_start' }, length: { value: length } }))).toEqual(
      sqlite('substr(s, start, ?)', [length]),
    );
  });

  test('known values: negative start from the end, negative length before start, start 0', async () => {
    const cases: [SqlValue, SqlValue, SqlValue | undefined, SqlValue][] = [
      ['abcdef', -3, undefined, 'def'],
      ['abcdef', -3, 2, 'de'],
      ['abcdef', 4, -2, 'bc'],
      ['abcdef', 0, 2, 'a'],
      ['abcdef', -10, 6, 'ab'],
      ['abcdef', 2, 0, ''],
      ['héllo', 2, 2, 'él'],
      ['abcdef', 2, null, null],
      [null, 1, 1, null],
    ];
    for (const [value, start, length, expected] of cases) {
      const args: Record<string, unknown> = { start: { value: start } };
      if (length !== undefined) args.length = { value: length };
      expect([value, start, length, await one([calc(value, 'substr', args)])]).toEqual([
        value,
        start,
        length,
        { kind: 'scalar', value: expected },
      ]);
    }
  });
});

function calc(value: SqlValue, operation: string, operationArgs: Record<string, unknown>): ToolCall {
  return {
    name: 'calculate',
    label: 'c',
    arguments: { value, operation_type: operation, operation_args: operationArgs },
  };
}

async function one(calls: ToolCall[]): Promise<ToolOutput> {
  const [out] = await executeSequence({ initialization: [INIT], calls, answerLabels: ['c'] }, t.info, t.executor, {
    timeoutMs: 5000,
    pool: 'extended',
  });
  return out;
}

describe('argument errors', () => {
  function codeOf(call: ToolCall, pool: ToolPool = 'extended'): string {
    try {
      compileSequence(t.info, [INIT], [call], pool);
    } catch (error) {
      expect(error).toBeInstanceOf(ToolError);
      return (error as ToolError).code;
    }
    return 'ok';
  }

  test.each([
    ['missing_argument', transform('substr', {})],
    ['missing_argument', transform('substr', { length: { value: 1 } })],
    ['missing_argument', transform('position', {})],
    ['unknown_argument', transform('substr', { start: { value: 1 }, end_index: 3 })],
    ['unknown_argument', transform('position', { operand: { value: 'a' }, start: { value: 1 } })],
    ['unknown_key', transform('substr', { start: { key_name: 'grid_nope' } })],
    ['ok', transform('substr', { start: { value: 1 }, length: { key_name: 'grid_len' } })],
  ])('%s', (code, call) => {
    expect(codeOf(call)).toBe(code);
  });

  test('the paper pool has neither', () => {
    expect(codeOf(transform('substr', { start: { value: 1 } }), 'paper')).toBe('not_in_pool');
    expect(codeOf(transform('position', { operand: { value: 'a' } }), 'paper')).toBe('not_in_pool');
  });
});
