import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { parseConfig } from '../../config/load.js';
import { loadEvalDataset, type EvalDataset } from '../../eval/dataset.js';
import { openLiveTools } from '../../eval/live-tools.js';
import { createMcpServer, LABEL_META, START_SAMPLE } from '../../mcp/server.js';
import { generate } from '../../pipeline/generate.js';
import { EndpointSpecSchema, type ParameterSpec } from '../../runtime/rest/spec.js';
import { restToolSpecs } from '../../runtime/rest/tools.js';
import { createSqlPool } from '../../runtime/sql/pool.js';
import {
  countingExecutor,
  sequenceTypeSweep,
  typeSweep,
  validValue,
  type SequenceSweepFigures,
  type TypeSweepFigures,
} from '../../bench/type-sweep.js';
import { DEMO_SOURCE, generateDemo } from '../eval/fixtures.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * Issue 33 item 3, the sweep (bench/type-sweep.ts): every parameter of every endpoint, of the
 * demo's REST dataset and of one generated here from a database of INTEGER, REAL, TEXT and
 * date columns with subqueries, sent wrong-type values over HTTP and over MCP: all refused
 * (400 / isError) naming the parameter, no 5xx, and not one statement executed — while one
 * valid call per endpoint afterwards executes (the counter would see a bypass). The SLOT and
 * SEL tools over MCP: every gold call's arguments replaced by wrong-type values: refused by
 * the tool called, in its own terms, never with the SQLite driver's message, nothing run.
 *
 * Before the fixes the sweep found: a `number` parameter given 1e308, -1e308 or 2^64 (integral
 * past 64 bits) was executed and answered 500 (the driver's "bound … too big"), over HTTP and
 * MCP; the same values as a SLOT/SEL `value`, operand or integer operation argument were run
 * and answered `sql_error` with the driver's message.
 */

const SHOP_SQL = `
CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL,
  qty INTEGER NOT NULL, added TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE sale (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES item(id), sold_on TEXT NOT NULL,
  amount REAL NOT NULL, units INTEGER NOT NULL);
INSERT INTO item VALUES
  (1, 'hand saw', 'tools', 12.5, 4, '2019-08-15', '2020-01-02 10:00:00'),
  (2, 'hammer', 'tools', 8.25, 10, '2019-09-20', '2020-03-04 11:30:00'),
  (3, 'rake', 'garden', 15.0, 2, '2020-02-01', '2021-05-06 09:15:00'),
  (4, 'hose', 'garden', 22.75, 7, '2020-06-11', '2021-07-08 16:45:00'),
  (5, 'chain saw', 'tools', 199.99, 1, '2021-01-05', '2022-02-03 08:00:00'),
  (6, 'gloves', 'garden', 5.5, 30, '2018-12-24', '2019-12-24 12:00:00');
INSERT INTO sale VALUES
  (1, 1, '2020-01-10', 25.0, 2), (2, 2, '2020-02-14', 16.5, 2), (3, 3, '2020-05-01', 15.0, 1),
  (4, 4, '2020-07-04', 45.5, 2), (5, 5, '2021-03-03', 199.99, 1), (6, 6, '2021-04-04', 11.0, 2),
  (7, 1, '2021-06-06', 12.5, 1);
`;

const SHOP_QUESTIONS: [string, string][] = [
  ['q1', "SELECT name FROM item WHERE category = 'tools' AND price < 20.5"],
  ['q2', 'SELECT count(*) FROM item WHERE qty >= 3'],
  ['q3', "SELECT name FROM item WHERE added > '2019-09-01'"],
  ['q4', "SELECT sum(amount) FROM sale WHERE sold_on BETWEEN '2020-01-01' AND '2020-12-31'"],
  ['q5', 'SELECT name FROM item WHERE id IN (SELECT item_id FROM sale WHERE amount > 20)'],
  ['q6', "SELECT name FROM item WHERE price > (SELECT avg(price) FROM item WHERE category = 'garden')"],
  ['q7', 'SELECT category, count(*) FROM item WHERE qty < 100 GROUP BY category HAVING count(*) > 1'],
  ['q8', "SELECT name FROM item WHERE updated < '2021-01-01 12:00:00'"],
  ['q9', "SELECT name FROM item WHERE name LIKE '%saw%'"],
  ['q10', 'SELECT i.name, s.units FROM item AS i JOIN sale AS s ON s.item_id = i.id WHERE s.units = 2 AND i.qty > 5'],
  ['q11', "SELECT count(*) FROM sale WHERE item_id = (SELECT id FROM item WHERE name = 'hammer')"],
];

const config = parseConfig({ progress: 'none' });
let demo: string;
let shop: { source: string; dataset: string };

beforeAll(async () => {
  demo = path.join(await generateDemo(), 'dataset');
  const dir = tempDir('nl2api-typesweep-');
  const source = writeJsonlSource(path.join(dir, 'source'), 'shop', SHOP_SQL, SHOP_QUESTIONS);
  await generate({
    config: parseConfig({
      source,
      datasetName: 'typesweep',
      out: path.join(dir, 'dataset'),
      cacheDir: path.join(dir, 'cache'),
      progress: 'none',
    }),
  });
  shop = { source, dataset: path.join(dir, 'dataset') };
}, 120_000);

afterAll(() => removeTempDirs());

async function inMemoryClient(
  dataset: EvalDataset,
  db: string,
  environment: Parameters<typeof createMcpServer>[0]['environment'],
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer({ dataset, db, environment, maxRows: 5 }).connect(serverSide);
  const client = new Client({ name: 'nl2api-test', version: '1' });
  await client.connect(clientSide);
  return client;
}

function expectClean(f: TypeSweepFigures): void {
  expect(f.violations).toEqual([]);
  expect(f).toMatchObject({
    http: { sent: f.http.refused, serverErrors: 0, executed: 0, statuses: { 400: f.http.sent } },
    mcp: { sent: f.mcp.isError, executed: 0 },
    valid: { calls: 2 * f.endpoints, answered: 2 * f.endpoints },
  });
  // Each valid call executed its statement: a request let through would have been counted.
  expect(f.valid.executed).toBeGreaterThanOrEqual(2 * f.endpoints);
  expect(f.http.sent).toBeGreaterThan(f.parameters * 3);
  expect(f.mcp.sent).toBeGreaterThan(f.parameters * 3);
}

test('REST, the demo: every wrong-type value for every parameter is refused, naming it, before any SQL', async () => {
  const figures = await typeSweep(await loadEvalDataset(demo, { formulation: 'rest' }), DEMO_SOURCE, config);
  expectClean(figures);
  expect(figures.databases).toBe(2);
  // The generator declares the enums of the demo's categorical columns: values off their lists are swept too.
  expect(figures.constrained).toBeGreaterThan(0);
  expect(figures.endpoints).toBeGreaterThan(40);
  expect(figures.parameters).toBeGreaterThan(40);
}, 120_000);

/** Every parameter given values and bounds around its example, as the generator will declare them. */
function constrain(param: ParameterSpec, index: number): ParameterSpec {
  const example = validValue(param);
  if (param.type === 'string' && !param.format) return { ...param, enum: [example as string, 'zz other'] };
  if (param.type === 'integer')
    return index % 2 === 0
      ? { ...param, minimum: (example as number) - 1, maximum: (example as number) + 1000 }
      : { ...param, enum: [example as number, (example as number) + 1] };
  if (param.type === 'number') return { ...param, minimum: (example as number) - 0.5 };
  return param;
}

test('REST, a database of our own, its parameters with enum and bounds: the same, over HTTP and MCP', async () => {
  const dataset: EvalDataset = await loadEvalDataset(shop.dataset, { formulation: 'rest' });
  const types = new Set<string>();
  for (const served of dataset.databases.values()) {
    served.endpoints = (served.endpoints ?? []).map((endpoint) => {
      for (const p of endpoint.parameters) types.add(p.format ?? p.type);
      const constrained = { ...endpoint, parameters: endpoint.parameters.map(constrain) };
      expect(EndpointSpecSchema.safeParse(constrained).success).toBe(true);
      return constrained;
    });
    served.tools = restToolSpecs(served.endpoints, config.rest.maxStringLength);
  }
  // The generator typed the columns: INTEGER, REAL, TEXT, dates and date-times.
  expect([...types].sort()).toEqual(['date', 'date-time', 'integer', 'number', 'string']);
  const figures = await typeSweep(dataset, shop.source, config);
  expectClean(figures);
  expect(figures).toMatchObject({ databases: 1, endpoints: SHOP_QUESTIONS.length });
  expect(figures.constrained).toBeGreaterThan(8);
  // MCP lists the tools with the enum and bounds its calls are held to.
  const live = await openLiveTools(dataset, shop.source, config);
  try {
    const client = await inMemoryClient(dataset, 'shop', live.environment);
    const { tools } = await client.listTools();
    await client.close();
    const schemas = tools.flatMap((tool) => Object.values(tool.inputSchema.properties ?? {}));
    expect(schemas).toContainEqual(expect.objectContaining({ type: 'string', enum: ['tools', 'zz other'] }));
    expect(schemas).toContainEqual(expect.objectContaining({ type: 'integer', minimum: 2, maximum: 1003 }));
    expect(schemas).toContainEqual(expect.objectContaining({ type: 'number', minimum: 20 }));
  } finally {
    await live.close();
  }
}, 120_000);

function expectSequencesClean(f: SequenceSweepFigures): void {
  expect(f.violations).toEqual([]);
  expect(f).toMatchObject({ driverErrors: 0, unnamed: 0, executedWhenRefused: 0 });
  expect(f.isError).toBeGreaterThan(f.calls / 2);
}

test.each(['slot', 'sel'] as const)(
  '%s over MCP: wrong-type arguments are refused by the tool called, never by SQLite, nothing run',
  async (formulation) => {
    for (const [dir, source] of [
      [demo, DEMO_SOURCE],
      [shop.dataset, shop.source],
    ])
      expectSequencesClean(await sequenceTypeSweep(await loadEvalDataset(dir, { formulation }), source, config));
  },
  120_000,
);

test('the cases the issue names, in the caller’s own terms, and the server alive after them', async () => {
  const pool = createSqlPool({ size: 1 });
  const executor = countingExecutor(pool);
  try {
    for (const formulation of ['slot', 'sel'] as const) {
      const dataset = await loadEvalDataset(demo, { formulation, dbIds: ['bookstore'] });
      const live = await openLiveTools(dataset, DEMO_SOURCE, config, executor);
      const client = await inMemoryClient(dataset, 'bookstore', live.environment);
      try {
        // A sample whose first call filters the starting table on a value.
        const item = dataset.items.find((i) => 'value' in (i.goldCalls[0]?.arguments ?? {}))!;
        await client.callTool({ name: START_SAMPLE, arguments: { sample_id: item.id } });
        const [filter] = item.goldCalls;
        const retrieve = formulation === 'slot' ? 'retrieve_data' : 'get_book_title';
        const retrieveArgs = {
          data_source: '$starting_table_var$',
          ...(formulation === 'slot' ? { key_name: 'book_title' } : {}),
        };
        const cases: [string, Record<string, unknown>, RegExp][] = [
          [
            retrieve,
            { ...retrieveArgs, limit: 1e308 },
            /^tool:bad_value: \w+ \(label "\w+"\): argument "limit" is 1e\+308; it must lie within ±9007199254740991$/,
          ],
          [
            retrieve,
            { ...retrieveArgs, limit: 'x' },
            /^tool:wrong_type: \w+ \(label "\w+"\): argument "limit" must be an integer$/,
          ],
          [
            filter.name,
            { ...filter.arguments, key_name: { a: 1 } },
            /^tool:wrong_type: \w+ \(label "\w+"\): argument "key_name" must be a key \(string\)/,
          ],
          [
            filter.name,
            { ...filter.arguments, value: 1e308 },
            /^tool:bad_value: \w+ \(label "\w+"\): .*"value" is 1e\+308; it must be a finite number \(an integral one within ±9223372036854775807\)$/,
          ],
          [
            filter.name,
            { ...filter.arguments, value: { a: 1 } },
            /^tool:wrong_type: \w+ \(label "\w+"\): .*"value" must be /,
          ],
        ];
        const before = executor.executed;
        for (const [name, args, message] of cases) {
          const result = await client.callTool({ name, arguments: args, _meta: { [LABEL_META]: 'WRONG' } });
          const text = (result.content as { text: string }[])[0].text;
          expect({ isError: result.isError, text }).toEqual({ isError: true, text: expect.stringMatching(message) });
          // The tool the caller called, with its own name (SEL: never the SLOT tool it binds to).
          expect(text).toContain(`: ${name} (label "WRONG")`);
          expect(text).not.toMatch(/sql_error|bound|SQLite/i);
        }
        expect(executor.executed).toBe(before);
        const valid = await client.callTool({
          name: filter.name,
          arguments: filter.arguments,
          _meta: { [LABEL_META]: filter.label },
        });
        expect(valid.isError).toBeFalsy();
        expect(executor.executed).toBeGreaterThan(before);
      } finally {
        await client.close();
        await live.close();
      }
    }
  } finally {
    await pool.close();
  }
}, 120_000);
