import { createRestServer, type RestServer } from '../../runtime/rest/server.js';
import { measureThroughput } from '../../runtime/rest/throughput.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import { captureLogger, HEROES_BY_PUBLISHER, heroesDb } from './fixtures.js';

/**
 * The load-measurement helper, briefly, against a loopback test server: that it measures
 * without errors and reports well-formed figures. How fast the server is is the benchmark's
 * question (`npm run bench`, bench/rest-throughput.ts), not a test's: a loaded machine may
 * complete no request at all in a short window.
 */

let pool: SqlPool;
let server: RestServer;

beforeAll(async () => {
  pool = createSqlPool({ size: 2 });
  server = await createRestServer({
    databases: [{ db: heroesDb(tempDir()), endpoints: [HEROES_BY_PUBLISHER] }],
    executor: pool,
    timeoutMs: 5000,
    title: 't',
    version: '1',
    logger: captureLogger([]),
  });
});

afterAll(async () => {
  await server?.close();
  await pool?.close();
  removeTempDirs();
});

test('measures requests/s and latency percentiles with autocannon, without errors', async () => {
  const result = await measureThroughput(server.url, `${HEROES_BY_PUBLISHER.path}?publisher=DC`, {
    connections: 4,
    durationSeconds: 1,
  });
  expect(result.errors).toBe(0);
  for (const figure of [result.requestsPerSecond, result.p50Ms, result.p99Ms]) {
    expect(Number.isFinite(figure)).toBe(true);
    expect(figure).toBeGreaterThanOrEqual(0);
  }
  expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
});

test('refuses anything but loopback', async () => {
  await expect(measureThroughput('http://example.com', '/', { connections: 1, durationSeconds: 1 })).rejects.toThrow(
    /loopback only/,
  );
});
