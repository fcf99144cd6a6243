import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import { pathToFileURL } from 'node:url';
import type { DatabaseInfo } from '../../core/model.js';
import { createRestServer, type RestServer } from '../../runtime/rest/server.js';
import type { ServedEndpointSpec } from '../../runtime/rest/spec.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import {
  BROKEN,
  captureLogger,
  COUNT_BY_AVATAR,
  COUNT_UP_TO,
  emptyDb,
  expectNoLeak,
  HERO_BY_NAME,
  HEROES_BY_PUBLISHER,
  HEROES_ENDPOINTS,
  heroesDb,
  INJECTION_NAMES,
  NUMBERS,
  TALLER_THAN,
} from './fixtures.js';

/** The live REST server over the real killable pool: answers, refusals, timeouts, lifecycle. */

// Every request's time limit: ample for the normal ones even on a loaded machine; the
// runaway one (COUNT_UP_TO to 10^12) would run for hours, so only the limit can end it.
const TIMEOUT_MS = 3000;
let heroes: DatabaseInfo;
let numbers: DatabaseInfo;
let pool: SqlPool;
let server: RestServer;
const logLines: string[] = [];

beforeAll(async () => {
  const dir = tempDir();
  heroes = heroesDb(dir);
  numbers = emptyDb(dir);
  pool = createSqlPool({ size: 2 });
  server = await createRestServer({
    databases: [
      { db: heroes, endpoints: HEROES_ENDPOINTS },
      { db: numbers, endpoints: [NUMBERS] },
    ],
    executor: pool,
    timeoutMs: TIMEOUT_MS,
    title: 'heroes test',
    version: '1',
    logger: captureLogger(logLines),
  });
});

afterAll(async () => {
  await server?.close();
  await pool?.close();
  removeTempDirs();
});

async function get(
  pathAndQuery: string,
  init?: RequestInit,
): Promise<{ status: number; text: string; json: any; headers: Headers }> {
  const response = await fetch(server.url + pathAndQuery, init);
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text), headers: response.headers };
}

/** The oracle's rows as a list of objects keyed by the endpoint's fields. */
const objects = (endpoint: ServedEndpointSpec, rows: unknown[][]) =>
  rows.map((row) => Object.fromEntries(endpoint.response.fields.map((field, i) => [field.name, row[i]])));

const query = (args: Record<string, string>) => `?${new URLSearchParams(args)}`;

/** The oracle: the endpoint's SQL run directly by better-sqlite3 with named parameters. */
function direct(
  db: DatabaseInfo,
  sql: string,
  args: Record<string, unknown>,
): { columns: string[]; rows: unknown[][] } {
  const handle = new Database(db.path, { readonly: true });
  try {
    const statement = handle.prepare(sql).raw(true);
    return { columns: statement.columns().map((c) => c.name), rows: statement.all(args) as unknown[][] };
  } finally {
    handle.close();
  }
}

