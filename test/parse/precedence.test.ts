import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import mysqlGrammar from 'node-sql-parser/build/mysql.js';
import postgresqlGrammar from 'node-sql-parser/build/postgresql.js';
import sqliteGrammar from 'node-sql-parser/build/sqlite.js';
import path from 'node:path';
import type { Expr } from '../../generators/sql/ast.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import { reassociate } from '../../generators/sql/precedence.js';
import { decompose } from '../../generators/slot/decompose.js';
import { canonicalForm } from '../../generators/rest/canonical.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import type { DatabaseInfo, SqlValue } from '../../core/model.js';
import { executeSequence } from '../../runtime/slot/index.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { compareWithGold } from '../../verifiers/compare.js';
import { callRows, instance, rows } from '../rest/fixtures.js';
import { int, pick, prng } from '../runtime/helpers.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

/**
 * node-sql-parser reads `a OR b AND c` as `(a OR b) AND c` and `a = b < c` as `(a = b) < c`;
 * SQLite (the reference) binds AND before OR and `<` before `=`. The parse every consumer
 * sees must be SQLite's reading.
 */

const VALUES = [0, 1, 2, null];
/** t(id, a, b, c): every combination of 0, 1, 2 and NULL, so any two readings that differ show. */
const ROWS = VALUES.flatMap((a) => VALUES.flatMap((b) => VALUES.map((c) => [a, b, c])));
const SQL_LITERAL = (v: number | null) => (v === null ? 'NULL' : String(v));
const DDL = `CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER);
  INSERT INTO t (a, b, c) VALUES ${ROWS.map((r) => `(${r.map(SQL_LITERAL).join(', ')})`).join(', ')};`;

const column = (name: string, type = 'INTEGER') => ({ name, type, description: name, valueDescription: '' });

let db: DatabaseInfo;
let sqlite: Database.Database;
beforeAll(() => {
  const file = createDb(path.join(tempDir('nl2api-precedence-'), 'abc.sqlite'), DDL);
  db = {
    dbId: 'abc',
    path: file,
    fingerprint: 'test',
    tables: [{ name: 't', columns: ['id', 'a', 'b', 'c'].map((n) => column(n)), primaryKey: ['id'], foreignKeys: [] }],
  };
  sqlite = new Database(file, { readonly: true });
});
afterAll(() => {
  sqlite.close();
  removeTempDirs();
});

function whereOf(sql: string): Expr {
  const parsed = parseQuery(sql, db);
  if (!parsed.ok) throw new Error(`${sql}: ${parsed.message}`);
  if (parsed.value.query.kind !== 'select' || parsed.value.query.where === null) throw new Error(`${sql}: no WHERE`);
  return parsed.value.query.where;
}

/** The normalized expression as fully parenthesized SQL: its tree, nothing left to precedence. */
function render(e: Expr): string {
  switch (e.kind) {
    case 'literal':
      return e.raw;
    case 'column':
      return e.column;
    case 'binary':
      return `(${render(e.left)} ${e.op} ${render(e.right)})`;
    case 'unary':
      return `(${e.op} ${render(e.operand)})`;
    case 'between':
      return `(${render(e.expr)} ${e.not ? 'NOT ' : ''}BETWEEN ${render(e.low)} AND ${render(e.high)})`;
    case 'in':
      return `(${render(e.expr)} ${e.not ? 'NOT ' : ''}IN (${(e.list ?? []).map(render).join(', ')}))`;
    case 'like':
      return `(${render(e.expr)} ${e.not ? 'NOT ' : ''}${e.op} ${render(e.pattern)})`;
    case 'isNull':
      return `(${render(e.expr)} IS ${e.not ? 'NOT ' : ''}NULL)`;
    case 'case':
      return `(CASE ${e.whens.map((w) => `WHEN ${render(w.when)} THEN ${render(w.then)}`).join(' ')}${e.else ? ` ELSE ${render(e.else)}` : ''} END)`;
    default:
      throw new Error(`render: ${e.kind}`);
  }
}

/** The expression's value on every row, as SQLite computes it. */
function values(expr: string): SqlValue[][] {
  return sqlite.prepare(`SELECT id, ${expr} FROM t ORDER BY id`).raw().all() as SqlValue[][];
}

/** The parse's reading of `expr`, rendered unambiguous. */
const reading = (expr: string): string => render(whereOf(`SELECT id FROM t WHERE ${expr}`));

