import type { SqlValue, ToolCall, ToolOutput, ToolPool } from '../../core/model.js';
import { executeSequence, keysForSequence } from '../../runtime/slot/index.js';
import { createDb, reference, tableInit, toolErrorCode, type TestDb } from './helpers.js';

/**
 * join_data and combine_data's key lists (docs/TOOLS.md), against SQLite's own SQL over the
 * same rows. The data is chosen so that a wrong reading answers otherwise: emp.dept is TEXT
 * and dept.code INTEGER (SQLite converts '10' to 10 to compare them), both hold NULLs (which
 * match nothing, not even each other), department 20 has two rows (two matches), and the
 * rowids of dept are not in code order (row order is data_source's, then other's).
 */

let t: TestDb;
beforeAll(() => {
  t = createDb({
    emp: {
      columns: [
        ['id', 'INTEGER'],
        ['name', 'TEXT'],
        ['dept', 'TEXT'],
        ['mgr', 'INTEGER'],
      ],
      rows: [
        [1, 'Ann', '20', null],
        [2, 'Bob', null, 1],
        [3, 'Cid', '10', 1],
        [4, 'Dee', '30', 3],
        [5, 'Eve', '20', 9],
      ],
    },
    dept: {
      columns: [
        ['code', 'INTEGER'],
        ['title', 'TEXT'],
      ],
      rows: [
        [20, 'Ops'],
        [10, 'Sales'],
        [null, 'Nil'],
        [20, 'Ops2'],
        [40, 'Far'],
      ],
    },
  });
});
afterAll(() => t.cleanup());

const E = '$starting_table_var$';
const D = '$starting_table_var_2$';
const INITS: ToolCall[] = [tableInit('emp'), { ...tableInit('dept'), label: 'starting_table_var_2' }];

function c(name: string, label: string, args: Record<string, unknown>): ToolCall {
  return { name, label, arguments: args };
}

function joined(label: string, type: string, extra: Record<string, unknown> = {}): ToolCall {
  return c('join_data', label, {
    data_source: E,
    other_data_source: D,
    key_name: 'emp_dept',
    other_key_name: 'dept_code',
    type,
    ...extra,
  });
}

async function run(calls: ToolCall[], answer: string[] = [calls[calls.length - 1].label]): Promise<ToolOutput[]> {
  return executeSequence({ initialization: INITS, calls, answerLabels: answer }, t.info, t.executor, {
    timeoutMs: 5000,
    pool: 'extended',
  });
}

function table(columns: string[], sql: string): ToolOutput {
  return { kind: 'table', columns, rows: reference(t.raw, sql) };
}

const codeOf = (calls: ToolCall[], pool?: ToolPool): string => toolErrorCode(t.info, INITS, calls, pool);

const EMP = ['emp_id', 'emp_name', 'emp_dept', 'emp_mgr'];
const PAIR = [...EMP, 'dept_code', 'dept_title'];
const PAIR_SQL = 'e.id, e.name, e.dept, e.mgr, d.code, d.title';

