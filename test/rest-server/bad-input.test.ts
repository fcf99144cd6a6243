import type { DatabaseInfo } from '../../core/model.js';
import { MALFORMED, parseQuery } from '../../runtime/rest/parameters.js';
import { createRestServer, type RestServer } from '../../runtime/rest/server.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import { COUNT_BY_AVATAR, COUNT_UP_TO, HERO_BY_NAME, HEROES_BY_PUBLISHER, heroesDb, TALLER_THAN } from './fixtures.js';

/**
 * What the bad-input sweep (bench/bad-input-sweep.ts) found over BIRD dev, each reproduced:
 * query text that is not valid (malformed or non-UTF-8 escapes, NUL) was looked up literally,
 * numbers in hex or padded with spaces were accepted, and another method with a malformed or
 * oversized body got 400/413 instead of 405.
 */

let heroes: DatabaseInfo;
let pool: SqlPool;
let server: RestServer;

beforeAll(async () => {
  heroes = heroesDb(tempDir());
  pool = createSqlPool({ size: 1 });
  server = await createRestServer({
    databases: [
      { db: heroes, endpoints: [HEROES_BY_PUBLISHER, TALLER_THAN, COUNT_BY_AVATAR, HERO_BY_NAME, COUNT_UP_TO] },
    ],
    executor: pool,
    timeoutMs: 3000,
    title: 'bad input',
    version: '1',
  });
});

afterAll(async () => {
  await server?.close();
  await pool?.close();
  removeTempDirs();
});

async function call(target: string, init?: RequestInit): Promise<{ status: number; json: any; allow: string | null }> {
  const response = await fetch(server.url + target, init);
  return { status: response.status, json: await response.json(), allow: response.headers.get('allow') };
}

describe('parseQuery', () => {
  test('reads a query string as Fastify does: + is a space, repeats are arrays, no prototype', () => {
    const query = parseQuery('a=1&b=x+y%21&a=2&&c&__proto__=p');
    expect(Object.entries(query)).toEqual([
      ['a', ['1', '2']],
      ['b', 'x y!'],
      ['c', ''],
      ['__proto__', 'p'],
    ]);
    expect(Object.getPrototypeOf(query)).toBeNull();
    expect(query[MALFORMED]).toBeUndefined();
  });

  test('lists names whose name or value is not valid text, and keeps them out of the enumerable keys', () => {
    const query = parseQuery('a=%C3%28&b=%zz&c=%&d=a%00b&%FF=1&ok=%C3%A9');
    expect(query[MALFORMED]).toEqual(['a', 'b', 'c', 'd', '%FF']);
    expect(query.ok).toBe('é');
    expect(Object.keys(query)).toEqual(['a', 'b', 'c', 'd', '%FF', 'ok']);
  });
});

describe('the server refuses what the sweep found accepted', () => {
  test.each([
    ['invalid UTF-8 escape', '%C3%28'],
    ['a lone byte', '%FF'],
    ['an overlong encoding', '%C0%AF'],
    ['an encoded surrogate', '%ED%A0%80'],
    ['a malformed escape', '%zz'],
    ['a lone %', '%'],
    ['a NUL character', 'Bat%00man'],
  ])('a string value with %s → 400, never looked up literally', async (_name, raw) => {
    const response = await call(`${HERO_BY_NAME.path}?name=${raw}`);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      error: {
        code: 'invalid_parameters',
        message: "parameter 'name' is not valid text (a malformed or non-UTF-8 percent-escape, or a NUL character)",
      },
    });
  });

  test('a parameter name that is not valid text → 400 naming it', async () => {
    const response = await call(`${HERO_BY_NAME.path}?name=Batman&%FF%FE=1`);
    expect(response.status).toBe(400);
    expect(response.json.error.message).toMatch(/parameter '%FF%FE' is not valid text/);
  });

  test('a valid escape still reads as its text', async () => {
    const response = await call(`${HEROES_BY_PUBLISHER.path}?publisher=%44%43`);
    expect(response.status).toBe(200);
  });

  test.each(['0x10', '0b11', '0o7', ' 1 ', '1_000'])('a number written %j → 400', async (text) => {
    const response = await call(`${COUNT_UP_TO.path}?n=${encodeURIComponent(text)}`);
    expect(response.status).toBe(400);
    expect(response.json.error.message).toBe("parameter 'n' must be a single integer value");
  });

  test.each(['10', '+10', '1e1', '10.0'])('a decimal integer %j is taken', async (text) => {
    expect((await call(`${COUNT_UP_TO.path}?n=${encodeURIComponent(text)}`)).status).toBe(200);
  });

  test.each(['.5', '5.', '-1.5e2', '179.5'])('a decimal number %j is taken', async (text) => {
    expect((await call(`${TALLER_THAN.path}?min_height=${encodeURIComponent(text)}`)).status).toBe(200);
  });

  test('a malformed or oversized body with another method → 405 with Allow, the body unread', async () => {
    for (const body of ['{"not": json', 'x'.repeat(2_000_000)]) {
      const response = await call(HEROES_BY_PUBLISHER.path, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(405);
      expect(response.allow).toBe('GET, HEAD');
      expect(response.json.error.code).toBe('method_not_allowed');
    }
  });
});
