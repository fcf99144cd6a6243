import type { SqlValue, ToolCall, ToolOutput } from '../../core/model.js';
import { executeSequence } from '../../runtime/slot/execute.js';
import { loopNesting } from '../../runtime/slot/source-facts.js';
import {
  bag,
  createDb,
  createTestDb,
  INIT_ITEM,
  INIT_JOIN,
  int,
  pick,
  prng,
  reference,
  SCHEMA,
  type TestDb,
} from './helpers.js';

/**
 * Property tests: random calls over random tables must give exactly what the equivalent
 * hand-written SQL gives when run directly with better-sqlite3.
 */

const COLUMNS = SCHEMA.item.map(([c]) => c);
const NUMERIC = ['qty', 'price', 'grp'];
const SEEDS = Array.from({ length: 12 }, (_, i) => 1000 + i);
const CASES_PER_DB = 25;

const SQL_OP: Record<string, string> = {
  equal_to: '= ?',
  not_equal_to: '<> ?',
  greater_than: '> ?',
  less_than: '< ?',
  greater_than_equal_to: '>= ?',
  less_than_equal_to: '<= ?',
  like: 'LIKE ?',
  not_like: 'NOT LIKE ?',
};

interface Filter {
  column: string;
  condition: string;
  value: unknown;
  /** Reference predicate over the raw table, and its parameters. */
  where: string;
  params: unknown[];
}

function literal(rand: () => number, t: TestDb, column: string): SqlValue {
  if (rand() < 0.6) {
    const values = reference(t.raw, `SELECT "${column}" FROM item WHERE "${column}" IS NOT NULL`).map((r) => r[0]);
    if (values.length) return pick(rand, values);
  }
  return pick(rand, [
    int(rand, -3, 12),
    int(rand, 0, 30) / 4,
    pick(rand, ['apple', '10', '2', 'a%', '%e%', '_i%', 'X2', '2.5']),
  ]);
}

function randomFilter(rand: () => number, t: TestDb): Filter {
  const column = pick(rand, COLUMNS);
  const col = `"${column}"`;
  const condition = pick(rand, [
    ...Object.keys(SQL_OP),
    'contains',
    'not_contains',
    'in',
    'not_in',
    'is_null',
    'is_not_null',
  ]);
  if (condition === 'is_null' || condition === 'is_not_null') {
    return {
      column,
      condition,
      value: null,
      where: `${col} ${condition === 'is_null' ? 'IS NULL' : 'IS NOT NULL'}`,
      params: [],
    };
  }
  if (condition === 'in' || condition === 'not_in') {
    const values = Array.from({ length: int(rand, 0, 3) }, () => literal(rand, t, column));
    const list = `(${values.map(() => '?').join(', ')})`;
    return {
      column,
      condition,
      value: values,
      where: `${col} ${condition === 'in' ? 'IN' : 'NOT IN'} ${list}`,
      params: values,
    };
  }
  const value = literal(rand, t, column);
  if (condition === 'contains') return { column, condition, value, where: `instr(${col}, ?) > 0`, params: [value] };
  if (condition === 'not_contains')
    return { column, condition, value, where: `NOT instr(${col}, ?) > 0`, params: [value] };
  return { column, condition, value, where: `${col} ${SQL_OP[condition]}`, params: [value] };
}

function filterCall(f: Filter, source: string, label: string): ToolCall {
  return {
    name: 'filter_data',
    label,
    arguments: { data_source: `$${source}$`, key_name: `item_${f.column}`, condition: f.condition, value: f.value },
  };
}

async function run(t: TestDb, calls: ToolCall[], answer: string[], init: ToolCall = INIT_ITEM): Promise<ToolOutput[]> {
  return executeSequence({ initialization: [init], calls, answerLabels: answer }, t.info, t.executor, {
    timeoutMs: 5000,
    pool: 'extended',
  });
}

function close(a: SqlValue, b: SqlValue): boolean {
  if (typeof a === 'number' && typeof b === 'number')
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  return a === b;
}

