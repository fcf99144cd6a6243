import { parseQuery } from '../../generators/sql/normalize.js';
import type { Expr, FromItem, NormalizedQuery, Query, SelectQuery } from '../../generators/sql/ast.js';
import { SCHEMA } from '../decompose/schema.js';

function parse(sql: string): NormalizedQuery {
  const outcome = parseQuery(sql, SCHEMA);
  if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
  return outcome.value;
}

function select(sql: string): SelectQuery {
  const { query } = parse(sql);
  if (query.kind !== 'select') throw new Error('not a plain select');
  return query;
}

function column(source: string, table: string | null, name: string, depth = 0): Expr {
  return { kind: 'column', source, table, column: name, depth };
}

describe('parseQuery: names', () => {
  test('aliases resolve to their FROM item, columns get the schema case', () => {
    const q = select('SELECT t1.NAME, T2.Avg FROM School AS T1 INNER JOIN score T2 ON t1.ID = t2.school_id');
    expect(q.columns.map((c) => c.expr)).toEqual([column('T1', 'school', 'name'), column('T2', 'score', 'avg')]);
    expect(q.from).toEqual({
      base: { kind: 'table', name: 'T1', table: 'school' },
      joins: [
        {
          type: 'inner',
          item: { kind: 'table', name: 'T2', table: 'score' },
          on: {
            kind: 'binary',
            op: '=',
            left: column('T1', 'school', 'id'),
            right: column('T2', 'score', 'school_id'),
          },
        },
      ],
    });
  });

  test('unqualified columns find their table; backquoted names with spaces', () => {
    const q = select('SELECT `free meals`, subject FROM school JOIN score ON id = school_id');
    expect(q.columns.map((c) => c.expr)).toEqual([
      column('school', 'school', 'Free Meals'),
      column('score', 'score', 'subject'),
    ]);
  });

  test('SELECT * expands to every column in schema order', () => {
    const q = select('SELECT * FROM score');
    expect(q.columns.map((c) => c.name)).toEqual(['school_id', 'subject', 'avg', 'takers']);
  });

  test('unknown tables and columns are parse errors', () => {
    expect(parseQuery('SELECT x FROM school', SCHEMA)).toMatchObject({
      ok: false,
      category: 'parse_error',
      message: expect.stringContaining('no such column'),
    });
    expect(parseQuery('SELECT 1 FROM nowhere', SCHEMA)).toMatchObject({
      ok: false,
      category: 'parse_error',
      message: expect.stringContaining('no such table'),
    });
  });

  test('ambiguous unqualified column is a parse error', () => {
    const outcome = parseQuery('SELECT id FROM school AS a JOIN school AS b ON a.id = b.id', SCHEMA);
    expect(outcome).toMatchObject({
      ok: false,
      category: 'parse_error',
      message: expect.stringContaining('ambiguous'),
    });
  });

  test("syntax errors carry node-sql-parser's message", () => {
    const outcome = parseQuery('SELECT FROM WHERE', SCHEMA);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.category).toBe('parse_error');
  });

  test('COLLATE is refused, not dropped (dropped, NOCASE would compare case-sensitively)', () => {
    for (const sql of [
      "SELECT id FROM school WHERE name COLLATE NOCASE = 'oak'",
      "SELECT id FROM school WHERE name = 'oak' COLLATE NOCASE",
      'SELECT id FROM school ORDER BY name COLLATE NOCASE',
    ]) {
      expect(parseQuery(sql, SCHEMA)).toMatchObject({
        ok: false,
        category: 'parse_error',
        message: expect.stringContaining('COLLATE'),
      });
    }
  });
});

test('NULLS FIRST/LAST is refused, not dropped, and does not turn the query DISTINCT', () => {
  // Only the postgresql grammar reads it; its `distinct: {type: null}` is no DISTINCT.
  for (const sql of [
    'SELECT name FROM school ORDER BY City NULLS LAST',
    'SELECT name FROM school ORDER BY City DESC NULLS FIRST',
  ]) {
    expect(parseQuery(sql, SCHEMA)).toMatchObject({
      ok: false,
      category: 'parse_error',
      message: expect.stringMatching(/NULLS (FIRST|LAST) is not supported/),
    });
  }
});