describe('answers', () => {
  test('a call returns the rows of the SQL run directly, as objects with the declared fields', async () => {
    const response = await get(HEROES_BY_PUBLISHER.path + query({ publisher: 'DC' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.json).toEqual(
      objects(HEROES_BY_PUBLISHER, direct(heroes, HEROES_BY_PUBLISHER.sql, { publisher: 'DC' }).rows),
    );
    expect(response.json).toEqual([
      { hero_name: '; DROP TABLE hero', height_cm: 150 },
      { hero_name: 'Batman', height_cm: 188 },
      { hero_name: 'Superman', height_cm: 191 },
    ]);
  });

  test('an endpoint of one row answers one object', async () => {
    expect((await get(COUNT_BY_AVATAR.path + query({ with_avatar: 'true' }))).json).toEqual({ n: 1 });
  });

  test('query-string text is coerced to the declared types; an absent optional parameter binds NULL', async () => {
    const limited = await get(TALLER_THAN.path + query({ min_height: '179.5', limit: '2' }));
    expect(limited.json).toEqual(
      objects(TALLER_THAN, direct(heroes, TALLER_THAN.sql, { min_height: 179.5, limit: 2 }).rows),
    );
    expect(limited.json).toHaveLength(2);
    const all = await get(TALLER_THAN.path + query({ min_height: '179.5' }));
    expect(all.json).toEqual(
      objects(TALLER_THAN, direct(heroes, TALLER_THAN.sql, { min_height: 179.5, limit: null }).rows),
    );
    expect(all.json).toHaveLength(3);
    expect((await get(COUNT_BY_AVATAR.path + query({ with_avatar: 'true' }))).json).toEqual({ n: 1 });
    expect((await get(COUNT_BY_AVATAR.path + query({ with_avatar: 'false' }))).json).toEqual({ n: 4 });
  });

  test('a placeholder inside a string literal or a comment is text, not a parameter', async () => {
    const response = await get(HERO_BY_NAME.path + query({ name: 'Storm' }));
    expect(response.json).toEqual([{ id: 4, hero_name: 'Storm' }]);
  });

  test('every database is served; responses are byte-identical across calls', async () => {
    const first = await get(NUMBERS.path + query({ from_value: '2' }));
    const second = await get(NUMBERS.path + query({ from_value: '2' }));
    expect(first.json).toEqual([{ v: 2 }, { v: 3 }]);
    expect(second.text).toBe(first.text);
  });

  test('injection-like strings are plain values: they match only themselves and the table survives', async () => {
    for (const name of INJECTION_NAMES) {
      const response = await get(HERO_BY_NAME.path + query({ name }));
      expect(response.status).toBe(200);
      expect(response.json).toEqual(objects(HERO_BY_NAME, direct(heroes, HERO_BY_NAME.sql, { name }).rows));
    }
    // The one hero named like an injection is found by its name, and only it.
    expect((await get(HERO_BY_NAME.path + query({ name: '; DROP TABLE hero' }))).json).toEqual([
      { id: 5, hero_name: '; DROP TABLE hero' },
    ]);
    expect((await get(HERO_BY_NAME.path + query({ name: "' OR 1=1 --" }))).json).toEqual([]);
    expect(direct(heroes, 'SELECT count(*) FROM hero', {}).rows).toEqual([[5]]);
  });
});

describe('refusals: clear 4xx JSON errors that leak nothing', () => {
  const cases: [string, string, RegExp][] = [
    ['missing required parameter', HEROES_BY_PUBLISHER.path, /missing required parameter 'publisher'/],
    [
      'wrong type (number)',
      TALLER_THAN.path + query({ min_height: 'tall' }),
      /parameter 'min_height' must be a single number value/,
    ],
    [
      'wrong type (integer)',
      TALLER_THAN.path + query({ min_height: '1', limit: '2.5' }),
      /parameter 'limit' must be a single integer value/,
    ],
    [
      'wrong type (boolean)',
      COUNT_BY_AVATAR.path + query({ with_avatar: 'yes' }),
      /parameter 'with_avatar' must be a single boolean value/,
    ],
    [
      'non-finite number',
      TALLER_THAN.path + query({ min_height: 'Infinity' }),
      /^parameter 'min_height' must be a finite number \(an integral one within ±9223372036854775807\)$/,
    ],
    [
      'non-finite integer',
      COUNT_UP_TO.path + query({ n: '1e400' }),
      /^parameter 'n' must be an integer within ±9007199254740991$/,
    ],
    [
      'integer past 2^53',
      COUNT_UP_TO.path + query({ n: '99999999999999999999' }),
      /^parameter 'n' must be at most 9007199254740991$/,
    ],
    [
      '10,000-character string',
      HERO_BY_NAME.path + query({ name: 'x'.repeat(10_000) }),
      /parameter 'name' must be at most 1000 characters/,
    ],
    ['unknown parameter', HEROES_BY_PUBLISHER.path + query({ publisher: 'DC', evil: '1' }), /unknown parameter 'evil'/],
    [
      'repeated parameter',
      `${HEROES_BY_PUBLISHER.path}?publisher=DC&publisher=Marvel`,
      /parameter 'publisher' must be a single string value/,
    ],
  ];

  test.each(cases)('%s → 400', async (_name, url, message) => {
    const response = await get(url);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ error: { code: 'invalid_parameters', message: expect.stringMatching(message) } });
    expectNoLeak(response.text, heroes.path);
  });

  test('several problems are reported together', async () => {
    const response = await get(TALLER_THAN.path + query({ limit: 'x', other: '1' }));
    expect(response.status).toBe(400);
    expect(response.json.error.message).toMatch(/missing required parameter 'min_height'/);
    expect(response.json.error.message).toMatch(/unknown parameter 'other'/);
  });

  test('unknown paths → 404 JSON; a served path with another method → 405 with Allow', async () => {
    const unknown = await get('/v1/test/heroes/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    for (const [url, method] of [
      [HEROES_BY_PUBLISHER.path + query({ publisher: 'DC' }), 'POST'],
      [HEROES_BY_PUBLISHER.path, 'PUT'],
      [HEROES_BY_PUBLISHER.path, 'DELETE'],
      ['/openapi.json', 'PATCH'],
      ['/docs', 'POST'],
    ] as const) {
      const response = await fetch(server.url + url, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(await response.json()).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });
    }
  });

  test('HEAD is GET without the body', async () => {
    const url = server.url + HEROES_BY_PUBLISHER.path + query({ publisher: 'DC' });
    const [head, full] = await Promise.all([fetch(url, { method: 'HEAD' }), fetch(url)]);
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-length')).toBe(full.headers.get('content-length'));
    expect(head.headers.get('content-type')).toBe(full.headers.get('content-type'));
  });

  test('refusals made before routing are in the same format and echo nothing: a malformed escape, a 100 KB query string', async () => {
    const badEscape = await get(`${HEROES_BY_PUBLISHER.path}%zz${query({ publisher: 'DC' })}`);
    expect(badEscape.status).toBe(400);
    expect(badEscape.json).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
    expect(badEscape.text).not.toMatch(/heroes|%zz/);
    const long = await get(HERO_BY_NAME.path + query({ name: 'x'.repeat(100_000) }));
    expect(long.status).toBe(431);
    expect(long.json).toEqual({ error: { code: 'request_too_large', message: expect.any(String) } });
  });

  test('errors stay small whatever the request: a thousand unknown parameters get a short answer', async () => {
    const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`u${i}`, '1']));
    const response = await get(HEROES_BY_PUBLISHER.path + query({ publisher: 'DC', ...many }));
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('invalid_parameters');
    expect(response.json.error.message).toMatch(/unknown parameter 'u0'.*and \d+ more problems/);
    expect(Buffer.byteLength(response.text)).toBeLessThanOrEqual(2048);
  });

  test('a failing query → 500 with a generic message; the details are logged server-side only', async () => {
    const response = await get(BROKEN.path + query({ id: '1' }));
    expect(response.status).toBe(500);
    expect(response.json).toEqual({ error: { code: 'internal_error', message: 'The query could not be run.' } });
    expectNoLeak(response.text, heroes.path);
    expect(logLines.join('')).toMatch(/no such column: no_such_column/);
  });
});