describe("parse: operator precedence is SQLite's", () => {
  test.each([
    ['a = 1 OR b = 2 AND c = 3', '((a = 1) OR ((b = 2) AND (c = 3)))'],
    ['a = 1 AND b = 2 OR c = 3', '(((a = 1) AND (b = 2)) OR (c = 3))'],
    ['a OR b AND c OR a AND b', '((a OR (b AND c)) OR (a AND b))'],
    ['(a OR b) AND c', '((a OR b) AND c)'],
    ['a OR NOT b AND c', '(a OR ((NOT b) AND c))'],
    ['NOT a = 1 OR b AND c', '((NOT (a = 1)) OR (b AND c))'],
    ['a BETWEEN 1 AND 2 OR b = 1 AND c BETWEEN 0 AND 1', '((a BETWEEN 1 AND 2) OR ((b = 1) AND (c BETWEEN 0 AND 1)))'],
    [
      'CASE WHEN a OR b AND c THEN 1 ELSE 0 END = 1 OR c',
      '(((CASE WHEN (a OR (b AND c)) THEN 1 ELSE 0 END) = 1) OR c)',
    ],
    ['a = b < c', '(a = (b < c))'],
    ['a * b || c = 12', '((a * (b || c)) = 12)'],
    ['a - b - c = 1 - a * 2', '(((a - b) - c) = (1 - (a * 2)))'],
    ['NOT (a) = 1 AND b', '((NOT (a = 1)) AND b)'],
    ["a LIKE '1%' = b", "((a LIKE '1%') = b)"],
    ['NOT (a OR b) AND c', '((NOT (a OR b)) AND c)'],
  ])('%s reads %s', (expr, expected) => {
    expect(reading(expr)).toBe(expected);
    expect(values(expected)).toEqual(values(expr));
  });

  test.each([
    { database: 'sqlite', grammar: sqliteGrammar },
    { database: 'mysql', grammar: mysqlGrammar },
    { database: 'postgresql', grammar: postgresqlGrammar },
  ])(
    "the $database grammar's tree is re-associated alike (parseQuery falls back to mysql and postgresql)",
    ({ database, grammar }) => {
      const raw = new grammar.Parser().astify('SELECT id FROM t WHERE a = 1 OR b = 2 AND c = 3', { database });
      expect(reassociate(raw)).toMatchObject({ where: { operator: 'OR', right: { operator: 'AND' } } });
    },
  );

  test('HAVING, ON and subqueries are re-associated too', () => {
    const parsed = parseQuery(
      'SELECT x.a FROM t AS x JOIN t AS y ON x.a = y.b OR x.b = 1 AND y.c = 2 GROUP BY x.a HAVING x.a = 1 OR x.a = 2 AND x.a = 0',
      db,
    );
    if (!parsed.ok || parsed.value.query.kind !== 'select')
      throw new Error(parsed.ok ? 'not a select' : parsed.message);
    const q = parsed.value.query;
    expect(q.from?.joins[0].on).toMatchObject({ op: 'OR', right: { op: 'AND' } });
    expect(q.having).toMatchObject({ op: 'OR', right: { op: 'AND' } });
    expect(whereOf('SELECT a FROM t WHERE id IN (SELECT id FROM t WHERE a = 1 OR b = 2 AND c = 3)')).toMatchObject({
      subquery: { where: { op: 'OR', right: { op: 'AND' } } },
    });
  });
});

/**
 * Random expressions in SQLite's grammar, written without the parentheses precedence makes
 * implicit (and some explicit ones): AND, OR, NOT, comparisons (chained too), arithmetic,
 * `||`, BETWEEN ... AND ..., IN, IS [NOT] NULL, LIKE, CASE WHEN ... AND ... THEN ... END.
 */
