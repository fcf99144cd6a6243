import { createRestServer, type RestServer } from '../../runtime/rest/server.js';
import { createLanedExecutor, type LanedExecutor } from '../../runtime/sql/lanes.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import { captureLogger, COUNT_UP_TO, HEROES_BY_PUBLISHER, HEROES_ENDPOINTS, heroesDb } from './fixtures.js';

/** The REST server over the laned executor (nl2api serve): a full lane is a 503 with Retry-After. */

let executor: LanedExecutor;
let server: RestServer;
const logLines: string[] = [];

beforeAll(async () => {
  executor = createLanedExecutor({
    fast: { workers: 1, maxInFlight: 16 },
    slow: { workers: 1, maxInFlight: 1 },
    fastBudgetMs: 1000,
    promoteAfter: 3,
  });
  server = await createRestServer({
    databases: [{ db: heroesDb(tempDir()), endpoints: HEROES_ENDPOINTS }],
    executor,
    timeoutMs: 60_000,
    title: 'heroes test',
    version: '1',
    logger: captureLogger(logLines),
  });
});

afterAll(async () => {
  await server?.close();
  await executor?.close();
  removeTempDirs();
});

const url = (path: string, query: Record<string, string>) => `${server.url}${path}?${new URLSearchParams(query)}`;

test('a full slow lane answers 503 with Retry-After at once, while the fast lane keeps answering', async () => {
  const runaway = url(COUNT_UP_TO.path, { n: '1000000000000' });
  // Past the fast budget: moved to the slow lane, which it then fills.
  const occupying = fetch(runaway).catch((error: unknown) => error);
  const deadline = Date.now() + 30_000;
  let refused: Response | undefined;
  while (Date.now() < deadline) {
    const response = await fetch(runaway);
    if (response.status === 503) {
      refused = response;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(refused?.headers.get('retry-after')).toBe('1');
  expect(await refused?.json()).toEqual({ error: { code: 'unavailable', message: expect.any(String) } });
  const served = await fetch(url(HEROES_BY_PUBLISHER.path, { publisher: 'Marvel' }));
  expect(served.status).toBe(200);
  // Load, not a fault: nothing logged as a failure.
  expect(logLines.join('')).not.toMatch(/REST request failed/);
  await executor.close();
  await occupying;
});