describe('parseQuery: double-quoted strings', () => {
  test('an identifier when it names a column, else a text literal', () => {
    const q = select('SELECT "name" FROM school WHERE City = "Fresno"');
    expect(q.columns[0].expr).toEqual(column('school', 'school', 'name'));
    expect(q.where).toEqual({
      kind: 'binary',
      op: '=',
      left: column('school', 'school', 'City'),
      right: { kind: 'literal', type: 'text', value: 'Fresno', raw: '"Fresno"' },
    });
  });

  test('doubled quotes inside strings are unescaped', () => {
    const q = select("SELECT name FROM school WHERE name = 'O''Brien'");
    expect(q.where).toMatchObject({ right: { value: "O'Brien" } });
  });
});

describe('parseQuery: literals', () => {
  test('integer and real are kept apart, with the raw text', () => {
    const q = select('SELECT students * 1.0, students * 100, -2, 0.5, NULL FROM school');
    const exprs = q.columns.map((c) => c.expr);
    expect(exprs[0]).toMatchObject({
      kind: 'binary',
      op: '*',
      right: { kind: 'literal', type: 'real', value: 1, raw: '1.0' },
    });
    expect(exprs[1]).toMatchObject({ right: { kind: 'literal', type: 'integer', value: 100, raw: '100' } });
    expect(exprs[2]).toEqual({ kind: 'literal', type: 'integer', value: -2, raw: '-2' });
    expect(exprs[3]).toMatchObject({ type: 'real', value: 0.5 });
    expect(exprs[4]).toEqual({ kind: 'literal', type: 'null', value: null, raw: 'NULL' });
  });
});

