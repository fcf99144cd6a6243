import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { DatabaseInfo } from '../../core/model.js';
import { checkEndpointSpec } from '../../generators/rest/format-check.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { removeTempDirs } from '../sql/fixtures.js';
import { schoolsDb } from './fixtures.js';

let db: DatabaseInfo;
beforeAll(() => {
  db = schoolsDb();
});
afterAll(removeTempDirs);

const good: EndpointSpec = {
  operationId: 'getSchoolsByCountyName',
  path: '/v1/test/schools/get-schools-by-county-name',
  summary: 'Schools of a county',
  description: 'Names of the schools of a county with at least some students.',
  parameters: [
    { name: 'county_name', type: 'string', description: 'County to match', required: true, example: 'Alameda' },
    { name: 'min_enrollment', type: 'integer', description: 'Lower bound of enrollment', required: true, example: 100 },
  ],
  sql: 'SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = :county_name AND T2.enrollment > :min_enrollment',
  response: { description: 'School names' },
};

const check = (patch: Partial<EndpointSpec>) => checkEndpointSpec({ ...good, ...patch }, db);
const withSql = (sql: string, parameters = good.parameters) => check({ sql, parameters });

describe('checkEndpointSpec', () => {
  test('accepts a well-formed spec (and a trailing semicolon, comments, placeholders in strings)', () => {
    expect(checkEndpointSpec(good, db)).toMatchObject({ ok: true });
    expect(withSql(`${good.sql};`).ok).toBe(true);
    expect(withSql(`${good.sql} AND T2.name <> ':not_a_param' -- :nor_this`).ok).toBe(true);
    // A non-recursive WITH table is a derived table.
    expect(
      withSql(
        'WITH big AS (SELECT * FROM school WHERE enrollment > :min_enrollment) SELECT T2.name FROM county AS T1 JOIN big AS T2 ON T1.id = T2.county_id WHERE T1.county_name = :county_name',
      ).ok,
    ).toBe(true);
  });

  test('format:schema — shape, names, lengths, duplicates, foreign path', () => {
    expect(check({ operationId: 'x'.repeat(65) }).category).toBe('format:schema');
    expect(check({ operationId: 'get schools' }).category).toBe('format:schema');
    expect(check({ path: '/v1/test/other_db/x' }).category).toBe('format:schema');
    expect(checkEndpointSpec({ ...good, extra: 1 } as unknown as EndpointSpec, db).category).toBe('format:schema');
    expect(checkEndpointSpec(null as unknown as EndpointSpec, db).category).toBe('format:schema');
    expect(check({ parameters: [good.parameters[0], good.parameters[0]] }).category).toBe('format:schema');
    expect(check({ parameters: [{ ...good.parameters[0], name: 'County' }, good.parameters[1]] }).category).toBe(
      'format:schema',
    );
  });

  test.each([
    'DROP TABLE school',
    'UPDATE school SET name = :county_name WHERE enrollment > :min_enrollment',
    'INSERT INTO school (name) VALUES (:county_name)',
    "ATTACH DATABASE '/tmp/x.db' AS x",
    'PRAGMA table_info(school)',
    'DELETE FROM school',
    `${good.sql}; DROP TABLE school`,
    `${good.sql}; SELECT 1`,
    `SELECT name FROM school WHERE name = :county_name AND enrollment > :min_enrollment UNION SELECT load_extension('x')`,
    "SELECT name FROM school WHERE name = 'unterminated",
    'SELECT name FROM school WHERE name = :county_name AND enrollment > :min_enrollment AND',
    'WITH x AS (SELECT 1) DELETE FROM school WHERE name = :county_name AND enrollment > :min_enrollment',
    'garbage ((( :county_name :min_enrollment',
  ])('format:not_select — %s', (sql) => {
    expect(withSql(sql).category).toBe('format:not_select');
  });

  // A WITH clause is allowed before the SELECT; anything but a read-only query after it,
  // or in it, is refused by the statement check itself.
  test.each([
    ['WITH x AS (SELECT 1) DELETE FROM school', 'must be a SELECT, not DELETE'],
    ['WITH x AS (SELECT 1) INSERT INTO school (name) SELECT * FROM x', 'must be a SELECT, not INSERT'],
    ['WITH x AS (SELECT 1) UPDATE school SET name = :county_name', 'must be a SELECT, not UPDATE'],
    ['WITH x AS (SELECT 1) SELECT * FROM x; DELETE FROM school', 'expected exactly one statement'],
    ['WITH x AS (SELECT 1) SELECT * FROM x WHERE (DELETE)', 'DELETE is not allowed'],
    ['WITH x AS (SELECT 1) REPLACE INTO school (name) VALUES (:county_name)', 'must be a SELECT, not REPLACE'],
    ['WITH x AS (SELECT 1)', 'must be a SELECT, not nothing'],
    ['WITH x AS (SELECT 1), y AS (SELECT 2) VALUES (:county_name)', 'must be a SELECT, not VALUES'],
    ['WITH x AS SELECT 1 SELECT * FROM x', 'a malformed WITH clause'],
    ['WITH x AS (SELECT 1 SELECT * FROM x', 'a malformed WITH clause'],
    ['WITH x(a AS (SELECT 1) SELECT * FROM x', 'a malformed WITH clause'],
    ['WITH x AS (REPLACE INTO school (name) VALUES (1)) SELECT * FROM x', 'a malformed WITH clause'],
    ['WITH RECURSIVE SELECT 1', 'a malformed WITH clause'],
    ['WITH x AS (SELECT 1); DROP TABLE school', 'expected exactly one statement'],
    ["WITH x AS (SELECT load_extension('x')) SELECT * FROM x", 'function LOAD_EXTENSION is not allowed'],
    ['WITH x AS (SELECT 1) SELECT * FROM x WHERE 1 IN (SELECT 1 FROM pragma_table_info(1)) OR (PRAGMA)', 'PRAGMA'],
  ])('format:not_select — %s', (sql, why) => {
    expect(withSql(sql)).toMatchObject({ category: 'format:not_select', message: expect.stringContaining(why) });
  });

  test.each([
    `WITH big AS (SELECT id FROM school WHERE enrollment > :min_enrollment)
     SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id
     WHERE T1.county_name = :county_name AND T2.id IN (SELECT id FROM big)`,
    `with recursive n(i) AS (SELECT :min_enrollment UNION ALL SELECT i + 1 FROM n WHERE i < 10)
     SELECT name FROM school WHERE county_id IN (SELECT i FROM n) AND name <> :county_name`,
    `WITH a AS MATERIALIZED (SELECT id FROM county WHERE county_name = :county_name),
     [b] (id) AS NOT MATERIALIZED (WITH c AS (SELECT 1) VALUES (:min_enrollment))
     SELECT name FROM school WHERE county_id IN (SELECT id FROM a) AND id IN (SELECT id FROM b)`,
  ])('a read-only WITH … SELECT passes the statement check — %s', (sql) => {
    const verdict = withSql(sql);
    // Until the normalizer parses WITH, the spec fails later, at parsing; never at the statement check.
    if (!verdict.ok) expect(verdict).toMatchObject({ category: 'format:not_select', message: /^not a valid SELECT/ });
  });

  test('format:recursive_parameter: a placeholder in a recursive SELECT, not in the initial one nor the main query', () => {
    const recursive = (initial: string, step: string) =>
      withSql(
        `WITH RECURSIVE x(n) AS (SELECT ${initial} UNION ALL SELECT n + 1 FROM x WHERE n < ${step}) SELECT name FROM school, x WHERE name = :county_name AND n = 3`,
      );
    expect(recursive('1', ':min_enrollment')).toMatchObject({
      ok: false,
      category: 'format:recursive_parameter',
      message: expect.stringContaining(':min_enrollment is in the recursive SELECT'),
    });
    expect(recursive(':min_enrollment', '5')).toMatchObject({ ok: true });
    // Without the keyword, as SQLite reads it.
    expect(
      withSql(
        'WITH x(n) AS (SELECT 1 UNION SELECT n + 1 FROM x WHERE n < :min_enrollment) SELECT name FROM school, x WHERE name = :county_name',
      ).category,
    ).toBe('format:recursive_parameter');
  });

  test('injection-looking strings are data, not statements', () => {
    expect(withSql(`${good.sql} AND T2.name <> '; DROP TABLE school; --'`).ok).toBe(true);
  });

  test('format:undeclared_placeholder and format:unused_parameter', () => {
    expect(withSql(good.sql.replace(':min_enrollment', ':max_enrollment')).category).toBe(
      'format:undeclared_placeholder',
    );
    expect(withSql(good.sql.replace(':min_enrollment', '?')).category).toBe('format:undeclared_placeholder');
    expect(withSql(good.sql.replace(':min_enrollment', '@min_enrollment')).category).toBe(
      'format:undeclared_placeholder',
    );
    expect(withSql(good.sql.replace(':min_enrollment', '100')).category).toBe('format:unused_parameter');
    // A placeholder inside a string does not count as a use.
    expect(withSql(good.sql.replace(':min_enrollment', "':min_enrollment'")).category).toBe('format:unused_parameter');
  });

  test('format:unknown_column', () => {
    expect(withSql(good.sql.replace('T2.enrollment', 'T2.students')).category).toBe('format:unknown_column');
    expect(withSql(good.sql.replace('school', 'schools')).category).toBe('format:unknown_column');
    expect(withSql(good.sql.replace(':county_name', ':county_name AND T2.name = "Oak High"')).category).toBe(
      'format:unknown_column',
    );
  });

  test('format:parameter_type — types against columns, LIKE patterns and examples', () => {
    const [name, min] = good.parameters;
    expect(check({ parameters: [{ ...name, type: 'integer', example: 1 }, min] }).category).toBe(
      'format:parameter_type',
    );
    expect(check({ parameters: [name, { ...min, type: 'string', example: '100' }] }).category).toBe(
      'format:parameter_type',
    );
    expect(check({ parameters: [name, { ...min, example: 1.5 }] }).category).toBe('format:parameter_type');
    expect(
      check({
        sql: 'SELECT name FROM school WHERE name LIKE :p',
        parameters: [{ name: 'p', type: 'integer', description: 'd', required: true }],
      }).category,
    ).toBe('format:parameter_type');
    // DATE (NUMERIC affinity) takes strings or numbers.
    expect(
      check({
        sql: 'SELECT name FROM school WHERE opened > :d',
        parameters: [{ name: 'd', type: 'string', description: 'd', required: true }],
      }).ok,
    ).toBe(true);
  });
});
