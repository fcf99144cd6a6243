import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import type { DatabaseInfo, ResultSet } from '../../core/model.js';
import { describeResponse } from '../../generators/rest/response-fields.js';
import type { ResponseField } from '../../runtime/rest/spec.js';
import { removeTempDirs } from '../sql/fixtures.js';
import { schoolsDb } from './fixtures.js';

/** Response fields and shapes from SQL, a schema and the rows a trial run saw. */

let db: DatabaseInfo;
beforeAll(() => {
  db = schoolsDb();
});
afterAll(removeTempDirs);

function run(sql: string): ResultSet {
  const connection = new Database(db.path, { readonly: true });
  try {
    const statement = connection.prepare(sql).raw(true);
    return { columns: statement.columns().map((c) => c.name), rows: statement.all() as ResultSet['rows'] };
  } finally {
    connection.close();
  }
}

const describe_ = (sql: string) => describeResponse({ sql }, db, run(sql));
const names = (sql: string) => describe_(sql).fields.map((f) => f.name);
const field = (sql: string, i = 0): ResponseField => describe_(sql).fields[i];

describe('field names', () => {
  test('columns by their names; aliases as given, in snake_case', () => {
    expect(names('SELECT name, enrollment AS TotalStudents FROM school')).toEqual(['name', 'total_students']);
  });

  test('a cryptic column is named by its short description', () => {
    expect(names('SELECT A2 FROM school')).toEqual(['city_name']);
  });

  test('aggregates say what they compute: account_count, not COUNT(T2.account_id)', () => {
    expect(
      names(
        'SELECT COUNT(T2.county_id), AVG(T2.enrollment), MAX(rate), SUM(T2.enrollment), COUNT(DISTINCT T2.name) FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id',
      ),
    ).toEqual(['county_count', 'average_enrollment', 'max_rate', 'total_enrollment', 'distinct_name_count']);
  });

  test('COUNT(*) and COUNT(id) count the rows of their table', () => {
    expect(names('SELECT COUNT(*) FROM school')).toEqual(['school_count']);
    expect(names('SELECT COUNT(id) FROM county')).toEqual(['county_count']);
  });

  test('a percentage of a condition is named for the condition column; a summed condition is a count', () => {
    expect(
      names(
        'SELECT CAST(SUM(CASE WHEN county_id = 1 THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(id), SUM(IIF(rate > 0.4, 1, 0)) FROM school',
      ),
    ).toEqual(['county_percentage', 'rate_count']);
    expect(names("SELECT SUM(code = '100'), SUM(rate > 0.4) FROM school")).toEqual(['code_count', 'rate_count']);
  });

  test('expressions: ratio, difference, a date part', () => {
    expect(names("SELECT enrollment / rate, enrollment - 100, STRFTIME('%Y', opened) FROM school")).toEqual([
      'enrollment_ratio',
      'enrollment_difference',
      'opened_year',
    ]);
  });

  test('an aggregate of arithmetic is of what it computes: a product of columns, a difference of dates in days', () => {
    expect(
      names(
        "SELECT SUM(enrollment * rate), AVG(JULIANDAY('2030-01-01') - JULIANDAY(opened)), AVG(JULIANDAY(opened) - JULIANDAY('2000-01-01')), SUM(enrollment - 1) FROM school",
      ),
    ).toEqual([
      'total_enrollment_times_rate',
      'average_opened_days',
      'average_opened_days_2',
      'total_enrollment_difference',
    ]);
  });

  test('two columns of one name are qualified by their tables', () => {
    expect(names('SELECT T1.id, T2.id FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id')).toEqual([
      'county_id',
      'school_id',
    ]);
  });

  test('names stay distinct when nothing else tells them apart', () => {
    expect(names('SELECT name, name FROM school')).toEqual(['school_name', 'school_name_2']);
  });
});

describe('shape', () => {
  test('an aggregate without GROUP BY is one object; with LIMIT 1 one object or null; otherwise a list', () => {
    expect(describe_('SELECT COUNT(*) FROM school WHERE rate > 0').shape).toBe('object');
    expect(describe_('SELECT name FROM school ORDER BY rate DESC LIMIT 1').shape).toBe('object_or_null');
    expect(describe_('SELECT county_id, COUNT(*) FROM school GROUP BY county_id').shape).toBe('list');
    expect(describe_('SELECT name FROM school WHERE rate = (SELECT MAX(rate) FROM school)').shape).toBe('list');
    expect(describe_('SELECT name FROM school LIMIT 3').shape).toBe('list');
  });

  test('a LIMIT given as a parameter is a list whatever the value seen', () => {
    const sql = 'SELECT name FROM school ORDER BY rate LIMIT :n';
    expect(describeResponse({ sql }, db, run(sql.replace(':n', '1'))).shape).toBe('list');
  });

  test('a compound query is a list', () => {
    expect(describe_('SELECT name FROM school UNION SELECT county_name FROM county').shape).toBe('list');
  });
});

describe('types and nullability', () => {
  test('declared types; COUNT is a non-null integer; AVG a nullable number', () => {
    expect(field('SELECT name FROM school')).toMatchObject({ types: ['string'], nullable: true });
    expect(field('SELECT COUNT(*) FROM school')).toMatchObject({ types: ['integer'], nullable: false });
    expect(field('SELECT AVG(enrollment) FROM school')).toMatchObject({ nullable: true });
    expect(field('SELECT AVG(enrollment) FROM school').types).toContain('number');
  });

  test('the rowid is never null; a column on the outer side of a LEFT JOIN may be', () => {
    expect(field('SELECT id FROM school').nullable).toBe(false);
    expect(field('SELECT T2.id FROM county AS T1 LEFT JOIN school AS T2 ON T1.id = T2.county_id').nullable).toBe(true);
  });

  test('a value of another type than declared is added to the field (SQLite is dynamically typed)', () => {
    // opened is declared DATE (numeric affinity) and holds text: both are the field's types.
    expect(field('SELECT opened FROM school').types).toEqual(['number', 'string']);
    expect(field('SELECT enrollment FROM school').types).toEqual(['integer']);
    expect(field('SELECT NULLIF(enrollment, 80) FROM school').nullable).toBe(true);
  });

  test('descriptions come from the column descriptions', () => {
    expect(field('SELECT enrollment FROM school').description).toBe('Number of enrolled students of school');
    expect(describe_('SELECT COUNT(*) FROM school').description).toMatch(/^One object, with school_count \(/);
  });
});

test('SQL that does not parse still gets fields, named after the columns SQLite reports', () => {
  const observed: ResultSet = { columns: ['Weird Name', 'x'], rows: [[1, 'a']] };
  const response = describeResponse({ sql: 'SELECT nonsense(' }, db, observed);
  expect(response.fields.map((f) => f.name)).toEqual(['weird_name', 'x']);
  expect(response.shape).toBe('list');
});

test("a compound query's column is described with every branch's table, each resolved in its own scope", () => {
  expect(field("SELECT name FROM school WHERE code = '100' UNION SELECT county_name FROM county").description).toBe(
    'School name of school or county',
  );
  expect(field('SELECT name FROM school').description).toBe('School name of school');
});

test('a sum of a column described as a total says sum, not "total of the total"', () => {
  const totals = {
    ...db,
    tables: db.tables.map((t) => ({
      ...t,
      columns: t.columns.map((c) =>
        c.name === 'enrollment' ? { ...c, description: 'The total number of students' } : c,
      ),
    })),
  };
  const sql = 'SELECT SUM(enrollment) FROM school';
  expect(describeResponse({ sql }, totals, run(sql)).fields[0].description).toBe('Sum of the total number of students');
});