describe('timeouts', () => {
  test('a runaway query is stopped at the timeout (504) while other requests are served, and after', async () => {
    const slow = get(COUNT_UP_TO.path + query({ n: '1000000000000' }));
    const meanwhile = await get(HEROES_BY_PUBLISHER.path + query({ publisher: 'Marvel' }));
    expect(meanwhile.status).toBe(200);
    const response = await slow;
    expect(response.status).toBe(504);
    expect(response.json).toEqual({
      error: { code: 'timeout', message: expect.stringMatching(new RegExp(`${TIMEOUT_MS} ms time limit`)) },
    });
    expectNoLeak(response.text, heroes.path);
    const after = await get(COUNT_UP_TO.path + query({ n: '10' }));
    expect(after.json).toEqual({ count: 10 });
  });
});

describe('admission', () => {
  test('past maxInFlight queries a request is answered 503 with Retry-After at once, not queued; then served again', async () => {
    const busy = await createRestServer({
      databases: [{ db: heroes, endpoints: HEROES_ENDPOINTS }],
      executor: pool,
      timeoutMs: 1500,
      maxInFlight: 1,
      title: 'heroes test',
      version: '1',
      logger: captureLogger([]),
    });
    try {
      const slow = fetch(busy.url + COUNT_UP_TO.path + query({ n: '1000000000000' }));
      await new Promise((resolve) => setTimeout(resolve, 300)); // the runaway query is admitted
      const started = Date.now();
      const refused = await fetch(busy.url + HEROES_BY_PUBLISHER.path + query({ publisher: 'Marvel' }));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toEqual({ error: { code: 'unavailable', message: expect.any(String) } });
      expect(Date.now() - started).toBeLessThan(1000); // answered at once, not after the runaway
      expect((await slow).status).toBe(504);
      const served = await fetch(busy.url + HEROES_BY_PUBLISHER.path + query({ publisher: 'Marvel' }));
      expect(served.status).toBe(200);
    } finally {
      await busy.close();
    }
  });
});

