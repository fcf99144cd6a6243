import type { DatabaseInfo } from '../../core/model.js';
import { restOpenApi } from '../../runtime/rest/openapi.js';
import { argumentTypeProblem, parameterSchema } from '../../runtime/rest/parameters.js';
import { createRestServer, type RestServer } from '../../runtime/rest/server.js';
import { ParameterSpecSchema, type ParameterSpec, type ServedEndpointSpec } from '../../runtime/rest/spec.js';
import { restToolSpecs } from '../../runtime/rest/tools.js';
import { countingExecutor, type CountingExecutor } from '../../bench/type-sweep.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import { COUNT_UP_TO, HEROES_BY_PUBLISHER, heroesDb, TALLER_THAN } from './fixtures.js';

/**
 * Issue 33 item 3: a parameter's `enum`, `minimum` and `maximum` (a categorical column's
 * values, a numeric column's bounds) are enforced wherever its schema is — the server's
 * validation, the OpenAPI document, the tool schemas, the live tools' argument check — with
 * one-line messages; a spec without them is served exactly as before.
 */

const limits = { maxStringLength: 1000 };
const spec = (extra: Partial<ParameterSpec> & Pick<ParameterSpec, 'type'>): ParameterSpec => ({
  name: 'p',
  description: 'A parameter.',
  required: true,
  ...extra,
});

describe('ParameterSpecSchema', () => {
  test.each([
    ['a string enum', spec({ type: 'string', enum: ['DC', 'Marvel'] })],
    ['an integer enum within bounds', spec({ type: 'integer', enum: [1, 2, 3], minimum: 1, maximum: 3 })],
    ['number bounds', spec({ type: 'number', minimum: -1.5, maximum: 1e6 })],
    ['only a minimum', spec({ type: 'integer', minimum: 0 })],
    ['a date enum', spec({ type: 'string', format: 'date', enum: ['2020-01-01'] })],
  ])('takes %s', (_what, param) => {
    expect(ParameterSpecSchema.safeParse(param).success).toBe(true);
  });

  test.each([
    ['bounds on a string', spec({ type: 'string', minimum: 1 }), /no minimum or maximum/],
    ['a boolean enum', spec({ type: 'boolean', enum: [1] }), /lists no values/],
    ['minimum above maximum', spec({ type: 'number', minimum: 2, maximum: 1 }), /above maximum/],
    ['a number in a string enum', spec({ type: 'string', enum: ['a', 1] }), /enum value 1 is not/],
    ['a fraction in an integer enum', spec({ type: 'integer', enum: [1, 1.5] }), /enum value 1.5 is not/],
    ['an enum value past the bounds', spec({ type: 'integer', enum: [1, 9], maximum: 5 }), /enum value 9/],
    ['a value twice', spec({ type: 'string', enum: ['a', 'a'] }), /twice/],
    ['an example past the bounds', spec({ type: 'number', maximum: 1, example: 2 }), /example 2 is past/],
    ['an example not listed', spec({ type: 'string', enum: ['a'], example: 'b' }), /example .*b.* is not one of/],
  ])('refuses %s', (_what, param, message) => {
    const parsed = ParameterSpecSchema.safeParse(param);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.message).toMatch(message);
  });

  test('lists at most 20 values, none empty', () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    expect(ParameterSpecSchema.safeParse(spec({ type: 'string', enum: values(20) })).success).toBe(true);
    expect(ParameterSpecSchema.safeParse(spec({ type: 'string', enum: values(21) })).success).toBe(false);
    expect(ParameterSpecSchema.safeParse(spec({ type: 'string', enum: [] })).success).toBe(false);
  });
});

