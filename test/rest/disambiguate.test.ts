import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import type { DatabaseInfo } from '../../core/model.js';
import { dedupEndpoints } from '../../generators/rest/dedup.js';
import { disambiguate } from '../../generators/rest/disambiguate.js';
import { distinctness } from '../../generators/rest/distinctness.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import { OPERATION_ID, type EndpointSpec, type SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';
import { instance } from './fixtures.js';

/** A hero table with two foreign keys to one colour table: which colour is which? */
const SQL = `
  CREATE TABLE colour (id INTEGER PRIMARY KEY, colour TEXT);
  CREATE TABLE hero (
    id INTEGER PRIMARY KEY, name TEXT, height INTEGER,
    eye_colour_id INTEGER REFERENCES colour(id), hair_colour_id INTEGER REFERENCES colour(id)
  );
  INSERT INTO colour VALUES (1, 'Blue'), (2, 'Brown');
  INSERT INTO hero VALUES (1, 'Ann', 170, 1, 2), (2, 'Bob', 180, 2, 2), (3, 'Cy', 160, 1, 1);
`;

let db: DatabaseInfo;
beforeAll(() => {
  const file = createDb(path.join(tempDir('nl2api-rest-'), 'heroes.sqlite'), SQL);
  const column = (name: string, type: string, description = name) => ({
    name,
    type,
    description,
    valueDescription: '',
  });
  db = {
    dbId: 'heroes',
    path: file,
    fingerprint: 'test',
    tables: [
      {
        name: 'colour',
        columns: [column('id', 'INTEGER'), column('colour', 'TEXT', 'the colour')],
        primaryKey: ['id'],
        foreignKeys: [],
      },
      {
        name: 'hero',
        columns: [
          column('id', 'INTEGER'),
          column('name', 'TEXT', 'hero name'),
          column('height', 'INTEGER', 'height in cm'),
          column('eye_colour_id', 'INTEGER'),
          column('hair_colour_id', 'INTEGER'),
        ],
        primaryKey: ['id'],
        foreignKeys: [
          { column: 'eye_colour_id', refTable: 'colour', refColumn: 'id' },
          { column: 'hair_colour_id', refTable: 'colour', refColumn: 'id' },
        ],
      },
    ],
  };
});
afterAll(removeTempDirs);

function synth(sql: string, id = '1'): SynthesizedEndpoint {
  const outcome = synthesizeFromTemplate({ ...instance(sql, id), dbId: 'heroes' }, db, 'Test');
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.value;
}

const TWO_COLOURS =
  "SELECT T1.name FROM hero AS T1 JOIN colour AS T2 ON T1.eye_colour_id = T2.id JOIN colour AS T3 ON T1.hair_colour_id = T3.id WHERE T2.colour = 'Blue' AND T3.colour = 'Brown'";

describe('parameters told apart by the role of their table', () => {
  test('two foreign keys to one table: eye colour and hair colour, named and described with column and join', () => {
    const e = synth(TWO_COLOURS);
    expect(e.spec.parameters.map((p) => p.name)).toEqual(['eye_colour', 'hair_colour']);
    expect(e.spec.parameters[0].description).toBe(
      'Value of the eye colour of hero (the colour) to match; column colour.colour, joined on hero.eye_colour_id',
    );
    expect(e.spec.parameters[1].description).toContain('hair colour');
    expect(e.spec.operationId).toBe('getNameByEyeColourAndHairColour');
    expect(distinctness([e.spec]).ambiguousParameters).toBe(0);
  });

  test('one column compared twice, without a role: the values are numbered', () => {
    const e = synth("SELECT name FROM hero WHERE name IN ('Ann', 'Bob')");
    expect(e.spec.parameters.map((p) => p.description)).toEqual([
      'One of the values of hero name to match; column hero.name; value 1 of 2',
      'One of the values of hero name to match; column hero.name; value 2 of 2',
    ]);
  });

  test('an LLM endpoint whose parameters are described alike gets their column and role (disambiguate)', () => {
    const e = synth(TWO_COLOURS);
    const spec: EndpointSpec = {
      ...e.spec,
      sql: e.spec.sql.replace(':eye_colour', ':colour').replace(':hair_colour', ':colour_2'),
      parameters: e.spec.parameters.map((p, i) => ({ ...p, name: i ? 'colour_2' : 'colour', description: 'A colour' })),
    };
    const [out] = disambiguate([spec], db);
    expect(out.parameters.map((p) => p.description)).toEqual([
      'A colour; column colour.colour, the eye colour of hero (joined on hero.eye_colour_id)',
      'A colour; column colour.colour, the hair colour of hero (joined on hero.hair_colour_id)',
    ]);
  });
});