describe('parseQuery: expressions', () => {
  test('aggregates, CAST, IIF as CASE, CASE x WHEN as CASE WHEN x =', () => {
    const q = select(
      "SELECT COUNT(*), COUNT(DISTINCT City), CAST(SUM(students) AS REAL), IIF(students > 100, 'big', 'small'), CASE City WHEN 'Fresno' THEN 1 END FROM school",
    );
    const [count, distinct, cast, iif, caseExpr] = q.columns.map((c) => c.expr);
    expect(count).toEqual({ kind: 'aggregate', name: 'COUNT', distinct: false, star: true, arg: null, extraArgs: [] });
    expect(distinct).toMatchObject({
      kind: 'aggregate',
      name: 'COUNT',
      distinct: true,
      arg: column('school', 'school', 'City'),
    });
    expect(cast).toMatchObject({ kind: 'cast', to: 'real', expr: { kind: 'aggregate', name: 'SUM' } });
    expect(iif).toMatchObject({
      kind: 'case',
      whens: [{ when: { op: '>' }, then: { value: 'big' } }],
      else: { value: 'small' },
    });
    expect(caseExpr).toMatchObject({
      kind: 'case',
      whens: [{ when: { kind: 'binary', op: '=', left: column('school', 'school', 'City') } }],
      else: null,
    });
  });

  test('SUM(DISTINCT x), which the sqlite grammar refuses, still parses', () => {
    const q = select('SELECT SUM(DISTINCT students) FROM school');
    expect(q.columns[0].expr).toMatchObject({ kind: 'aggregate', name: 'SUM', distinct: true });
  });

  test('IN, BETWEEN, LIKE, IS NULL, NOT', () => {
    const q = select(
      "SELECT id FROM school WHERE id IN (1, 2) AND students NOT BETWEEN 1 AND 5 AND name NOT LIKE 'A%' AND City IS NOT NULL AND NOT (id = 3)",
    );
    const text = JSON.stringify(q.where);
    expect(text).toContain('"kind":"in","expr"');
    expect(text).toContain('"kind":"between"');
    expect(text).toContain('"kind":"like","op":"LIKE","not":true');
    expect(text).toContain('"kind":"isNull"');
    expect(text).toContain('"kind":"unary","op":"NOT"');
  });

  test('functions are upper-cased with their arguments', () => {
    const q = select("SELECT strftime('%Y', founded), substr(name, 1, 2) FROM school");
    expect(q.columns[0].expr).toMatchObject({
      kind: 'function',
      name: 'STRFTIME',
      args: [{ value: '%Y' }, column('school', 'school', 'founded')],
    });
    expect(q.columns[1].expr).toMatchObject({ kind: 'function', name: 'SUBSTR' });
  });

  test('window functions: their arguments, PARTITION BY, ORDER BY and frame are resolved names', () => {
    const q = select('SELECT name, RANK() OVER (ORDER BY students DESC) FROM school');
    expect(q.columns[1].expr).toEqual({
      kind: 'window',
      name: 'RANK',
      args: [],
      star: false,
      distinct: false,
      partitionBy: [],
      orderBy: [{ expr: column('school', 'school', 'students'), direction: 'desc', nulls: null }],
      frame: null,
    });
    const p = select(
      'SELECT SUM(T2.takers) OVER (PARTITION BY T1.City ORDER BY T2.avg ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), COUNT(*) OVER (), LAG(T2.avg, 1, 0) OVER (PARTITION BY T1.id ORDER BY T2.subject DESC NULLS LAST) FROM school AS T1 JOIN score AS T2 ON T1.id = T2.school_id',
    );
    expect(p.columns.map((c) => c.expr)).toEqual([
      {
        kind: 'window',
        name: 'SUM',
        args: [column('T2', 'score', 'takers')],
        star: false,
        distinct: false,
        partitionBy: [column('T1', 'school', 'City')],
        orderBy: [{ expr: column('T2', 'score', 'avg'), direction: 'asc', nulls: null }],
        frame: 'ROWS BETWEEN 2 PRECEDING AND CURRENT ROW',
      },
      {
        kind: 'window',
        name: 'COUNT',
        args: [],
        star: true,
        distinct: false,
        partitionBy: [],
        orderBy: [],
        frame: null,
      },
      {
        kind: 'window',
        name: 'LAG',
        args: [
          column('T2', 'score', 'avg'),
          { kind: 'literal', type: 'integer', value: 1, raw: '1' },
          expect.anything(),
        ],
        star: false,
        distinct: false,
        partitionBy: [column('T1', 'school', 'id')],
        orderBy: [{ expr: column('T2', 'score', 'subject'), direction: 'desc', nulls: 'last' }],
        frame: null,
      },
    ]);
  });

  test('window functions in a derived table, named windows, and where SQLite refuses them', () => {
    const q = select(
      'SELECT name FROM (SELECT name, students, DENSE_RANK() OVER (ORDER BY students DESC) as rank FROM school) WHERE rank = 1',
    );
    const derived = q.from?.base as Extract<FromItem, { kind: 'derived' }>;
    expect((derived.query as SelectQuery).columns[2]).toMatchObject({
      name: 'rank',
      expr: { kind: 'window', name: 'DENSE_RANK' },
    });
    expect(q.where).toMatchObject({ left: column(derived.name, null, 'rank') });
    const named = select(
      'SELECT ROW_NUMBER() OVER w, SUM(students) OVER w FROM school WINDOW w AS (PARTITION BY City ORDER BY id)',
    );
    expect(named.columns.map((c) => c.expr)).toMatchObject([
      { name: 'ROW_NUMBER', partitionBy: [column('school', 'school', 'City')], orderBy: [{ direction: 'asc' }] },
      { name: 'SUM', partitionBy: [column('school', 'school', 'City')] },
    ]);
    expect(parseQuery('SELECT ROW_NUMBER() OVER v FROM school WINDOW w AS (ORDER BY id)', SCHEMA)).toMatchObject({
      ok: false,
      message: 'no such window: v',
    });
    expect(parseQuery('SELECT id FROM school WHERE RANK() OVER (ORDER BY id) = 1', SCHEMA)).toMatchObject({
      ok: false,
      category: 'parse_error',
      message: 'misuse of window function RANK()',
    });
    expect(parseQuery('SELECT RANK() OVER (ORDER BY nope) FROM school', SCHEMA)).toMatchObject({
      ok: false,
      message: expect.stringContaining('no such column'),
    });
  });
});

