import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { DatabaseInfo } from '../../core/model.js';
import { dedupEndpoints } from '../../generators/rest/dedup.js';
import { operationSlug } from '../../generators/rest/naming.js';
import type { ParameterSpec, SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { removeTempDirs } from '../sql/fixtures.js';
import { schoolsDb } from './fixtures.js';

let db: DatabaseInfo;
beforeAll(() => {
  db = schoolsDb();
});
afterAll(removeTempDirs);

const param = (name: string, type: ParameterSpec['type'] = 'string'): ParameterSpec => ({
  name,
  type,
  description: name,
  required: true,
});

function endpoint(
  operationId: string,
  sql: string,
  args: Record<string, string | number>,
  slugText = operationId.toLowerCase(),
): SynthesizedEndpoint {
  const parameters = Object.entries(args).map(([name, value]) =>
    param(name, typeof value === 'number' ? 'integer' : 'string'),
  );
  const path = `/v1/test/schools/${slugText}`;
  return {
    spec: { operationId, path, summary: 's', description: 'd', parameters, sql, response: { description: 'r' } },
    call: { name: operationId, path, arguments: args },
  };
}

const BASE =
  'SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = :county_name AND T2.enrollment > :min_enrollment';

describe('dedupEndpoints', () => {
  test('merges parameter renames, alias, whitespace, keyword case and AND-order variants; rewrites calls', () => {
    const variants = [
      endpoint('getSchools', BASE, { county_name: 'Alameda', min_enrollment: 100 }),
      endpoint('getAllSchools', BASE.replace(/:county_name/, ':county').replace(':min_enrollment', ':students'), {
        county: 'Kern',
        students: 5,
      }),
      endpoint(
        'getSchoolsInCounty',
        'select s.name\n  from county c join school s on s.county_id = c.id\n  where s.enrollment > :lo and c.county_name = :c',
        { lo: 7, c: 'Fresno' },
      ),
      endpoint(
        'getSchoolsMirrored',
        'SELECT b.name FROM county AS a JOIN school AS b ON a.id = b.county_id WHERE :n = a.county_name AND :m < b.enrollment',
        { n: 'X', m: 1 },
      ),
    ];
    const result = dedupEndpoints(
      variants.map((e, i) => ({ instanceId: `q${i}`, endpoint: e })),
      db,
    );
    expect(result.canonical.map((s) => s.operationId)).toEqual(['getSchools']);
    expect(result.merges.map((m) => [m.kept, m.merged])).toEqual([
      ['q0', 'q1'],
      ['q0', 'q2'],
      ['q0', 'q3'],
    ]);
    expect(result.calls.get('q1')).toEqual({
      name: 'getSchools',
      path: '/v1/test/schools/getschools',
      arguments: { county_name: 'Kern', min_enrollment: 5 },
    });
    expect(result.calls.get('q2')?.arguments).toEqual({ county_name: 'Fresno', min_enrollment: 7 });
    expect(result.calls.get('q3')?.arguments).toEqual({ county_name: 'X', min_enrollment: 1 });
  });

  test('different SQL is not merged; colliding names get what separates their queries, without suffixes', () => {
    const list = [
      endpoint('getSchools', BASE, { county_name: 'Alameda', min_enrollment: 100 }, 'get-schools'),
      endpoint('getSchools', BASE.replace('>', '<'), { county_name: 'Alameda', min_enrollment: 100 }, 'get-schools'),
      endpoint(
        'getSchools',
        BASE.replace('T2.name', 'T2.code'),
        { county_name: 'Alameda', min_enrollment: 100 },
        'get-schools',
      ),
      endpoint(
        'GETSCHOOLS',
        BASE.replace('county_name =', 'county_name <>'),
        { county_name: 'Alameda', min_enrollment: 100 },
        'other',
      ),
      endpoint('getSchools', BASE, { county_name: 'Kern', min_enrollment: 1 }, 'get-schools'),
    ];
    const result = dedupEndpoints(
      list.map((e, i) => ({ instanceId: `q${i}`, endpoint: e })),
      db,
    );
    const names = result.canonical.map((s) => s.operationId);
    expect(names).toEqual([
      'getSchoolsByCountyCountyNameBySchoolEnrollmentAboveName',
      'getSchoolsBySchoolEnrollmentBelow',
      'getSchoolsCodeOfSchool',
      'GETSCHOOLSByCountyCountyNameNot',
    ]);
    expect(result.canonical.map((s) => s.path)).toEqual(names.map((n) => `/v1/test/schools/${operationSlug(n)}`));
    expect(result.merges).toEqual([{ kept: 'q0', merged: 'q4', reason: expect.stringContaining('identical') }]);
    expect(result.calls.get('q2')?.name).toBe('getSchoolsCodeOfSchool');
    expect(result.calls.get('q4')).toEqual({
      name: names[0],
      path: result.canonical[0].path,
      arguments: { county_name: 'Kern', min_enrollment: 1 },
    });
  });

  test('deterministic: same input, same output; a parameter type change is a different endpoint', () => {
    const a = endpoint('getX', 'SELECT name FROM school WHERE code = :c', { c: '1' });
    const b = endpoint('getY', 'SELECT name FROM school WHERE code = :c', { c: 1 });
    const input = [
      { instanceId: '1', endpoint: a },
      { instanceId: '2', endpoint: b },
    ];
    const first = dedupEndpoints(input, db);
    expect(first.canonical).toHaveLength(2);
    expect(JSON.stringify([...dedupEndpoints(input, db).calls])).toBe(JSON.stringify([...first.calls]));
  });
});
