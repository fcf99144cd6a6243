import type { DatabaseInfo, SqlValue } from '../../core/model.js';
import { runEndpoint } from '../../runtime/rest/endpoint.js';
import type { ServedEndpointSpec } from '../../runtime/rest/spec.js';
import type { SqlExecutor, SqlRequest } from '../../runtime/sql/executor.js';

/** What one endpoint call answers, whatever order the query plan gives its rows in. */

const db: DatabaseInfo = { dbId: 'heroes', path: '/heroes.sqlite', fingerprint: 'test', tables: [] };

const spec = (sql: string): ServedEndpointSpec => ({
  operationId: 'getHeroes',
  path: '/v1/test/heroes/heroes',
  summary: 'Heroes',
  description: 'Heroes of a publisher.',
  parameters: [{ name: 'publisher', type: 'string', description: 'The publisher.', required: true }],
  sql,
  response: {
    description: 'The heroes.',
    shape: 'list',
    fields: [
      { name: 'hero_name', description: 'The name.', types: ['string'], nullable: true },
      { name: 'height_cm', description: 'The height.', types: ['integer'], nullable: true },
    ],
  },
});

/** A stand-in for a plan: the same rows, in the order given. */
function planGiving(rows: SqlValue[][]): { executor: SqlExecutor; requests: SqlRequest[] } {
  const requests: SqlRequest[] = [];
  const executor: SqlExecutor = {
    run: async (request) => {
      requests.push(request);
      return { columns: ['hero_name', 'height_cm'], rows: rows.map((row) => [...row]) };
    },
    buildVariantTable: async () => 'built',
    close: async () => {},
  };
  return { executor, requests };
}

const ROWS: SqlValue[][] = [
  ['Superman', 191],
  [null, 150],
  ['Batman', 188],
];

describe('runEndpoint', () => {
  test('an endpoint without ORDER BY answers its rows in one canonical order, whatever the plan gave', async () => {
    const endpoint = spec('SELECT hero_name, height_cm FROM hero WHERE publisher = :publisher');
    const answers = await Promise.all(
      [ROWS, [...ROWS].reverse()].map((rows) =>
        runEndpoint(endpoint, { publisher: 'DC' }, db, planGiving(rows).executor, 1000),
      ),
    );
    expect(answers[0].rows).toEqual([
      [null, 150],
      ['Batman', 188],
      ['Superman', 191],
    ]);
    expect(answers[1]).toEqual(answers[0]);
  });

  test('an endpoint with ORDER BY answers in the order of its query', async () => {
    const endpoint = spec('SELECT hero_name, height_cm FROM hero WHERE publisher = :publisher ORDER BY height_cm DESC');
    const answer = await runEndpoint(endpoint, { publisher: 'DC' }, db, planGiving(ROWS).executor, 1000);
    expect(answer.rows).toEqual(ROWS);
  });

  test('values are bound, never spliced; a statement that gives the same rows is passed on to the executor', async () => {
    const { executor, requests } = planGiving(ROWS);
    const endpoint = spec('SELECT hero_name, height_cm FROM hero WHERE publisher = :publisher');
    const gold = "SELECT hero_name, height_cm FROM hero WHERE publisher = 'DC'";
    await runEndpoint(endpoint, { publisher: 'DC' }, db, executor, 1000, gold);
    await runEndpoint(endpoint, { publisher: 'DC' }, db, executor, 1000);
    expect(requests.map(({ sql, params, sameRowsAs }) => ({ sql, params, sameRowsAs }))).toEqual([
      { sql: 'SELECT hero_name, height_cm FROM hero WHERE publisher = ?', params: ['DC'], sameRowsAs: gold },
      { sql: 'SELECT hero_name, height_cm FROM hero WHERE publisher = ?', params: ['DC'], sameRowsAs: undefined },
    ]);
  });
});
