import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { DatabaseInfo } from '../../core/model.js';
import { checkEndpointSpec } from '../../generators/rest/format-check.js';
import { ENDPOINT_PATH, OPERATION_ID, type SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import { truncateIdentifier } from '../../generators/rest/naming.js';
import { bindPlaceholders } from '../../runtime/rest/bind.js';
import { argumentTypeProblem, datePatternText, querystringSchema } from '../../runtime/rest/parameters.js';
import { Ajv } from 'ajv';
import { removeTempDirs } from '../sql/fixtures.js';
import { callRows, instance, rows, schoolsDb } from './fixtures.js';

let db: DatabaseInfo;
beforeAll(() => {
  db = schoolsDb();
});
afterAll(removeTempDirs);

function synth(sql: string): SynthesizedEndpoint {
  const outcome = synthesizeFromTemplate(instance(sql), db, 'Test Set');
  if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
  const endpoint = outcome.value;
  expect(checkEndpointSpec(endpoint.spec, db).ok).toBe(true);
  expect(endpoint.spec.operationId).toMatch(OPERATION_ID);
  expect(endpoint.spec.path).toMatch(ENDPOINT_PATH);
  // The call reproduces the question: same rows as the original SQL.
  expect(callRows(db, endpoint)).toEqual(rows(db, sql));
  return endpoint;
}

const params = (e: SynthesizedEndpoint) => e.spec.parameters.map((p) => [p.name, p.type, p.example]);

describe('synthesizeFromTemplate', () => {
  test('a value compared inside a subquery over another table is named and described with that table', () => {
    const e = synth('SELECT name FROM school WHERE county_id IN (SELECT id FROM county WHERE population > 950000)');
    expect(params(e)).toEqual([['min_county_population', 'integer', 950000]]);
    expect(e.spec.parameters[0].description).toBe(
      'Lower bound (exclusive) of the number of inhabitants of county; column county.population',
    );
    // A column whose name already says its table is not qualified twice; the outer table's never is.
    expect(
      params(synth("SELECT name FROM school WHERE county_id = (SELECT id FROM county WHERE county_name = 'Kern')")),
    ).toEqual([['county_name', 'string', 'Kern']]);
  });

  test('a cryptic column returned is named by its short description, as its response field is', () => {
    expect(synth("SELECT A2 FROM school WHERE code = '100'").spec.operationId).toBe('getCityNameByCode');
  });

  test('an aggregate of a product is named for the product, not its first column', () => {
    expect(synth('SELECT SUM(enrollment * rate) FROM school WHERE county_id = 1').spec.operationId).toMatch(
      /^getTotalEnrollmentTimesRateBy/,
    );
  });

  test('equality on a text column: named, typed, described, with the question value', () => {
    const e = synth(
      "SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = 'Alameda'",
    );
    expect(e.spec.sql).toBe(
      'SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = :county_name',
    );
    expect(params(e)).toEqual([['county_name', 'string', 'Alameda']]);
    expect(e.spec.parameters[0].description).toBe('Value of name of the county to match; column county.county_name');
    expect(e.call.arguments).toEqual({ county_name: 'Alameda' });
    expect(e.spec.operationId).toBe('getNameByCountyName');
    expect(e.spec.path).toBe('/v1/test-set/schools/get-name-by-county-name');
    expect(e.call).toMatchObject({ name: e.spec.operationId, path: e.spec.path });
    expect(e.spec.summary).not.toContain('q?');
  });

  test("a column inside a subquery is the subquery's table's, as SQLite scopes it; a correlated one the outer table's", () => {
    // Both tables have an id: the scope-blind reading took the outer school's.
    const inner = synth('SELECT name FROM school WHERE county_id IN (SELECT id FROM county WHERE id = 1)');
    expect(inner.spec.parameters[0].description).toContain('column county.id');
    // county has no enrollment: the reference is the outer school's (a correlated subquery).
    const correlated = synth(
      'SELECT name FROM school AS s WHERE EXISTS (SELECT 1 FROM county AS c WHERE c.id = s.county_id AND enrollment > 100)',
    );
    expect(correlated.spec.parameters[0].description).toContain('column school.enrollment');
    // A qualifier names the table of its own scope, even where an outer alias is the same.
    const shadowed = synth(
      'SELECT T1.name FROM school AS T1 WHERE T1.county_id IN (SELECT T1.id FROM county AS T1 WHERE T1.id = 2)',
    );
    expect(shadowed.spec.parameters[0].description).toContain('column county.id');
  });

  test("a window's rank or row number stays in the SQL: it is never a parameter", () => {
    const ranked = synth(
      'SELECT name FROM (SELECT name, county_id, RANK() OVER (PARTITION BY county_id ORDER BY enrollment DESC) AS rnk FROM school) WHERE rnk <= 1 AND county_id = 2',
    );
    expect(params(ranked)).toEqual([['county_id', 'integer', 2]]);
    expect(ranked.spec.sql).toContain('rnk <= 1');
  });

  test('range comparisons name bounds min_/max_ and dedupe with suffixes', () => {
    const e = synth(
      'SELECT name FROM school WHERE enrollment > 100 AND enrollment <= 1200 AND rate >= 0.3 AND rate < 0.6',
    );
    expect(params(e)).toEqual([
      ['min_enrollment', 'integer', 100],
      ['max_enrollment', 'integer', 1200],
      ['min_rate', 'number', 0.3],
      ['max_rate', 'number', 0.6],
    ]);
    const twice = synth("SELECT name FROM school WHERE name = 'Oak High' OR name = 'Elm Academy'");
    expect(params(twice).map((p) => p[0])).toEqual(['name', 'name_2']);
  });

  test('IN lists, BETWEEN bounds, LIKE patterns, negative numbers, mirrored comparisons', () => {
    expect(params(synth('SELECT name FROM school WHERE county_id IN (1, 3)'))).toEqual([
      ['county_id', 'integer', 1],
      ['county_id_2', 'integer', 3],
    ]);
    expect(params(synth('SELECT name FROM school WHERE enrollment BETWEEN 100 AND 700'))).toEqual([
      ['min_enrollment', 'integer', 100],
      ['max_enrollment', 'integer', 700],
    ]);
    expect(params(synth("SELECT name FROM school WHERE name LIKE '%High%'"))).toEqual([
      ['name_pattern', 'string', '%High%'],
    ]);
    expect(params(synth('SELECT name FROM school WHERE rate > -1'))).toEqual([['min_rate', 'number', -1]]);
    expect(params(synth('SELECT name FROM school WHERE 500 < enrollment'))).toEqual([
      ['min_enrollment', 'integer', 500],
    ]);
  });

  test('HAVING aggregates, ON literals and functions of columns', () => {
    expect(params(synth('SELECT county_id FROM school GROUP BY county_id HAVING COUNT(id) > 1'))).toEqual([
      ['min_count_id', 'integer', 1],
    ]);
    expect(
      params(
        synth("SELECT T1.county_name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id AND T2.code = '100'"),
      ),
    ).toEqual([['code', 'string', '100']]);
    expect(params(synth("SELECT name FROM school WHERE STRFTIME('%Y', opened) = '2001'"))).toEqual([
      ['opened_year', 'string', '2001'],
    ]);
  });

  test('types follow the column: text columns take strings, integer columns numbers', () => {
    expect(params(synth('SELECT name FROM school WHERE code = 300'))).toEqual([['code', 'string', '300']]);
    expect(params(synth("SELECT name FROM school WHERE enrollment = '650'"))).toEqual([['enrollment', 'integer', 650]]);
    expect(params(synth("SELECT name FROM school WHERE opened > '2000-01-01'"))).toEqual([
      ['min_opened', 'string', '2000-01-01'],
    ]);
    expect(params(synth('SELECT name FROM school WHERE rate < 1'))).toEqual([['max_rate', 'number', 1]]);
    expect(params(synth("SELECT name FROM school WHERE rate = '0'"))).toEqual([['rate', 'number', 0]]);
    // A literal no type of its column fits stays in the SQL.
    expect(synth("SELECT name FROM school WHERE enrollment = 'n/a'").spec.parameters).toEqual([]);
  });

  test('a text parameter compared with dates declares their form, and the server and the tool edge enforce it', () => {
    const e = synth("SELECT name FROM school WHERE opened > '2000-01-01'");
    expect(e.spec.parameters[0]).toMatchObject({ name: 'min_opened', format: 'date' });
    const validate = new Ajv({ coerceTypes: true }).compile(
      querystringSchema(e.spec.parameters, { maxStringLength: 100 }),
    );
    expect(validate({ min_opened: '2019-09-01' })).toBe(true);
    for (const bad of ['2019-09-01_zz', '2019-13-01', "2019-09-01' OR 1=1"]) {
      expect(validate({ min_opened: bad })).toBe(false);
      expect(argumentTypeProblem('min_opened', bad, e.spec.parameters[0])).toBe(
        `argument 'min_opened' must be a date (YYYY-MM-DD), not ${JSON.stringify(bad)}`,
      );
    }
    expect(datePatternText(String(validate.errors?.[0]?.params.pattern))).toBe('a date (YYYY-MM-DD)');
    // A pattern, a part of the date, or text that is no date declares no form.
    expect(synth("SELECT name FROM school WHERE opened LIKE '2000-01%'").spec.parameters[0].format).toBeUndefined();
    expect(
      synth("SELECT name FROM school WHERE STRFTIME('%Y', opened) = '2001'").spec.parameters[0].format,
    ).toBeUndefined();
    expect(synth("SELECT name FROM school WHERE code = '2000-01-01x'").spec.parameters[0].format).toBeUndefined();
  });

  test('a parameter compared with a REAL column takes fractions, as served', () => {
    const e = synth('SELECT name FROM school WHERE rate < 1 ORDER BY name');
    const validate = new Ajv({ coerceTypes: true }).compile(
      querystringSchema(e.spec.parameters, { maxStringLength: 100 }),
    );
    const query: Record<string, unknown> = { max_rate: '0.45' };
    expect(validate(query)).toBe(true);
    expect(query).toEqual({ max_rate: 0.45 });
    const bound = bindPlaceholders(e.spec.sql, { max_rate: 0.45 }, e.spec.parameters);
    expect(rows(db, bound.sql, bound.params)).toEqual([['Cedar Middle'], ['Elm Academy'], ['Oak High']]);
    // An LLM proposal declaring it integer would refuse those values: the check says so.
    const integral = { ...e.spec, parameters: e.spec.parameters.map((p) => ({ ...p, type: 'integer' as const })) };
    expect(checkEndpointSpec(integral, db)).toMatchObject({ ok: false, category: 'format:parameter_type' });
  });

  test('cryptic column names take their short description', () => {
    expect(params(synth("SELECT name FROM school WHERE A2 = 'Fresno'"))).toEqual([['city_name', 'string', 'Fresno']]);
  });

  test('select-list literals, LIMIT and strings that look like SQL stay untouched', () => {
    const e = synth(
      "SELECT name, CASE WHEN rate > 0.5 THEN 'high' ELSE 'low' END FROM school WHERE name = 'It''s: a :test school' OR name <> 'x WHERE y = 1' ORDER BY rate DESC LIMIT 2",
    );
    expect(e.spec.sql).toBe(
      "SELECT name, CASE WHEN rate > 0.5 THEN 'high' ELSE 'low' END FROM school WHERE name = :name OR name <> :excluded_name ORDER BY rate DESC LIMIT 2",
    );
    expect(e.call.arguments).toEqual({ name: "It's: a :test school", excluded_name: 'x WHERE y = 1' });
  });

  test('double-quoted strings are resolved as SQLite would before parametrizing', () => {
    const e = synthesizeFromTemplate(instance('SELECT "name" FROM school WHERE name = "Oak High"'), db, 'test');
    expect(e.ok && e.value.spec.sql).toBe('SELECT "name" FROM school WHERE name = :name');
    expect(e.ok && e.value.call.arguments).toEqual({ name: 'Oak High' });
  });

  test('no literal to vary: an endpoint without parameters', () => {
    const e = synth('SELECT COUNT(*) FROM school');
    expect(e.spec.parameters).toEqual([]);
    expect(e.spec.operationId).toBe('getCountSchool');
  });

  test('a recursive WITH: where it starts and what the main query keeps are parameters, its recursive SELECT keeps its values', () => {
    // Kern, then each county whose id is one less, while it has more than 950000 inhabitants.
    const e = synth(
      "WITH RECURSIVE down(id) AS (SELECT id FROM county WHERE county_name = 'Kern' UNION ALL SELECT c.id FROM county AS c JOIN down ON c.id = down.id - 1 WHERE c.population > 950000) SELECT name FROM school WHERE county_id IN (SELECT id FROM down) AND enrollment > 100",
    );
    expect(params(e)).toEqual([
      ['county_name', 'string', 'Kern'],
      ['min_enrollment', 'integer', 100],
    ]);
    expect(e.spec.sql).toContain('WHERE county_name = :county_name UNION ALL');
    expect(e.spec.sql).toContain('down.id - 1 WHERE c.population > 950000)');
  });

  test('unparseable SQL is synth_failed', () => {
    const outcome = synthesizeFromTemplate(instance('SELECT nope FROM school'), db, 'test');
    expect(outcome).toMatchObject({ ok: false, category: 'synth_failed' });
  });
});

describe('an operationId past 64 characters', () => {
  test('is cut before a connective, naming whole phrases; else at a word boundary', () => {
    // Seen on BIRD dev: a plain 64-character cut left `…AndMaxBirth` and `…MinDatePartAnd`.
    expect(truncateIdentifier('getClientIdAndAccountIdByRegionAndMinBirthDateYearAndMaxBirthDateYear')).toBe(
      'getClientIdAndAccountIdByRegionAndMinBirthDateYear',
    );
    expect(truncateIdentifier('getRatioOverallRatingByPlayerFifaApiPlayerNameAndMinDatePartAndMaxDatePart')).toBe(
      'getRatioOverallRatingByPlayerFifaApiPlayerNameAndMinDatePart',
    );
    for (const id of [
      'getCountCdsCodeByCharterFundingTypeAndCountyNameAndMaxNumTstTakrAndMinEnrollment',
      `get${'Very'.repeat(20)}Long`,
    ]) {
      const cut = truncateIdentifier(id);
      expect(cut.length).toBeLessThanOrEqual(64);
      expect(id.startsWith(cut)).toBe(true);
      expect(cut).not.toMatch(/(And|By|With|Of|For|In)$/);
    }
    expect(truncateIdentifier('getNameById')).toBe('getNameById');
  });

  test('one word past half the limit is cut with a stable hash of the whole, so two such names stay apart', () => {
    const one = truncateIdentifier(`get${'x'.repeat(80)}A`);
    const two = truncateIdentifier(`get${'x'.repeat(80)}B`);
    expect(one).toMatch(/^getx{52}_[0-9a-f]{8}$/);
    expect(one).toHaveLength(64);
    expect(two).not.toBe(one);
    expect(truncateIdentifier(`get${'x'.repeat(80)}A`)).toBe(one);
  });
});