function expectRowsClose(actual: SqlValue[][], expected: SqlValue[][], context: string): void {
  const ok =
    actual.length === expected.length &&
    actual.every((row, i) => row.length === expected[i].length && row.every((v, j) => close(v, expected[i][j])));
  if (!ok) throw new Error(`${context}\nactual:   ${JSON.stringify(actual)}\nexpected: ${JSON.stringify(expected)}`);
}

const ALL = COLUMNS.map((c) => `"${c}"`).join(', ');

function sampleStd(values: number[]): number | null {
  if (values.length < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1));
}

/** Python's s[start:end]. */
function pySlice(s: string, start: number, end?: number): string {
  const n = s.length;
  const clamp = (b: number) => (b < 0 ? Math.max(n + b, 0) : Math.min(b, n));
  const from = clamp(start);
  const to = end === undefined ? n : clamp(end);
  return to > from ? s.slice(from, to) : '';
}

describe.each(SEEDS)('random database %i', (seed) => {
  let t: TestDb;
  let rand: () => number;
  beforeAll(() => {
    t = createTestDb(seed, 14 + (seed % 5) * 4);
    rand = prng(seed * 7 + 1);
  });
  afterAll(() => t.cleanup());

  test('filter_data (one or two filters) equals WHERE', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const f1 = randomFilter(rand, t);
      const f2 = randomFilter(rand, t);
      const [one, two] = await run(
        t,
        [filterCall(f1, 'starting_table_var', 'f1'), filterCall(f2, 'f1', 'f2')],
        ['f1', 'f2'],
      );
      const context = JSON.stringify([f1, f2]);
      expectRowsClose(
        (one as { rows: SqlValue[][] }).rows,
        reference(t.raw, `SELECT ${ALL} FROM item WHERE ${f1.where} ORDER BY rowid`, f1.params),
        context,
      );
      expectRowsClose(
        (two as { rows: SqlValue[][] }).rows,
        reference(t.raw, `SELECT ${ALL} FROM item WHERE (${f1.where}) AND (${f2.where}) ORDER BY rowid`, [
          ...f1.params,
          ...f2.params,
        ]),
        context,
      );
    }
  });

  test('union_data of two filters equals OR, in source order', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const f1 = randomFilter(rand, t);
      const f2 = randomFilter(rand, t);
      const [out] = await run(
        t,
        [
          filterCall(f1, 'starting_table_var', 'a'),
          filterCall(f2, 'starting_table_var', 'b'),
          { name: 'union_data', label: 'u', arguments: { data_source: '$a$', other_data_source: '$b$' } },
        ],
        ['u'],
      );
      expectRowsClose(
        (out as { rows: SqlValue[][] }).rows,
        reference(t.raw, `SELECT ${ALL} FROM item WHERE (${f1.where}) OR (${f2.where}) ORDER BY rowid`, [
          ...f1.params,
          ...f2.params,
        ]),
        JSON.stringify([f1, f2]),
      );
    }
  });

  test('sort (two keys, stable) + filter + retrieve with limit/offset equals ORDER BY ... LIMIT', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const k1 = pick(rand, COLUMNS);
      const k2 = pick(rand, COLUMNS);
      const a1 = rand() < 0.5;
      const a2 = rand() < 0.5;
      const f = randomFilter(rand, t);
      const target = pick(rand, COLUMNS);
      const limit = int(rand, -1, 6);
      const offset = int(rand, 0, 3);
      const [out] = await run(
        t,
        [
          {
            name: 'sort_data',
            label: 's2',
            arguments: { data_source: '$starting_table_var$', key_name: `item_${k2}`, ascending: a2 },
          },
          { name: 'sort_data', label: 's1', arguments: { data_source: '$s2$', key_name: `item_${k1}`, ascending: a1 } },
          filterCall(f, 's1', 'f'),
          {
            name: 'retrieve_data',
            label: 'r',
            arguments: { data_source: '$f$', key_name: `item_${target}`, limit, offset },
          },
        ],
        ['r'],
      );
      const dir = (asc: boolean) => (asc ? 'ASC' : 'DESC');
      const page = limit > 0 ? `LIMIT ${limit} OFFSET ${offset}` : `LIMIT -1 OFFSET ${offset}`;
      const expected = reference(
        t.raw,
        `SELECT "${target}" FROM item WHERE ${f.where} ORDER BY "${k1}" ${dir(a1)}, "${k2}" ${dir(a2)}, rowid ${page}`,
        f.params,
      );
      expectRowsClose(
        (out as { values: SqlValue[] }).values.map((v) => [v]),
        expected,
        JSON.stringify({ k1, k2, a1, a2, f, target, limit, offset }),
      );
    }
  });

  test('retrieve distinct / select_unique_values equal DISTINCT (first occurrence, sorted order kept)', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const key = pick(rand, COLUMNS);
      const other = pick(
        rand,
        COLUMNS.filter((c) => c !== key),
      );
      const [distinct, unique, combos] = await run(
        t,
        [
          {
            name: 'sort_data',
            label: 's',
            arguments: { data_source: '$starting_table_var$', key_name: `item_${key}`, ascending: false },
          },
          {
            name: 'retrieve_data',
            label: 'r',
            arguments: { data_source: '$s$', key_name: `item_${key}`, distinct: true },
          },
          { name: 'select_unique_values', label: 'u', arguments: { data_source: '$s$', key_name: `item_${key}` } },
          {
            name: 'select_unique_values',
            label: 'c',
            arguments: { data_source: '$starting_table_var$', key_name: [`item_${key}`, `item_${other}`] },
          },
        ],
        ['r', 'u', 'c'],
      );
      // Sorted descending, first occurrences are the distinct values in descending order.
      const expected = reference(t.raw, `SELECT DISTINCT "${key}" FROM item ORDER BY "${key}" DESC`);
      expectRowsClose(
        (distinct as { values: SqlValue[] }).values.map((v) => [v]),
        expected,
        key,
      );
      expectRowsClose(
        (unique as { values: SqlValue[] }).values.map((v) => [v]),
        expected,
        key,
      );
      expect(bag((combos as { rows: SqlValue[][] }).rows)).toEqual(
        bag(reference(t.raw, `SELECT DISTINCT "${key}", "${other}" FROM item`)),
      );
    }
  });

  test('aggregate_data on a (filtered, limited) table equals the SQL aggregate', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const type = pick(rand, ['min', 'max', 'sum', 'mean', 'count', 'count', 'std']);
      const star = type === 'count' && rand() < 0.3;
      const distinct = !star && rand() < 0.4;
      const column = type === 'std' ? pick(rand, NUMERIC) : pick(rand, COLUMNS);
      const limit = rand() < 0.3 ? int(rand, 1, 8) : 0;
      const f = randomFilter(rand, t);
      const [out] = await run(
        t,
        [
          filterCall(f, 'starting_table_var', 'f'),
          {
            name: 'aggregate_data',
            label: 'a',
            arguments: {
              data_source: '$f$',
              key_name: star ? '*' : `item_${column}`,
              aggregation_type: type,
              distinct,
              limit,
            },
          },
        ],
        ['a'],
      );
      const rows = `(SELECT * FROM item WHERE ${f.where} ORDER BY rowid${limit > 0 ? ` LIMIT ${limit}` : ''})`;
      let expected: SqlValue;
      if (type === 'std') {
        const values = reference(
          t.raw,
          `SELECT ${distinct ? 'DISTINCT ' : ''}"${column}" FROM ${rows} WHERE "${column}" IS NOT NULL`,
          f.params,
        ).map((r) => r[0] as number);
        expected = sampleStd(values);
      } else {
        const fn = { min: 'MIN', max: 'MAX', sum: 'SUM', mean: 'AVG', count: 'COUNT' }[type]!;
        const arg = star ? '*' : `${distinct ? 'DISTINCT ' : ''}"${column}"`;
        expected = reference(t.raw, `SELECT ${fn}(${arg}) FROM ${rows}`, f.params)[0][0];
      }
      expect(out.kind).toBe('scalar');
      expectRowsClose(
        [[(out as { value: SqlValue }).value]],
        [[expected]],
        JSON.stringify({ type, star, distinct, column, limit, f }),
      );
    }
  });

  test('argmin / argmax equal ORDER BY ... LIMIT 1 over non-null values', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const type = pick(rand, ['argmin', 'argmax']);
      const column = pick(rand, COLUMNS);
      const [out] = await run(
        t,
        [
          {
            name: 'aggregate_data',
            label: 'a',
            arguments: { data_source: '$starting_table_var$', key_name: `item_${column}`, aggregation_type: type },
          },
        ],
        ['a'],
      );
      const expected = reference(
        t.raw,
        `SELECT ${ALL} FROM item WHERE "${column}" IS NOT NULL ORDER BY "${column}" ${type === 'argmin' ? 'ASC' : 'DESC'}, rowid LIMIT 1`,
      );
      expectRowsClose((out as { rows: SqlValue[][] }).rows, expected, `${type} ${column}`);
    }
  });

  test('group_data_by + aggregates (+ HAVING-like filter, sort) equal GROUP BY', async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const groups = rand() < 0.7 ? [pick(rand, ['grp', 'code', 'name'])] : ['grp', 'code'];
      const t1 = pick(rand, ['min', 'max', 'sum', 'mean', 'count']);
      const c1 = pick(rand, COLUMNS);
      const distinct = rand() < 0.3;
      const limit = rand() < 0.2 ? int(rand, 1, 3) : 0;
      const having = int(rand, 0, 3);
      const calls: ToolCall[] = [
        {
          name: 'group_data_by',
          label: 'g',
          arguments: {
            data_source: '$starting_table_var$',
            key_name: groups.length === 1 ? `item_${groups[0]}` : groups.map((g) => `item_${g}`),
          },
        },
        {
          name: 'aggregate_data',
          label: 'a1',
          arguments: { data_source: '$g$', key_name: '*', aggregation_type: 'count' },
        },
        {
          name: 'filter_data',
          label: 'h',
          arguments: { data_source: '$a1$', key_name: 'count_rows', condition: 'greater_than_equal_to', value: having },
        },
        {
          name: 'aggregate_data',
          label: 'a2',
          arguments: { data_source: '$h$', key_name: `item_${c1}`, aggregation_type: t1, distinct, limit },
        },
        { name: 'sort_data', label: 's', arguments: { data_source: '$a2$', key_name: 'count_rows', ascending: false } },
      ];
      const [out] = await run(t, calls, ['s']);
      const key = `${t1}${distinct ? '_distinct' : ''}_item_${c1}`;
      const table = out as { columns: string[]; rows: SqlValue[][] };
      expect(table.columns).toEqual([...groups.map((g) => `item_${g}`), 'count_rows', key]);
      const gcols = groups.map((g) => `"${g}"`).join(', ');
      const fn = { min: 'MIN', max: 'MAX', sum: 'SUM', mean: 'AVG', count: 'COUNT' }[t1]!;
      const src =
        limit > 0
          ? `(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY ${gcols} ORDER BY rowid) AS n FROM item) WHERE n <= ${limit})`
          : 'item';
      const expected = reference(
        t.raw,
        `SELECT ${gcols}, (SELECT COUNT(*) FROM item AS i2 WHERE ${groups.map((g) => `i2."${g}" IS x."${g}"`).join(' AND ')}) AS cnt, ${fn}(${distinct ? 'DISTINCT ' : ''}"${c1}") FROM ${src} AS x GROUP BY ${gcols} HAVING cnt >= ? ORDER BY cnt DESC, ${gcols}`,
        [having],
      );
      const context = JSON.stringify({ groups, t1, c1, distinct, limit, having });
      // Floating sums may differ in the last bits with the summation order: compare with a tolerance.
      const sorter = (rows: SqlValue[][]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
      expectRowsClose(sorter(table.rows), sorter(expected), context);
      // Order: by count descending; ties keep the group order (group keys ascending).
      expect(table.rows.map((r) => r[groups.length])).toEqual(expected.map((r) => r[groups.length]));
      expectRowsClose(table.rows, expected, context);
    }
  });

  test('grouped std equals the sample std per group', async () => {
    const [out] = await run(
      t,
      [
        { name: 'group_data_by', label: 'g', arguments: { data_source: '$starting_table_var$', key_name: 'item_grp' } },
        {
          name: 'aggregate_data',
          label: 'a',
          arguments: { data_source: '$g$', key_name: 'item_price', aggregation_type: 'std' },
        },
      ],
      ['a'],
    );
    const rows = (out as { rows: SqlValue[][] }).rows;
    const groups = reference(t.raw, 'SELECT DISTINCT grp FROM item ORDER BY grp').map((r) => r[0]);
    const expected = groups.map((g) => [
      g,
      sampleStd(
        reference(t.raw, 'SELECT price FROM item WHERE grp IS ? AND price IS NOT NULL', [g]).map((r) => r[0] as number),
      ),
    ]);
    expectRowsClose(rows, expected, 'std per group');
  });

  test('transform_data equals the SQL expression; substring equals Python slicing', async () => {
    const ops: [string, Record<string, unknown>, (col: string) => [string, unknown[]]][] = [
      ['add', { operand: { value: 3 } }, (c) => [`${c} + ?`, [3]]],
      ['divide', { operand: { value: 2 } }, (c) => [`${c} / ?`, [2]]],
      ['divide', { operand: { value: 0 } }, (c) => [`${c} / ?`, [0]]],
      ['modulo', { operand: { key_name: 'item_grp' } }, (c) => [`${c} % "grp"`, []]],
      ['multiply', { operand: { value: 0.5 } }, (c) => [`${c} * ?`, [0.5]]],
      ['cast', { to: 'integer' }, (c) => [`CAST(${c} AS INTEGER)`, []]],
      ['cast', { to: 'real' }, (c) => [`CAST(${c} AS REAL)`, []]],
      ['round', { digits: 1 }, (c) => [`round(${c}, 1)`, []]],
      ['abs', {}, (c) => [`abs(${c})`, []]],
      ['length', {}, (c) => [`length(${c})`, []]],
      ['upper', {}, (c) => [`upper(${c})`, []]],
      ['concat', { operand: { value: '-x' } }, (c) => [`${c} || ?`, ['-x']]],
      ['coalesce', { operand: { value: 'none' } }, (c) => [`ifnull(${c}, ?)`, ['none']]],
      ['greater_than', { operand: { value: 2 } }, (c) => [`${c} > ?`, [2]]],
      ['like', { operand: { value: '%a%' } }, (c) => [`${c} LIKE ?`, ['%a%']]],
      ['in', { values: [1, '10', 2.5] }, (c) => [`${c} IN (?, ?, ?)`, [1, '10', 2.5]]],
      ['is_null', {}, (c) => [`${c} IS NULL`, []]],
      ['and', { operand: { key_name: 'item_grp' } }, (c) => [`${c} AND "grp"`, []]],
      ['not', {}, (c) => [`NOT ${c}`, []]],
      [
        'if_then_else',
        { then: { value: 'yes' }, else: { key_name: 'item_name' } },
        (c) => [`CASE WHEN ${c} THEN ? ELSE "name" END`, ['yes']],
      ],
      ['datetime', { pattern: '%Y' }, (c) => [`strftime('%Y', ${c})`, []]],
      ['datetime', { pattern: '%Y-%m-%d', modifiers: ['+1 day'] }, (c) => [`strftime('%Y-%m-%d', ${c}, '+1 day')`, []]],
      [
        'datetime',
        { pattern: '%Y-%m-%d %H:%M:%S', modifiers: ['start of month', '-3 months', 'weekday 0'] },
        (c) => [`strftime('%Y-%m-%d %H:%M:%S', ${c}, 'start of month', '-3 months', 'weekday 0')`, []],
      ],
      [
        'datetime',
        { pattern: '%H:%M', modifiers: ['+90 minutes'] },
        (c) => [`strftime('%H:%M', ${c}, '+90 minutes')`, []],
      ],
      ['julianday', {}, (c) => [`julianday(${c})`, []]],
    ];
    for (let i = 0; i < CASES_PER_DB; i++) {
      const column = pick(rand, COLUMNS);
      const [op, opArgs, expr] = pick(rand, ops);
      const [out] = await run(
        t,
        [
          {
            name: 'transform_data',
            label: 't',
            arguments: {
              data_source: '$starting_table_var$',
              key_name: `item_${column}`,
              operation_type: op,
              operation_args: opArgs,
            },
          },
        ],
        ['t'],
      );
      const [sqlExpr, params] = expr(`"${column}"`);
      const expected = reference(t.raw, `SELECT ${ALL}, ${sqlExpr} FROM item ORDER BY rowid`, params);
      const table = out as { columns: string[]; rows: SqlValue[][] };
      expect(table.columns[table.columns.length - 1]).toBe(`item_${column}_${op}`);
      expectRowsClose(table.rows, expected, `${op} ${column} ${JSON.stringify(opArgs)}`);
    }
    for (let i = 0; i < CASES_PER_DB; i++) {
      const start = int(rand, -8, 8);
      const end = rand() < 0.3 ? undefined : int(rand, -8, 8);
      const [out] = await run(
        t,
        [
          {
            name: 'transform_data',
            label: 't',
            arguments: {
              data_source: '$starting_table_var$',
              key_name: 'item_name',
              operation_type: 'substring',
              operation_args: { start_index: start, end_index: end },
            },
          },
        ],
        ['t'],
      );
      const names = reference(t.raw, 'SELECT name FROM item ORDER BY rowid').map((r) => r[0] as string | null);
      const got = (out as { rows: SqlValue[][] }).rows.map((r) => r[r.length - 1]);
      expect(got).toEqual(names.map((n) => (n === null ? null : pySlice(n, start, end))));
    }
  });

  test('combine_data of two projections equals the compound SELECT (UNION / UNION ALL / INTERSECT / EXCEPT)', async () => {
    const operations: Record<string, string> = {
      union: 'UNION',
      union_all: 'UNION ALL',
      intersect: 'INTERSECT',
      except: 'EXCEPT',
    };
    for (let i = 0; i < CASES_PER_DB; i++) {
      const f1 = randomFilter(rand, t);
      const f2 = randomFilter(rand, t);
      const operation = pick(rand, Object.keys(operations));
      const width = operation === 'union_all' || rand() < 0.6 ? 1 : 2;
      const left = Array.from({ length: width }, () => pick(rand, COLUMNS));
      const right = Array.from({ length: width }, () => pick(rand, COLUMNS));
      if (new Set(left).size < width || new Set(right).size < width) continue;
      const project = (columns: string[], source: string, label: string): ToolCall =>
        columns.length === 1
          ? { name: 'retrieve_data', label, arguments: { data_source: `$${source}$`, key_name: `item_${columns[0]}` } }
          : {
              name: 'select_unique_values',
              label,
              arguments: { data_source: `$${source}$`, key_name: columns.map((c) => `item_${c}`) },
            };
      const [out] = await run(
        t,
        [
          filterCall(f1, 'starting_table_var', 'a'),
          filterCall(f2, 'starting_table_var', 'b'),
          project(left, 'a', 'pa'),
          project(right, 'b', 'pb'),
          {
            name: 'combine_data',
            label: 'c',
            arguments: { data_source: '$pa$', other_data_source: '$pb$', operation },
          },
        ],
        ['c'],
      );
      const list = (cols: string[]) => cols.map((c) => `"${c}"`).join(', ');
      const params = [...f1.params, ...f2.params];
      const expected =
        operation === 'union_all'
          ? [
              ...reference(t.raw, `SELECT ${list(left)} FROM item WHERE ${f1.where} ORDER BY rowid`, f1.params),
              ...reference(t.raw, `SELECT ${list(right)} FROM item WHERE ${f2.where} ORDER BY rowid`, f2.params),
            ]
          : reference(
              t.raw,
              `SELECT ${list(left)} FROM item WHERE ${f1.where} ${operations[operation]} SELECT ${list(right)} FROM item WHERE ${f2.where} ORDER BY ${left.map((_, k) => k + 1).join(', ')}`,
              params,
            );
      const rows = out.kind === 'list' ? out.values.map((v) => [v]) : (out as { rows: SqlValue[][] }).rows;
      expect(out.kind).toBe(width === 1 ? 'list' : 'table');
      if (out.kind === 'table') expect(out.columns).toEqual(left.map((c) => `item_${c}`));
      expectRowsClose(rows, expected, JSON.stringify([operation, left, right, f1, f2]));
    }
  });

  test("on a (left) join: sort, filters, union equal ORDER BY key, then the rowids in the planner's loop order", async () => {
    for (let i = 0; i < CASES_PER_DB; i++) {
      const left = rand() < 0.5;
      const init: ToolCall = {
        name: 'initialize_active_data',
        label: 'starting_table_var',
        arguments: {
          database: 'test',
          tables: [
            { alias: 'T1', table: 'item' },
            { alias: 'T2', table: 'tag' },
          ],
          joins: [{ type: left ? 'left' : 'inner', alias: 'T2', on: [{ left: 'T1.id', right: 'T2.item_id' }] }],
        },
      };
      const from = `item AS T1 ${left ? 'LEFT JOIN' : 'JOIN'} tag AS T2 ON T1.id = T2.item_id`;
      // Source order: the rowids, outermost loop of SQLite's plan for the whole join first.
      const plan = reference(t.raw, `EXPLAIN QUERY PLAN SELECT * FROM ${from}`).map((r) => String(r[r.length - 1]));
      const source = (loopNesting(plan, ['T1', 'T2']) ?? ['t1', 't2']).map((a) => `${a}.rowid`).join(', ');
      const sortKey = pick(rand, [...COLUMNS.map((c) => ['item', c]), ['tag', 'label'], ['tag', 'weight']]);
      const ascending = rand() < 0.5;
      const f1 = randomFilter(rand, t);
      const f2 = randomFilter(rand, t);
      const sorted = rand() < 0.7;
      const target = pick(rand, ['item_id', 'tag_label', 'item_name']);
      const base = sorted ? 's' : 'starting_table_var';
      const calls: ToolCall[] = [
        {
          name: 'sort_data',
          label: 's',
          arguments: { data_source: '$starting_table_var$', key_name: sortKey.join('_'), ascending },
        },
        filterCall(f1, base, 'a'),
        filterCall(f2, base, 'b'),
        { name: 'union_data', label: 'u', arguments: { data_source: '$a$', other_data_source: '$b$' } },
        { name: 'retrieve_data', label: 'r', arguments: { data_source: '$u$', key_name: target } },
        {
          name: 'retrieve_data',
          label: 'ra',
          arguments: { data_source: '$a$', key_name: target, limit: 3, offset: 1 },
        },
      ];
      const [u, ra] = await run(t, calls, ['r', 'ra'], init);
      const column = (c: string) => (c.startsWith('tag_') ? `T2."${c.slice(4)}"` : `T1."${c.slice(5)}"`);
      const where = (f: Filter) => f.where.replace(`"${f.column}"`, `T1."${f.column}"`);
      const order = `${sorted ? `${column(sortKey.join('_'))} ${ascending ? 'ASC' : 'DESC'}, ` : ''}${source}`;
      const context = JSON.stringify({ left, sortKey, ascending, sorted, f1, f2, target, source });
      expectRowsClose(
        (u as { values: SqlValue[] }).values.map((v) => [v]),
        reference(
          t.raw,
          `SELECT ${column(target)} FROM ${from} WHERE (${where(f1)}) OR (${where(f2)}) ORDER BY ${order}`,
          [...f1.params, ...f2.params],
        ),
        context,
      );
      expectRowsClose(
        (ra as { values: SqlValue[] }).values.map((v) => [v]),
        reference(
          t.raw,
          `SELECT ${column(target)} FROM ${from} WHERE ${where(f1)} ORDER BY ${order} LIMIT 3 OFFSET 1`,
          f1.params,
        ),
        context,
      );
    }
  });

  test('joined starting table equals the SQL join', async () => {
    const [out] = await run(
      t,
      [
        {
          name: 'retrieve_data',
          label: 'r',
          arguments: { data_source: '$starting_table_var$', key_name: 'tag_label' },
        },
      ],
      ['r'],
      INIT_JOIN,
    );
    const expected = reference(t.raw, 'SELECT T2.label FROM item AS T1 JOIN tag AS T2 ON T1.id = T2.item_id');
    expect(bag((out as { values: SqlValue[] }).values.map((v) => [v]))).toEqual(bag(expected));
  });
});

