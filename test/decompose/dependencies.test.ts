import type { DatabaseInfo, DataKey } from '../../core/model.js';
import type { SelectQuery } from '../../generators/sql/ast.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import { decompose } from '../../generators/slot/decompose.js';
import { dataKeyCandidates, determinedBy, withDataKeys } from '../../generators/slot/dependencies.js';
import { SCHEMA } from './schema.js';

/**
 * Functional dependencies with keys the data proves (`TableInfo.dataKeys`): a data key
 * determines its table's columns as the primary key does, without the equality a declared
 * UNIQUE needs (it holds no NULL); `dataKeyCandidates` names the columns worth proving.
 * Schema: school (id PRIMARY KEY, name, City, …), score (school_id, subject, avg, takers), no other key.
 */

function parsed(sql: string, db: DatabaseInfo = SCHEMA) {
  const outcome = parseQuery(sql, db);
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.value;
}

const verdict = (sql: string, keys: DataKey[] = []) => {
  const outcome = decompose(parsed(sql), withDataKeys(SCHEMA, keys), 'extended');
  return outcome.ok ? 'ok' : outcome.category;
};

const key = (table: string, column: string): DataKey => ({ table, columns: [column] });

test('a data key determines its table, as the primary key does', () => {
  const sql = 'SELECT name, City, COUNT(*) FROM school GROUP BY name';
  const q = parsed(sql).query as SelectQuery;
  const city = { kind: 'column', source: 'school', table: 'school', column: 'City', depth: 0 } as const;
  expect(determinedBy(q.groupBy, q, SCHEMA)(city)).toBe(false);
  expect(determinedBy(q.groupBy, q, withDataKeys(SCHEMA, [key('school', 'name')]))(city)).toBe(true);
  expect(verdict(sql)).toBe('unsupported:bare_column');
  expect(verdict(sql, [key('school', 'name')])).toBe('ok');
  // Another column's proof does not help.
  expect(verdict(sql, [key('school', 'founded')])).toBe('unsupported:bare_column');
});

test('a data key reached through a join equality determines the joined table', () => {
  const sql = 'SELECT s.name, c.subject, COUNT(*) FROM school AS s JOIN score AS c ON c.school_id = s.id GROUP BY s.id';
  expect(verdict(sql)).toBe('unsupported:bare_column');
  expect(verdict(sql, [key('score', 'school_id')])).toBe('ok');
});

test('a data key equal to a literal makes its table constant (MIN reads a bare column)', () => {
  const sql = "SELECT City, SUM(students) FROM school WHERE name = 'Alder'";
  expect(verdict(sql)).toBe('unsupported:bare_column');
  expect(verdict(sql, [key('school', 'name')])).toBe('ok');
});

test('withDataKeys leaves the schema it is given as it is', () => {
  const db = withDataKeys(SCHEMA, [key('school', 'name')]);
  expect(db.tables.find((t) => t.name === 'school')?.dataKeys).toEqual([['name']]);
  expect(SCHEMA.tables.some((t) => t.dataKeys)).toBe(false);
  expect(db.tables.find((t) => t.name === 'score')).toBe(SCHEMA.tables.find((t) => t.name === 'score'));
});

describe('dataKeyCandidates', () => {
  const candidates = (sql: string, keys: DataKey[] = []) =>
    dataKeyCandidates(parsed(sql).query, withDataKeys(SCHEMA, keys));

  test('the group keys of a table they do not determine', () => {
    expect(candidates('SELECT name, City, COUNT(*) FROM school GROUP BY name')).toEqual([key('school', 'name')]);
  });

  test('a column equal to a literal beside aggregates: a key, or a selection key of that value', () => {
    expect(candidates("SELECT City, SUM(students) FROM school WHERE name = 'Alder'")).toEqual([
      key('school', 'name'),
      { table: 'school', columns: ['name'], values: ['Alder'] },
    ]);
  });

  test('no selection key where another SELECT may read the table without the literal', () => {
    const sql = "SELECT City, SUM(students) FROM school WHERE name = 'Alder' AND id IN (SELECT school_id FROM score)";
    expect(candidates(sql).filter((k) => k.values)).toEqual([]);
  });

  test('no table already determined, no column nothing determines', () => {
    // s.id determines school; c.school_id is the one column of score it determines.
    const sql =
      'SELECT s.name, c.subject, COUNT(*) FROM school AS s JOIN score AS c ON c.school_id = s.id GROUP BY s.id';
    expect(candidates(sql)).toEqual([key('score', 'school_id')]);
  });

  test('a proof makes more columns candidates: asked again with it', () => {
    const sql =
      'SELECT c.subject, s.City, COUNT(*) FROM score AS c JOIN school AS s ON s.id = c.school_id GROUP BY s.name';
    expect(candidates(sql)).toEqual([key('school', 'name')]);
    // school.name proven: school is determined, s.id = c.school_id too.
    expect(candidates(sql, [key('school', 'name')])).toEqual([key('score', 'school_id')]);
  });

  test('in a nested query too; none in a query that neither groups nor aggregates', () => {
    expect(
      candidates('SELECT name FROM school WHERE City IN (SELECT s.City FROM school AS s GROUP BY s.name)'),
    ).toEqual([key('school', 'name')]);
    expect(candidates("SELECT City FROM school WHERE name = 'Alder'")).toEqual([]);
  });
});