describe('parseQuery: clauses', () => {
  test('ORDER BY ordinals and result aliases point at the SELECT list', () => {
    const q = select('SELECT name AS n, students FROM school ORDER BY n DESC, 2');
    expect(q.orderBy).toEqual([
      { expr: column('school', 'school', 'name'), direction: 'desc', selectIndex: 0 },
      { expr: column('school', 'school', 'students'), direction: 'asc', selectIndex: 1 },
    ]);
  });

  test('GROUP BY, HAVING, LIMIT/OFFSET (both syntaxes), DISTINCT', () => {
    const q = select('SELECT DISTINCT City, COUNT(id) FROM school GROUP BY City HAVING COUNT(id) > 1 LIMIT 5 OFFSET 2');
    expect(q.distinct).toBe(true);
    expect(q.groupBy).toEqual([column('school', 'school', 'City')]);
    expect(q.having).toMatchObject({ kind: 'binary', op: '>' });
    expect(q.limit).toMatchObject({ value: 5 });
    expect(q.offset).toMatchObject({ value: 2 });
    const mysql = select('SELECT City FROM school LIMIT 2, 5');
    expect([mysql.limit, mysql.offset]).toMatchObject([{ value: 5 }, { value: 2 }]);
  });

  test('WHERE may name a result alias', () => {
    const q = select('SELECT students * 2 AS double FROM school WHERE double > 10');
    expect(q.where).toMatchObject({ left: { kind: 'binary', op: '*' } });
  });

  test('LEFT JOIN and USING', () => {
    const q = select('SELECT name FROM school LEFT JOIN score ON school.id = score.school_id');
    expect(q.from?.joins[0].type).toBe('left');
    const using = select('SELECT s.name FROM school AS s JOIN school AS t USING (id)');
    expect(using.from?.joins[0].on).toEqual({
      kind: 'binary',
      op: '=',
      left: column('s', 'school', 'id'),
      right: column('t', 'school', 'id'),
    });
  });

  test('set operations', () => {
    const { query } = parse('SELECT name FROM school UNION SELECT subject FROM score ORDER BY 1');
    expect(query).toMatchObject({ kind: 'set', op: 'union', left: { kind: 'select' }, right: { kind: 'select' } });
    expect((query as Extract<Query, { kind: 'set' }>).orderBy).toHaveLength(1);
  });

  test('a compound ORDER BY names a result column of a member, by name or alias', () => {
    const order = (sql: string) => (parse(sql).query as Extract<Query, { kind: 'set' }>).orderBy;
    const byName = order('SELECT name FROM school EXCEPT SELECT subject FROM score ORDER BY name DESC');
    expect(byName).toEqual([{ expr: column('school', 'school', 'name'), direction: 'desc', selectIndex: 0 }]);
    expect(
      order('SELECT id, name FROM school UNION SELECT school_id, subject FROM score ORDER BY school.name')[0]
        .selectIndex,
    ).toBe(1);
    // A later member's column names the same position.
    expect(
      order('SELECT id, name FROM school UNION SELECT school_id, subject FROM score ORDER BY subject')[0].selectIndex,
    ).toBe(1);
    expect(order('SELECT name AS n FROM school INTERSECT SELECT subject FROM score ORDER BY n')[0]).toMatchObject({
      selectIndex: 0,
    });
    expect(
      parseQuery('SELECT name FROM school UNION SELECT subject FROM score ORDER BY students', SCHEMA),
    ).toMatchObject({
      ok: false,
      category: 'parse_error',
    });
  });
});

describe('parseQuery: subqueries and correlation', () => {
  test('an uncorrelated scalar subquery', () => {
    const q = select('SELECT name FROM school WHERE students = (SELECT MAX(students) FROM school)');
    expect(q.correlated).toBe(false);
    expect(q.where).toMatchObject({ right: { kind: 'subquery', query: { kind: 'select', correlated: false } } });
  });

  test('a correlated subquery refers to the enclosing FROM at depth 1', () => {
    const q = select('SELECT name FROM school AS s WHERE EXISTS (SELECT 1 FROM score WHERE score.school_id = s.id)');
    expect(q.correlated).toBe(false);
    const exists = q.where as Extract<Expr, { kind: 'exists' }>;
    expect(exists.kind).toBe('exists');
    expect(exists.query.correlated).toBe(true);
    expect(JSON.stringify(exists.query)).toContain(JSON.stringify(column('s', 'school', 'id', 1)));
  });

  test('IN (SELECT ...) and derived tables', () => {
    const q = select('SELECT t.n FROM (SELECT name AS n FROM school WHERE id IN (SELECT school_id FROM score)) AS t');
    expect(q.from?.base).toMatchObject({ kind: 'derived', name: 't' });
    expect(q.columns[0].expr).toEqual(column('t', null, 'n'));
    expect(JSON.stringify(q.from)).toContain('"kind":"in"');
  });
});