describe('join_data', () => {
  test('inner: one row per matching pair (TEXT 10 matches INTEGER 10; NULLs match nothing), in emp order then dept order', async () => {
    const [out] = await run([joined('j', 'inner')]);
    const expected = table(
      PAIR,
      `SELECT ${PAIR_SQL} FROM emp e JOIN dept d ON e.dept = d.code ORDER BY e.rowid, d.rowid`,
    );
    expect(out).toEqual(expected);
    // Ann and Eve twice (Ops, then Ops2 in dept's order), Cid once; Bob (NULL) and Dee (30) not.
    expect((out as { rows: SqlValue[][] }).rows.map((r) => `${String(r[1])}-${String(r[5])}`)).toEqual([
      'Ann-Ops',
      'Ann-Ops2',
      'Cid-Sales',
      'Eve-Ops',
      'Eve-Ops2',
    ]);
  });

  test("left: the inner join's rows plus each unmatched emp row with dept's keys NULL, in emp order", async () => {
    const [out] = await run([joined('j', 'left')]);
    expect(out).toEqual(
      table(PAIR, `SELECT ${PAIR_SQL} FROM emp e LEFT JOIN dept d ON e.dept = d.code ORDER BY e.rowid, d.rowid`),
    );
    expect((out as { rows: SqlValue[][] }).rows).toHaveLength(7);
  });

  test('semi / anti: the emp rows that match some / no dept row, each once, with emp keys only', async () => {
    const [semi, anti] = await run([joined('s', 'semi'), joined('a', 'anti')], ['s', 'a']);
    expect(semi).toEqual(
      table(EMP, 'SELECT * FROM emp e WHERE EXISTS (SELECT 1 FROM dept d WHERE e.dept = d.code) ORDER BY e.rowid'),
    );
    expect(anti).toEqual(
      table(EMP, 'SELECT * FROM emp e WHERE NOT EXISTS (SELECT 1 FROM dept d WHERE e.dept = d.code) ORDER BY e.rowid'),
    );
    // Bob's NULL dept matches nothing, so he is in the anti join (NOT IN would keep nobody).
    expect((anti as { rows: SqlValue[][] }).rows.map((r) => r[1])).toEqual(['Bob', 'Dee']);
  });

  test('a semi join output unions with another filter of the same source, in source order', async () => {
    const [out] = await run([
      joined('s', 'semi'),
      c('filter_data', 'f', { data_source: E, key_name: 'emp_name', condition: 'equal_to', value: 'Dee' }),
      c('union_data', 'u', { data_source: '$f$', other_data_source: '$s$' }),
    ]);
    expect((out as { rows: SqlValue[][] }).rows.map((r) => r[1])).toEqual(['Ann', 'Cid', 'Dee', 'Eve']);
  });

  test('a semi join keeps the order of a sorted data_source', async () => {
    const [out] = await run([
      c('sort_data', 'o', { data_source: E, key_name: 'emp_name', ascending: false }),
      c('join_data', 's', {
        data_source: '$o$',
        other_data_source: D,
        key_name: 'emp_dept',
        other_key_name: 'dept_code',
        type: 'semi',
      }),
    ]);
    expect((out as { rows: SqlValue[][] }).rows.map((r) => r[1])).toEqual(['Eve', 'Cid', 'Ann']);
  });

  test('a grouped other_data_source joins as the table of its groups (group keys and aggregates)', async () => {
    const [out] = await run([
      c('group_data_by', 'g', { data_source: D, key_name: 'dept_code' }),
      c('aggregate_data', 'n', { data_source: '$g$', key_name: '*', aggregation_type: 'count' }),
      c('join_data', 'j', {
        data_source: E,
        other_data_source: '$n$',
        key_name: 'emp_dept',
        other_key_name: 'dept_code',
        type: 'inner',
      }),
    ]);
    expect(out).toEqual(
      table(
        [...EMP, 'dept_code', 'count_rows'],
        'SELECT e.*, g.code, g.n FROM emp e JOIN (SELECT code, COUNT(*) AS n FROM dept GROUP BY code) g ON e.dept = g.code ORDER BY e.rowid',
      ),
    );
  });

  test('a grouped data_source stays grouped under a semi join: it filters its groups, whose aggregates follow', async () => {
    const [groups, counts] = await run(
      [
        c('group_data_by', 'g', { data_source: E, key_name: 'emp_dept' }),
        c('join_data', 's', {
          data_source: '$g$',
          other_data_source: D,
          key_name: 'emp_dept',
          other_key_name: 'dept_code',
          type: 'semi',
        }),
        c('aggregate_data', 'n', { data_source: '$s$', key_name: 'emp_id', aggregation_type: 'count' }),
      ],
      ['s', 'n'],
    );
    expect(groups).toEqual({ kind: 'table', columns: ['emp_dept'], rows: [['10'], ['20']] });
    expect(counts).toEqual({
      kind: 'table',
      columns: ['emp_dept', 'count_emp_id'],
      rows: [
        ['10', 1],
        ['20', 2],
      ],
    });
  });

  test("a self join renames other's keys with derivedKey (_2) and reports them as derived keys", async () => {
    const calls = [
      c('join_data', 'j', {
        data_source: E,
        other_data_source: E,
        key_name: 'emp_mgr',
        other_key_name: 'emp_id',
        type: 'inner',
      }),
      c('retrieve_data', 'r', { data_source: '$j$', key_name: 'emp_name_2' }),
    ];
    const [out, names] = await run(calls, ['j', 'r']);
    expect(out).toEqual(
      table(
        [...EMP, 'emp_id_2', 'emp_name_2', 'emp_dept_2', 'emp_mgr_2'],
        'SELECT e.*, m.* FROM emp e JOIN emp m ON e.mgr = m.id ORDER BY e.rowid',
      ),
    );
    expect(names).toEqual({ kind: 'list', values: ['Ann', 'Ann', 'Cid'] });
    const keys = keysForSequence(t.info, { initialization: INITS, calls, answerLabels: ['r'] }, 'extended');
    expect(keys.map((k) => k.key)).toEqual(expect.arrayContaining(['emp_id_2', 'emp_mgr_2']));
  });

  test('key lists match every pair (a NULL matches nothing, not even itself)', async () => {
    const [out] = await run([
      c('join_data', 's', {
        data_source: E,
        other_data_source: E,
        key_name: ['emp_dept', 'emp_id'],
        other_key_name: ['emp_dept', 'emp_id'],
        type: 'semi',
      }),
    ]);
    expect((out as { rows: SqlValue[][] }).rows.map((r) => r[1])).toEqual(['Ann', 'Cid', 'Dee', 'Eve']);
  });

  test("filters of a left join union by the pairs' identity, the unmatched rows' NULL side included", async () => {
    const [out] = await run([
      joined('j', 'left'),
      c('filter_data', 'a', { data_source: '$j$', key_name: 'dept_title', condition: 'is_null' }),
      c('filter_data', 'b', { data_source: '$j$', key_name: 'emp_name', condition: 'equal_to', value: 'Ann' }),
      c('union_data', 'u', { data_source: '$a$', other_data_source: '$b$' }),
      c('union_data', 'v', { data_source: '$u$', other_data_source: '$a$' }),
    ]);
    expect((out as { rows: SqlValue[][] }).rows.map((r) => `${String(r[1])}-${String(r[5])}`)).toEqual([
      'Ann-Ops',
      'Ann-Ops2',
      'Bob-null',
      'Dee-null',
    ]);
  });

  test.each<[string, ToolCall[], ToolPool?]>([
    ['not_in_pool', [joined('j', 'inner')], 'paper'],
    [
      'wrong_type',
      [c('retrieve_data', 'r', { data_source: E, key_name: 'emp_dept' }), joined('j', 'semi', { data_source: '$r$' })],
    ],
    [
      'wrong_type',
      [
        c('retrieve_data', 'r', { data_source: D, key_name: 'dept_code' }),
        joined('j', 'inner', { other_data_source: '$r$' }),
      ],
    ],
    [
      'wrong_type',
      [c('group_data_by', 'g', { data_source: E, key_name: 'emp_dept' }), joined('j', 'inner', { data_source: '$g$' })],
    ],
    ['unknown_key', [joined('j', 'inner', { other_key_name: 'emp_dept' })]],
    ['unknown_key', [joined('j', 'inner', { key_name: ['emp_dept', 'dept_code'] })]],
    ['bad_value', [joined('j', 'inner', { key_name: ['emp_dept', 'emp_id'] })]],
    ['bad_value', [joined('j', 'outer')]],
    ['missing_argument', [joined('j', 'inner', { type: undefined })]],
    ['unknown_argument', [joined('j', 'inner', { on: 'x' })]],
    // One parameter for the row: jest takes a test function with one more parameter than a row has for done().
  ])('%s', (...[code, calls, pool]) => {
    expect(codeOf(calls, pool)).toBe(code);
  });
});