function randomExpressions(seed: number, count: number): string[] {
  const rand = prng(seed);
  const chance = (p: number) => rand() < p;
  const term = (depth: number): string => {
    if (depth <= 0 || chance(0.5)) return chance(0.6) ? pick(rand, ['a', 'b', 'c']) : String(int(rand, 0, 3));
    const expr = `${term(depth - 1)} ${pick(rand, ['+', '-', '*', '%', '||'])} ${term(depth - 1)}`;
    return chance(0.2) ? `(${expr})` : expr;
  };
  const comparison = () => pick(rand, ['=', '==', '!=', '<>', '<', '<=', '>', '>=']);
  const predicate = (depth: number): string =>
    pick(rand, [
      () => `${term(2)} ${comparison()} ${term(2)}`,
      () => `${term(1)} ${comparison()} ${term(1)} ${comparison()} ${term(1)}`,
      () => `${term(1)} ${chance(0.3) ? 'NOT ' : ''}BETWEEN ${term(1)} AND ${term(1)}`,
      () => `${term(1)} ${chance(0.3) ? 'NOT ' : ''}IN (${term(0)}, ${term(0)})`,
      () => `${pick(rand, ['a', 'b', 'c'])} IS ${chance(0.5) ? 'NOT ' : ''}NULL`,
      () => `${term(1)} LIKE '${int(rand, 0, 2)}%'${chance(0.3) ? ` ${comparison()} ${term(0)}` : ''}`,
      () => `CASE WHEN ${boolean(depth - 1)} THEN ${term(1)} ELSE ${term(1)} END ${comparison()} ${term(0)}`,
      () => pick(rand, ['a', 'b', 'c']),
    ])();
  const boolean = (depth: number): string => {
    if (depth <= 0 || chance(0.3)) return predicate(depth);
    return pick(rand, [
      () => `${boolean(depth - 1)} AND ${boolean(depth - 1)}`,
      () => `${boolean(depth - 1)} OR ${boolean(depth - 1)}`,
      () => `${boolean(depth - 1)} OR ${boolean(depth - 1)} AND ${boolean(depth - 1)}`,
      () => `NOT ${boolean(depth - 1)}`,
      () => `(${boolean(depth - 1)})`,
    ])();
  };
  return Array.from({ length: count }, () => boolean(4));
}

describe('parse: random boolean expressions evaluate as SQLite evaluates them', () => {
  test("300 expressions: the parse, rendered fully parenthesized, gives SQLite's value on every row", () => {
    const mismatches = randomExpressions(9, 300).filter(
      (expr) => JSON.stringify(values(reading(expr))) !== JSON.stringify(values(expr)),
    );
    expect(mismatches).toEqual([]);
  });
});

describe("consumers of the parse: the implicit parentheses are SQLite's", () => {
  const SQL = 'SELECT id FROM t WHERE a = 1 OR b = 2 AND c = 3';
  const WRONG = 'SELECT id FROM t WHERE (a = 1 OR b = 2) AND c = 3';

  test('the two readings differ on this data', () => {
    expect(rows(db, SQL)).not.toEqual(rows(db, WRONG));
  });

  test('SLOT: the decomposed sequence returns the gold rows', async () => {
    const parsed = parseQuery(SQL, db);
    if (!parsed.ok) throw new Error(parsed.message);
    const sequence = decompose(parsed.value, db, 'extended');
    if (!sequence.ok) throw new Error(sequence.message);
    const executor = createDirectExecutor();
    try {
      const outputs = await executeSequence(sequence.value, db, executor, { timeoutMs: 5000, pool: 'extended' });
      const gold = {
        columns: ['id'],
        rows: rows(db, SQL) as SqlValue[][],
        executedSql: SQL,
        ordered: false,
        distinct: false,
      };
      expect(compareWithGold(outputs, gold)).toMatchObject({ ok: true });
    } finally {
      await executor.close();
    }
  });

  test("REST template: the endpoint called with the question's values returns the gold rows", () => {
    const endpoint = synthesizeFromTemplate(instance(SQL), db, 'Test Set');
    if (!endpoint.ok) throw new Error(endpoint.message);
    expect(endpoint.value.spec.parameters.map((p) => p.name)).toEqual(['a', 'b', 'c']);
    expect(callRows(db, endpoint.value)).toEqual(rows(db, SQL));
  });

  test("dedup canonical form: equal only where SQLite's reading is equal", () => {
    const key = (sql: string): string => {
      const parameters = ['a', 'b', 'c'].map((name) => ({
        name,
        type: 'integer' as const,
        description: name,
        required: true,
      }));
      const spec: EndpointSpec = {
        operationId: 'op',
        path: '/v1/x/abc/op',
        summary: 's',
        description: 'd',
        parameters,
        sql,
        response: { description: 'r' },
      };
      return canonicalForm(spec, db).key;
    };
    const implicit = key('SELECT id FROM t WHERE a = :a OR b = :b AND c = :c');
    expect(key('SELECT id FROM t WHERE a = :a OR (b = :b AND c = :c)')).toBe(implicit);
    expect(key('SELECT id FROM t WHERE (a = :a OR b = :b) AND c = :c')).not.toBe(implicit);
  });
});