describe('parameterSchema', () => {
  test('a spec without enum or bounds gives the very schema it always did', () => {
    expect(JSON.stringify(parameterSchema(spec({ type: 'string' }), limits))).toBe(
      '{"type":"string","maxLength":1000}',
    );
    expect(JSON.stringify(parameterSchema(spec({ type: 'string', format: 'date' }), limits))).toBe(
      String.raw`{"type":"string","maxLength":1000,"pattern":"^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$"}`,
    );
    expect(JSON.stringify(parameterSchema(spec({ type: 'integer' }), limits))).toBe(
      '{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991}',
    );
    expect(JSON.stringify(parameterSchema(spec({ type: 'number' }), limits))).toBe('{"type":"number"}');
    expect(JSON.stringify(parameterSchema(spec({ type: 'boolean' }), limits))).toBe('{"type":"boolean"}');
  });

  test('shows enum and bounds; an integer keeps within the safe integers', () => {
    expect(parameterSchema(spec({ type: 'string', enum: ['DC', 'Marvel'] }), limits)).toEqual({
      type: 'string',
      maxLength: 1000,
      enum: ['DC', 'Marvel'],
    });
    expect(parameterSchema(spec({ type: 'integer', minimum: 0, enum: [1, 2] }), limits)).toEqual({
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      enum: [1, 2],
    });
    expect(parameterSchema(spec({ type: 'integer', minimum: -1e300, maximum: 1e300 }), limits)).toEqual({
      type: 'integer',
      minimum: Number.MIN_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(parameterSchema(spec({ type: 'number', maximum: 2.5 }), limits)).toEqual({ type: 'number', maximum: 2.5 });
  });
});

describe('argumentTypeProblem (the live tools, MCP): one line naming the argument, what it must be, what it was', () => {
  test.each<[string, ParameterSpec, unknown, string | undefined]>([
    ['a listed value', spec({ type: 'string', enum: ['DC', 'Marvel'] }), 'DC', undefined],
    [
      'an unlisted value',
      spec({ type: 'string', enum: ['DC', 'Marvel'] }),
      'Image',
      `argument 'p' must be one of "DC", "Marvel", not "Image"`,
    ],
    ['a listed number as text', spec({ type: 'integer', enum: [1, 2] }), '2', undefined],
    ['an unlisted number', spec({ type: 'integer', enum: [1, 2] }), 3, `argument 'p' must be one of 1, 2, not 3`],
    ['below the minimum', spec({ type: 'number', minimum: 0 }), -0.5, `argument 'p' must be at least 0, not -0.5`],
    ['above the maximum', spec({ type: 'integer', maximum: 10 }), '11', `argument 'p' must be at most 10, not "11"`],
    ['a fraction for an integer', spec({ type: 'integer' }), 1.5, `argument 'p' must be an integer, not 1.5`],
    ['text that is no number', spec({ type: 'integer' }), 'abc', `argument 'p' must be an integer, not "abc"`],
    [
      '1e308 for an integer',
      spec({ type: 'integer' }),
      1e308,
      `argument 'p' must be an integer within ±9007199254740991, not 1e+308`,
    ],
    [
      '1e308 for a number',
      spec({ type: 'number' }),
      1e308,
      `argument 'p' must be a finite number (an integral one within ±9223372036854775807), not 1e+308`,
    ],
    [
      'Infinity as text',
      spec({ type: 'number' }),
      'Infinity',
      `argument 'p' must be a finite number (an integral one within ±9223372036854775807), not "Infinity"`,
    ],
    ['a fraction for a number', spec({ type: 'number' }), 1.5, undefined],
    ['a boolean for a number', spec({ type: 'number' }), true, `argument 'p' must be a number, not a boolean`],
    ['a number for a boolean', spec({ type: 'boolean' }), 1, `argument 'p' must be a boolean, not a number`],
    ['text for a boolean', spec({ type: 'boolean' }), 'yes', `argument 'p' must be a boolean, not "yes"`],
    ['"true" for a boolean', spec({ type: 'boolean' }), 'true', undefined],
  ])('%s', (_what, param, value, problem) => {
    expect(argumentTypeProblem('p', value, param)).toBe(problem);
  });

  test('a long list of values is cut in the message, the count given', () => {
    const values = Array.from({ length: 20 }, (_, i) => `a rather long categorical value number ${i}`);
    const problem = argumentTypeProblem('p', 'nope', spec({ type: 'string', enum: values }))!;
    expect(problem).toMatch(/^argument 'p' must be one of "a rather long .*, … \(20 in all\), not "nope"$/);
    expect(problem.length).toBeLessThan(400);
  });
});

describe('the server enforces enum and bounds before any SQL runs', () => {
  const PUBLISHER_LISTED: ServedEndpointSpec = {
    ...HEROES_BY_PUBLISHER,
    parameters: [{ ...HEROES_BY_PUBLISHER.parameters[0], enum: ['DC', 'Marvel'] }],
  };
  const TALLER_BOUNDED: ServedEndpointSpec = {
    ...TALLER_THAN,
    parameters: [
      { ...TALLER_THAN.parameters[0], minimum: 50, maximum: 300 },
      { ...TALLER_THAN.parameters[1], minimum: 1, maximum: 10, enum: [1, 2, 5, 10] },
    ],
  };
  let heroes: DatabaseInfo;
  let pool: SqlPool;
  let executor: CountingExecutor;
  let server: RestServer;

  beforeAll(async () => {
    heroes = heroesDb(tempDir());
    pool = createSqlPool({ size: 1 });
    executor = countingExecutor(pool);
    server = await createRestServer({
      databases: [{ db: heroes, endpoints: [PUBLISHER_LISTED, TALLER_BOUNDED, COUNT_UP_TO] }],
      executor,
      timeoutMs: 3000,
      title: 'constraints',
      version: '1',
      docs: false,
    });
  });

  afterAll(async () => {
    await server?.close();
    await pool?.close();
    removeTempDirs();
  });

  const get = async (target: string) => {
    const response = await fetch(server.url + target);
    return { status: response.status, json: await response.json() };
  };

  test.each([
    [
      'an unlisted text value',
      `${PUBLISHER_LISTED.path}?publisher=Image`,
      `parameter 'publisher' must be one of "DC", "Marvel"`,
    ],
    ['below the minimum', `${TALLER_BOUNDED.path}?min_height=49.5`, `parameter 'min_height' must be at least 50`],
    ['above the maximum', `${TALLER_BOUNDED.path}?min_height=301`, `parameter 'min_height' must be at most 300`],
    [
      'an unlisted integer',
      `${TALLER_BOUNDED.path}?min_height=100&limit=3`,
      `parameter 'limit' must be one of 1, 2, 5, 10`,
    ],
    ['a number past 64 bits', `${TALLER_BOUNDED.path}?min_height=1e308`, `parameter 'min_height' must be at most 300`],
    ['1e308 for an unbounded integer', `${COUNT_UP_TO.path}?n=1e308`, `parameter 'n' must be at most 9007199254740991`],
  ])('%s → 400 with a one-line message, nothing executed', async (_what, target, message) => {
    const before = executor.executed;
    expect(await get(target)).toEqual({ status: 400, json: { error: { code: 'invalid_parameters', message } } });
    expect(executor.executed).toBe(before);
  });

  test('listed and in-bounds values are served (and counted: the counter counts)', async () => {
    const before = executor.executed;
    expect((await get(`${PUBLISHER_LISTED.path}?publisher=Marvel`)).status).toBe(200);
    expect((await get(`${TALLER_BOUNDED.path}?min_height=150&limit=2`)).status).toBe(200);
    expect(executor.executed).toBe(before + 2);
  });

  test('the OpenAPI document and the tool schemas show them as the server enforces them', () => {
    const operation = (server.openapi as any).paths[TALLER_BOUNDED.path].get;
    expect(operation.parameters.map((p: { schema: unknown }) => p.schema)).toEqual([
      { type: 'number', minimum: 50, maximum: 300 },
      { type: 'integer', minimum: 1, maximum: 10, enum: [1, 2, 5, 10] },
    ]);
    const doc = restOpenApi([PUBLISHER_LISTED], { title: 't', version: '1' }) as any;
    expect(doc.paths[PUBLISHER_LISTED.path].get.parameters[0].schema).toEqual({
      type: 'string',
      maxLength: 1000,
      enum: ['DC', 'Marvel'],
    });
    const [tool] = restToolSpecs([PUBLISHER_LISTED]);
    expect(tool.function.parameters).toMatchObject({
      properties: { publisher: { type: 'string', enum: ['DC', 'Marvel'] } },
    });
  });
});