describe('documents', () => {
  test('/openapi.json serves the document; /docs serves the interactive UI over it', async () => {
    const document = await get('/openapi.json');
    expect(document.json).toEqual(server.openapi);
    expect(Object.keys(document.json.paths)).toHaveLength(HEROES_ENDPOINTS.length + 1);
    const ui = await fetch(`${server.url}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/text\/html/);
    await ui.text();
    expect((await get('/docs/json')).json).toEqual(server.openapi);
  });
});

describe('startup and lifecycle', () => {
  test('binds to 127.0.0.1 by default', () => {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
  });

  test('refuses invalid endpoint sets at startup', async () => {
    const start = (endpoints: typeof HEROES_ENDPOINTS) =>
      createRestServer({
        databases: [{ db: heroes, endpoints }],
        executor: pool,
        timeoutMs: 100,
        title: 't',
        version: '1',
        logger: captureLogger([]),
      });
    await expect(start([HEROES_BY_PUBLISHER, { ...HEROES_BY_PUBLISHER, operationId: 'other' }])).rejects.toThrow(
      /share the path/,
    );
    await expect(
      start([HEROES_BY_PUBLISHER, { ...TALLER_THAN, operationId: HEROES_BY_PUBLISHER.operationId }]),
    ).rejects.toThrow(/share the operationId/);
    await expect(start([{ ...HEROES_BY_PUBLISHER, sql: 'SELECT :other' }])).rejects.toThrow(
      /undeclared placeholder :other/,
    );
    await expect(start([{ ...HEROES_BY_PUBLISHER, sql: 'SELECT ? + :publisher' }])).rejects.toThrow(
      /only :name placeholders/,
    );
    await expect(start([{ ...HEROES_BY_PUBLISHER, operationId: 'bad name!' }])).rejects.toThrow(/invalid/);
  });

  /** A server of the test's own, over the numbers database. */
  const ownServer = (options: { closeGraceMs?: number } = {}) =>
    createRestServer({
      databases: [{ db: numbers, endpoints: [NUMBERS] }],
      executor: pool,
      timeoutMs: 1000,
      title: 't',
      version: '1',
      logger: captureLogger([]),
      ...options,
    });

  test('close() frees the port', async () => {
    const own = await ownServer();
    expect((await fetch(`${own.url}${NUMBERS.path}`)).status).toBe(200);
    const port = Number(new URL(own.url).port);
    await own.close();
    await expect(fetch(`${own.url}${NUMBERS.path}`)).rejects.toThrow();
    const probe = net.createServer();
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => probe.close(resolve));
  });

  test('close() does not wait on a client that stopped halfway through its request', async () => {
    const own = await ownServer({ closeGraceMs: 200 });
    const { port } = new URL(own.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Headers begun, never finished: Node would hold the connection for its header timeout (a minute).
    socket.write(`GET ${NUMBERS.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    const started = Date.now();
    await own.close();
    await closed;
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  test('a process that served requests exits once the server and the pool are closed', () => {
    const serverUrl = new URL('../../runtime/rest/server.ts', import.meta.url).href;
    const poolUrl = new URL('../../runtime/sql/pool.ts', import.meta.url).href;
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const script = `
      import { createRestServer } from ${JSON.stringify(serverUrl)};
      import { createSqlPool } from ${JSON.stringify(poolUrl)};
      const pool = createSqlPool({ size: 1 });
      const server = await createRestServer({
        databases: [{ db: ${JSON.stringify(numbers)}, endpoints: [${JSON.stringify(NUMBERS)}] }],
        executor: pool, timeoutMs: 5000, title: 't', version: '1',
      });
      const body = await (await fetch(server.url + ${JSON.stringify(NUMBERS.path)})).text();
      await server.close();
      await pool.close();
      console.log(body);
    `;
    // The time limit only catches a process that never exits; a loaded machine may take its time.
    const output = execFileSync(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 50_000,
    });
    expect(JSON.parse(output)).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
  });
});