describe('combine_data key lists', () => {
  test('union_all of chosen columns of whole tables keeps duplicate rows: a table, keyed by the first keys', async () => {
    const [out] = await run([
      c('combine_data', 'x', {
        data_source: E,
        other_data_source: D,
        operation: 'union_all',
        key_name: ['emp_dept', 'emp_name'],
        other_key_name: ['dept_code', 'dept_title'],
      }),
    ]);
    expect(out).toEqual(
      table(
        ['emp_dept', 'emp_name'],
        'SELECT dept, name FROM (SELECT dept, name, 0 AS s, rowid AS p FROM emp UNION ALL SELECT code, title, 1, rowid FROM dept) ORDER BY s, p',
      ),
    );
  });

  test('one chosen column of tables stays a table; union keeps distinct values ordered by value', async () => {
    const [all, distinct] = await run(
      [
        c('combine_data', 'a', {
          data_source: E,
          other_data_source: E,
          operation: 'union_all',
          key_name: 'emp_dept',
          other_key_name: 'emp_dept',
        }),
        c('combine_data', 'u', {
          data_source: E,
          other_data_source: D,
          operation: 'union',
          key_name: 'emp_dept',
          other_key_name: 'dept_code',
        }),
      ],
      ['a', 'u'],
    );
    expect(all).toEqual(
      table(
        ['emp_dept'],
        'SELECT dept FROM (SELECT dept, 0 AS s, rowid AS p FROM emp UNION ALL SELECT dept, 1, rowid FROM emp) ORDER BY s, p',
      ),
    );
    expect(distinct).toEqual(table(['emp_dept'], 'SELECT dept FROM emp UNION SELECT code FROM dept ORDER BY 1'));
  });

  test("defaults to all keys; lengths must agree; keys must be the inputs'", () => {
    expect(codeOf([c('combine_data', 'x', { data_source: E, other_data_source: D, operation: 'union' })])).toBe(
      'bad_value',
    );
    const some = { data_source: E, other_data_source: D, operation: 'union' };
    expect(codeOf([c('combine_data', 'x', { ...some, key_name: ['emp_id', 'emp_name'] })])).toBe('ok');
    expect(codeOf([c('combine_data', 'x', { ...some, key_name: 'emp_id' })])).toBe('bad_value');
    expect(codeOf([c('combine_data', 'x', { ...some, key_name: 'emp_id', other_key_name: 'emp_id' })])).toBe(
      'unknown_key',
    );
  });
});