describe('endpoints told apart after dedup', () => {
  const dedup = (sqls: string[]) =>
    dedupEndpoints(
      sqls.map((sql, i) => ({ instanceId: `q${i}`, endpoint: synth(sql, `${i}`) })),
      db,
    );

  test('two endpoints differing only by ORDER direction: highest and lowest, in names, summaries and calls', () => {
    const result = dedup([
      'SELECT name FROM hero ORDER BY height DESC LIMIT 1',
      'SELECT name FROM hero ORDER BY height ASC LIMIT 1',
    ]);
    const [top, bottom] = result.canonical;
    expect(top.operationId).toBe('getNameHighestHeightOfHero');
    expect(bottom.operationId).toBe('getNameLowestHeightOfHero');
    expect(top.summary).toBe('Get hero name, the one with the highest height in cm');
    expect(bottom.summary).toBe('Get hero name, the one with the lowest height in cm');
    expect(result.calls.get('q1')).toEqual({ name: bottom.operationId, path: bottom.path, arguments: {} });
    expect(bottom.path).toBe('/v1/test/heroes/get-name-lowest-height-of-hero');
    expect(distinctness(result.canonical)).toEqual({
      endpoints: 2,
      suffixedNames: 0,
      sharedDescriptions: 0,
      sharedSummaries: 0,
      ambiguousParameters: 0,
    });
  });

  test('top rows by a window are named by what the window ranks by, never by its alias and number', () => {
    const window = (fn: string, n: number) =>
      `SELECT name FROM (SELECT name, ${fn}() OVER (PARTITION BY eye_colour_id ORDER BY height DESC) AS rn FROM hero) WHERE rn <= ${n}`;
    const result = dedup([window('ROW_NUMBER', 1), window('RANK', 1), window('ROW_NUMBER', 2)]);
    expect(result.canonical.map((e) => e.operationId)).toEqual([
      'getNameTop1ByHeightOfHeroPerEyeColourId',
      'getNameRank1ByHeightOfHeroPerEyeColourId',
      'getNameTop2ByHeightOfHeroPerEyeColourId',
    ]);
    expect(result.canonical.every((e) => !/rn/i.test(e.operationId.replace(/Hero/g, '')))).toBe(true);
    expect(result.canonical.every((e) => e.parameters.length === 0)).toBe(true);
  });

  test('fixed conditions, a maximum subquery and a join role separate endpoints returning the same column', () => {
    const sqls = [
      'SELECT name FROM hero WHERE height = (SELECT MAX(height) FROM hero)',
      'SELECT name FROM hero WHERE height > 175',
      'SELECT T1.name FROM hero AS T1 JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T2.colour = :c',
      'SELECT T1.name FROM hero AS T1 JOIN colour AS T2 ON T1.hair_colour_id = T2.id WHERE T2.colour = :c',
    ].map((sql) => sql.replace(':c', "'Blue'"));
    const result = dedup(sqls);
    const figures = distinctness(result.canonical);
    expect(figures).toMatchObject({
      suffixedNames: 0,
      sharedDescriptions: 0,
      sharedSummaries: 0,
      ambiguousParameters: 0,
    });
    for (const spec of result.canonical) {
      expect(spec.operationId).toMatch(OPERATION_ID);
      expect(spec.operationId).not.toMatch(/_\d+$/);
      expect(spec.summary.length).toBeLessThanOrEqual(200);
    }
    // The roles are in the parameters' names: no suffix needed.
    expect(result.canonical.map((s) => s.operationId)).toEqual([
      'getName',
      'getNameByMinHeight',
      'getNameByEyeColour',
      'getNameByHairColour',
    ]);
  });

  test('deterministic: the same endpoints give the same names, summaries and calls', () => {
    const sqls = [
      'SELECT name FROM hero ORDER BY height DESC LIMIT 1',
      'SELECT name FROM hero ORDER BY height ASC LIMIT 1',
      'SELECT name FROM hero WHERE height > 175',
    ];
    const a = dedup(sqls);
    const b = dedup(sqls);
    expect(b.canonical).toEqual(a.canonical);
    expect([...b.calls]).toEqual([...a.calls]);
  });
});