describe('tables without rowid, and a column named rowid', () => {
  let t: TestDb;
  beforeAll(() => {
    t = createDb({
      plain: {
        columns: [
          ['rowid', 'TEXT'],
          ['v', 'INTEGER'],
        ],
        rows: [
          ['b', 2],
          ['a', 1],
          ['c', 2],
          ['a', 3],
        ],
      },
    });
    t.raw.exec('CREATE TABLE keyed (k1 TEXT, k2 INTEGER, v INTEGER, PRIMARY KEY (k1, k2)) WITHOUT ROWID');
    t.raw.exec("INSERT INTO keyed VALUES ('b', 1, 2), ('a', 2, 1), ('a', 1, 2), ('c', 0, NULL)");
    const columns = (names: string[]) =>
      names.map((name) => ({ name, type: '', description: name, valueDescription: '' }));
    t.info.tables.push({
      name: 'keyed',
      columns: columns(['k1', 'k2', 'v']),
      primaryKey: ['k1', 'k2'],
      foreignKeys: [],
    });
  });
  afterAll(() => t.cleanup());

  const init = (table: string): ToolCall => ({
    name: 'initialize_active_data',
    label: 'starting_table_var',
    arguments: { database: 'test', tables: [{ alias: 'T1', table }], joins: [] },
  });
  const union = (table: string, key: string): ToolCall[] => [
    {
      name: 'filter_data',
      label: 'a',
      arguments: { data_source: '$starting_table_var$', key_name: key, condition: 'equal_to', value: 2 },
    },
    {
      name: 'filter_data',
      label: 'b',
      arguments: { data_source: '$starting_table_var$', key_name: key, condition: 'less_than', value: 3 },
    },
    { name: 'union_data', label: 'u', arguments: { data_source: '$a$', other_data_source: '$b$' } },
    { name: 'sort_data', label: 's', arguments: { data_source: '$u$', key_name: key, ascending: false } },
  ];

  test('a WITHOUT ROWID table is identified and ordered by its primary key', async () => {
    const [u, s] = await run(t, union('keyed', 'keyed_v'), ['u', 's'], init('keyed'));
    expect((u as { rows: SqlValue[][] }).rows).toEqual(
      reference(t.raw, 'SELECT k1, k2, v FROM keyed WHERE v < 3 ORDER BY k1, k2'),
    );
    expect((s as { rows: SqlValue[][] }).rows).toEqual(
      reference(t.raw, 'SELECT k1, k2, v FROM keyed WHERE v < 3 ORDER BY v DESC, k1, k2'),
    );
  });

  test('a column named rowid does not stand in for the row identity', async () => {
    const [u, s] = await run(t, union('plain', 'plain_v'), ['u', 's'], init('plain'));
    expect((u as { rows: SqlValue[][] }).rows).toEqual(
      reference(t.raw, 'SELECT "rowid", v FROM plain WHERE v < 3 ORDER BY _rowid_'),
    );
    expect((s as { rows: SqlValue[][] }).rows).toEqual(
      reference(t.raw, 'SELECT "rowid", v FROM plain WHERE v < 3 ORDER BY v DESC, _rowid_'),
    );
  });
});