describe('parseQuery: WITH (common table expressions)', () => {
  const withTable = (q: SelectQuery, index: number): Extract<FromItem, { kind: 'derived' }> => {
    const item = index === 0 ? q.from!.base : q.from!.joins[index - 1].item;
    if (item.kind !== 'derived') throw new Error('not a derived table');
    return item;
  };

  test('a reference is a derived table named by its alias, else by the WITH name', () => {
    const q = select(
      'WITH big AS (SELECT id, name FROM school WHERE students > 100) SELECT b.name, big2.avg FROM big AS b JOIN (SELECT school_id, avg FROM score) AS big2 ON b.id = big2.school_id',
    );
    expect(withTable(q, 0)).toMatchObject({ kind: 'derived', name: 'b', query: { kind: 'select' } });
    expect(q.columns[0].expr).toEqual(column('b', null, 'name'));
    const plain = select('WITH big AS (SELECT id FROM school) SELECT id FROM big');
    expect(withTable(plain, 0).name).toBe('big');
    // Same meaning as the derived table written out.
    expect(plain.from).toEqual(select('SELECT id FROM (SELECT id FROM school) AS big').from);
  });

  test('column lists, later tables naming earlier (and later) ones, a table named twice, a shadowed schema table', () => {
    const q = select(
      'WITH x(a, b) AS (SELECT id, name FROM school), y AS (SELECT a FROM x WHERE a > 1) SELECT y.a, z.b FROM y JOIN x AS z ON y.a = z.a',
    );
    expect(withTable(q, 0).query).toMatchObject({
      columns: [{ name: 'a' }],
      from: { base: { kind: 'derived', name: 'x', query: { columns: [{ name: 'a' }, { name: 'b' }] } } },
    });
    expect(withTable(q, 1)).toMatchObject({ name: 'z', query: { columns: [{ name: 'a' }, { name: 'b' }] } });
    expect(q.columns[1].expr).toEqual(column('z', null, 'b'));
    const forward = select('WITH y AS (SELECT id FROM x), x AS (SELECT id FROM school) SELECT id FROM y');
    expect(withTable(forward, 0).query).toMatchObject({ from: { base: { kind: 'derived', name: 'x' } } });
    const shadow = select('WITH score AS (SELECT id AS school_id FROM school) SELECT school_id FROM score');
    expect(shadow.from?.base).toMatchObject({ kind: 'derived', name: 'score' });
    expect(parseQuery('WITH x(a) AS (SELECT id, name FROM school) SELECT a FROM x', SCHEMA)).toMatchObject({
      ok: false,
      message: 'table x has 2 values for 1 columns',
    });
  });

  test('WITH on a compound, inside a subquery, and seen from a nested subquery', () => {
    const compound = parse(
      'WITH s AS (SELECT id FROM school) SELECT id FROM s UNION SELECT school_id FROM score',
    ).query;
    expect(compound).toMatchObject({ kind: 'set', left: { from: { base: { kind: 'derived', name: 's' } } } });
    const nested = select(
      'WITH s AS (SELECT id FROM school WHERE students > 10) SELECT name FROM school WHERE id IN (SELECT id FROM s) AND id IN (WITH t AS (SELECT school_id FROM score) SELECT school_id FROM t)',
    );
    expect(nested.correlated).toBe(false);
    expect(JSON.stringify(nested.where)).toContain('"kind":"derived","name":"s"');
    expect(JSON.stringify(nested.where)).toContain('"kind":"derived","name":"t"');
  });

  test('a recursive WITH table, with or without the keyword: its reference a set query, the recursive SELECT reads the initial one', () => {
    const initial = {
      kind: 'select',
      columns: [{ expr: column('school', 'school', 'id'), name: 'k' }],
      from: { base: { kind: 'table', name: 'school', table: 'school' }, joins: [] },
      where: { kind: 'binary', op: '=', right: { kind: 'literal', value: 'Alder' } },
    };
    for (const keyword of ['RECURSIVE ', '']) {
      const parsed = parse(
        `WITH ${keyword}n(k) AS (SELECT id FROM school WHERE name = 'Alder' UNION ALL SELECT s.id FROM school AS s JOIN n ON s.students > n.k) SELECT COUNT(*) FROM n`,
      );
      expect(parsed.recursive).toEqual(['n']);
      const item = withTable(parsed.query as SelectQuery, 0);
      expect(item).toMatchObject({ kind: 'derived', name: 'n', recursive: 'table' });
      expect(item.query).toMatchObject({
        kind: 'set',
        op: 'union all',
        left: initial,
        right: {
          kind: 'select',
          columns: [{ expr: column('s', 'school', 'id') }],
          from: {
            base: { kind: 'table', name: 's', table: 'school' },
            joins: [
              {
                type: 'inner',
                item: { kind: 'derived', name: 'n', recursive: 'self', query: initial },
                on: { kind: 'binary', op: '>', left: column('s', 'school', 'students'), right: column('n', null, 'k') },
              },
            ],
          },
        },
      });
    }
  });

  test('a recursive table read in a subquery, with UNION, ORDER BY and LIMIT of its own; a non-recursive one is plain', () => {
    const parsed = parse(
      'WITH RECURSIVE n(k, d) AS (SELECT 1, 0 UNION SELECT k + 1, d + 1 FROM n WHERE k < 5 ORDER BY 2 LIMIT 10) SELECT name FROM school WHERE id IN (SELECT k FROM n)',
    );
    expect(parsed.recursive).toEqual(['n']);
    expect(JSON.stringify(parsed.query.kind === 'select' && parsed.query.where)).toContain('"recursive":"table"');
    const where = (parsed.query as SelectQuery).where;
    if (where?.kind !== 'in' || where.subquery?.kind !== 'select') throw new Error('not IN (SELECT …)');
    const table = withTable(where.subquery, 0);
    expect(table.query).toMatchObject({
      kind: 'set',
      op: 'union',
      orderBy: [{ selectIndex: 1 }],
      limit: { value: 10 },
    });
    const plain = parse('WITH RECURSIVE n(k) AS (SELECT id FROM school) SELECT k FROM n');
    expect(plain.recursive).toBeUndefined();
    expect(withTable(plain.query as SelectQuery, 0)).not.toHaveProperty('recursive');
  });

  test('recursive tables SQLite refuses, or in a form beyond initial UNION [ALL] recursive, are precise parse errors', () => {
    for (const [sql, message] of [
      ['WITH a AS (SELECT id FROM b), b AS (SELECT id FROM a) SELECT id FROM a', 'is not <initial SELECT>'],
      ['WITH RECURSIVE n(k) AS (SELECT k FROM n UNION ALL SELECT 1) SELECT k FROM n', 'its initial SELECT names it'],
      ['WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT k + 1 FROM n) SELECT k FROM n', 'is not'],
      ['WITH RECURSIVE n(k) AS (SELECT 1 EXCEPT SELECT k + 1 FROM n) SELECT k FROM n', 'is not'],
      ['WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT n.k + 1 FROM n JOIN n AS m) SELECT k FROM n', 'named twice'],
      [
        'WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT id FROM school WHERE id IN (SELECT k FROM n)) SELECT k FROM n',
        'named in a subquery of its recursive SELECT',
      ],
    ]) {
      expect(parseQuery(sql, SCHEMA)).toEqual({
        ok: false,
        category: 'parse_error',
        message: expect.stringContaining(message),
      });
    }
    expect(parseQuery('WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a', SCHEMA)).toMatchObject({
      ok: false,
      message: 'duplicate WITH table name: a',
    });
  });
});
