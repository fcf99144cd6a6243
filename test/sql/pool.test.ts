import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExecutorClosedError, SqlExecutionError, SqlTimeoutError, SqlWorkerError } from '../../runtime/sql/executor.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import {
  createDb,
  HEROES_SQL,
  isAlive,
  processGroupOf,
  removeTempDirs,
  RUNAWAY_SQL,
  tempDir,
  waitUntil,
} from './fixtures.js';

/** What only the process pool does: timeouts that stop, crash isolation, queueing, close, signals. */

let dbPath: string;
const pools: SqlPool[] = [];
const newPool = (size: number) => {
  const pool = createSqlPool({ size });
  pools.push(pool);
  return pool;
};
const request = (sql: string, params: number[] = [], timeoutMs = 10_000) => ({ dbPath, sql, params, timeoutMs });

beforeAll(() => {
  dbPath = createDb(path.join(tempDir(), 'heroes.sqlite'), HEROES_SQL);
});
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
  removeTempDirs();
});

test('starts no process until the first request', async () => {
  const pool = newPool(4);
  expect(pool.workerPids()).toEqual([]);
  await pool.run(request('SELECT 1'));
  expect(pool.workerPids()).toHaveLength(1);
});

test('a timeout kills the runaway statement’s process and the pool keeps serving', async () => {
  const pool = newPool(1);
  await pool.run(request('SELECT 1'));
  const [pid] = pool.workerPids();
  // RUNAWAY_SQL would count for hours: only the timeout can end it.
  await expect(pool.run(request(RUNAWAY_SQL, [], 300))).rejects.toThrow(SqlTimeoutError);
  await waitUntil(() => !isAlive(pid));
  expect(pool.workerPids()).not.toContain(pid);
  await expect(pool.run(request('SELECT count(*) FROM hero'))).resolves.toEqual({ columns: ['count(*)'], rows: [[4]] });
  expect(pool.workerPids()).toHaveLength(1);
});

test.each(['SIGKILL', 'SIGINT'] as const)(
  'a worker killed with %s fails only its own request, as a lost worker, not as the statement’s error; the pool respawns',
  async (signal) => {
    const pool = newPool(2);
    await pool.run(request('SELECT 1'));
    const [victim] = pool.workerPids();
    const doomed = pool.run(request(RUNAWAY_SQL, [], 60_000)); // the idle worker takes it
    const others = Promise.all(Array.from({ length: 10 }, (_, i) => pool.run(request('SELECT ?', [i]))));
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(victim, signal);
    const error = await doomed.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlWorkerError);
    expect(error).not.toBeInstanceOf(SqlExecutionError);
    expect((error as Error).message).toMatch(new RegExp(`died running the statement .*signal ${signal}`));
    expect((await others).map((result) => result.rows[0][0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await expect(pool.run(request('SELECT 42'))).resolves.toEqual({ columns: ['42'], rows: [[42]] });
    expect(pool.workerPids()).not.toContain(victim);
  },
);

test('a spare worker, started once the pool is in use, takes a killed worker’s place at once', async () => {
  // What a request waits for when a worker must start first: a fresh pool's first answer.
  const fresh = newPool(1);
  let started = Date.now();
  await fresh.run(request('SELECT 1'));
  const startup = Date.now() - started;

  const pool = createSqlPool({ size: 1, spare: 1 });
  pools.push(pool);
  await pool.run(request('SELECT 1'));
  await waitUntil(() => pool.workerPids().length === 2);
  await new Promise((resolve) => setTimeout(resolve, 3 * startup)); // the spare is ready
  await expect(pool.run(request(RUNAWAY_SQL, [], 300))).rejects.toThrow(SqlTimeoutError);
  started = Date.now();
  await expect(pool.run(request('SELECT count(*) FROM hero'))).resolves.toEqual({ columns: ['count(*)'], rows: [[4]] });
  expect(Date.now() - started).toBeLessThan(startup / 2);
  await waitUntil(() => pool.workerPids().length === 2); // and another spare is on its way
});

/** The files a process holds open (Linux: /proc/<pid>/fd). */
function openFiles(pid: number): string[] {
  const dir = `/proc/${pid}/fd`;
  return readdirSync(dir).flatMap((fd) => {
    try {
      return [readlinkSync(path.join(dir, fd))];
    } catch {
      return []; // closed while we looked
    }
  });
}

(existsSync('/proc/self/fd') ? test : test.skip)(
  'forget closes a database in every worker, with the views over it; a later request opens it again',
  async () => {
    const pool = newPool(1);
    const overlay = createDb(
      path.join(tempDir(), 'overlay.sqlite'),
      'CREATE TABLE extra (x INTEGER); INSERT INTO extra VALUES (7);',
    );
    const view = { overlays: [overlay], reverseScans: false };
    await pool.run(request('SELECT count(*) FROM hero'));
    await expect(pool.run({ ...request('SELECT x FROM extra'), view })).resolves.toEqual({
      columns: ['x'],
      rows: [[7]],
    });
    const [pid] = pool.workerPids();
    expect(openFiles(pid)).toEqual(expect.arrayContaining([dbPath, overlay]));

    pool.forget(dbPath);
    await waitUntil(() => !openFiles(pid).some((file) => file === dbPath || file === overlay));

    await expect(pool.run(request('SELECT count(*) FROM hero'))).resolves.toEqual({
      columns: ['count(*)'],
      rows: [[4]],
    });
    expect(pool.workerPids()).toEqual([pid]);
    expect(openFiles(pid)).toContain(dbPath);
  },
);

test('requests beyond the pool size queue and all complete, in any mix with failures', async () => {
  const pool = newPool(2);
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, (_, i) =>
      pool.run(request(i % 10 === 9 ? 'SELECT nope' : 'SELECT ? * 2', i % 10 === 9 ? [] : [i])),
    ),
  );
  expect(pool.workerPids().length).toBeLessThanOrEqual(2);
  results.forEach((result, i) => {
    if (i % 10 === 9) expect(result.status).toBe('rejected');
    else expect(result).toEqual({ status: 'fulfilled', value: { columns: ['? * 2'], rows: [[i * 2]] } });
  });
});

test('a timeout does not hold up queued requests for longer than it lasts', async () => {
  const pool = newPool(1);
  const runaway = pool.run(request(RUNAWAY_SQL, [], 300));
  const queued = pool.run(request('SELECT 7'));
  await expect(runaway).rejects.toThrow(SqlTimeoutError);
  await expect(queued).resolves.toEqual({ columns: ['7'], rows: [[7]] });
});

test('close() stops running statements, rejects waiting ones and ends every process', async () => {
  const pool = createSqlPool({ size: 2 });
  await pool.run(request('SELECT 1'));
  const running = [pool.run(request(RUNAWAY_SQL, [], 60_000)), pool.run(request(RUNAWAY_SQL, [], 60_000))];
  const waiting = pool.run(request('SELECT 1'));
  const outcomes = Promise.allSettled([...running, waiting]);
  await waitUntil(() => pool.workerPids().length === 2);
  const pids = pool.workerPids();
  await pool.close(); // resolves at all: it did not wait for the runaways (hours each)
  for (const outcome of await outcomes) {
    expect(outcome).toMatchObject({
      status: 'rejected',
      reason: { name: 'ExecutorClosedError', message: 'executor closed' },
    });
  }
  expect(pids.filter(isAlive)).toEqual([]);
  await expect(pool.run(request('SELECT 1'))).rejects.toThrow(ExecutorClosedError);
});

describe('jobs sent ahead (lookahead)', () => {
  const aheadPool = (size: number) => {
    const pool = createSqlPool({ size, lookahead: 1 });
    pools.push(pool);
    return pool;
  };

  test('a busy worker runs the job sent ahead after its own, in order, each timed by the worker', async () => {
    const pool = aheadPool(1);
    const slow =
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c';
    const results = await Promise.all([slow, 'SELECT 2', 'SELECT 3'].map((sql) => pool.runTimed(request(sql))));
    expect(results.map(({ result }) => result.rows[0][0])).toEqual([300000, 2, 3]);
    expect(pool.workerPids()).toHaveLength(1);
    for (const { runMs, cpuMs } of results) {
      expect(runMs).toBeGreaterThanOrEqual(0);
      expect(cpuMs).toBeGreaterThanOrEqual(0);
    }
    // The worker's own clock: the counting statement ran longer than the one queued behind it,
    // whose wait for it is not its running time.
    expect(results[0].runMs).toBeGreaterThan(results[1].runMs);
  });

  test('a job sent ahead to a worker killed at a timeout is not failed: it runs on the next worker', async () => {
    const pool = aheadPool(1);
    await pool.run(request('SELECT 1'));
    const runaway = pool.run(request(RUNAWAY_SQL, [], 500));
    const behind = pool.run(request('SELECT count(*) FROM hero'));
    await expect(runaway).rejects.toThrow(SqlTimeoutError);
    await expect(behind).resolves.toEqual({ columns: ['count(*)'], rows: [[4]] });
    expect(pool.workerRecycles()).toBe(1);
  });

  test('a job sent ahead to a worker that dies is not failed; the job it was running is, as a lost worker', async () => {
    const pool = aheadPool(1);
    await pool.run(request('SELECT 1'));
    const [victim] = pool.workerPids();
    const doomed = pool.run(request(RUNAWAY_SQL, [], 60_000));
    const behind = pool.run(request('SELECT 5'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(victim, 'SIGKILL');
    await expect(doomed).rejects.toThrow(SqlWorkerError);
    await expect(behind).resolves.toEqual({ columns: ['5'], rows: [[5]] });
  });

  test('an answer too big for the pipe reaches the pool before the long job sent ahead of it starts', async () => {
    // The first answer (~4 MB) cannot leave in one write; had the worker started the runaway
    // meanwhile, the rest of it would wait for the runaway's end, and the pool, still waiting
    // for the first job, would stop the worker at the first job's timeout and blame it.
    const pool = createSqlPool({ size: 1, lookahead: 1 });
    await pool.run(request('SELECT 1'));
    const big =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT x, 'row ' || x FROM c";
    const first = pool.run(request(big, [], 20_000));
    const runaway = pool.run(request(RUNAWAY_SQL, [], 60_000));
    const answer = await first;
    expect(answer.rows).toHaveLength(200000);
    const stopped = expect(runaway).rejects.toThrow(ExecutorClosedError);
    await pool.close();
    await stopped;
  });

  test('no job is sent ahead to a worker whose statement has run a while: it waits for another worker', async () => {
    const pool = createSqlPool({ size: 2, lookahead: 1 });
    await pool.run(request('SELECT 1')); // one worker started
    const runaway = pool.run(request(RUNAWAY_SQL, [], 60_000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Sent ahead, it would wait out the runaway's 60 s; it waits for a second worker to start instead.
    const quick = pool.run(request('SELECT 3'));
    const first = await Promise.race([quick.then(() => 'quick'), runaway.catch(() => 'runaway')]);
    expect(first).toBe('quick');
    await pool.close();
    await expect(runaway).rejects.toThrow(ExecutorClosedError);
  });

  test('close() rejects the jobs sent ahead with the one running', async () => {
    const pool = createSqlPool({ size: 1, lookahead: 1 });
    await pool.run(request('SELECT 1'));
    const outcomes = Promise.allSettled([
      pool.run(request(RUNAWAY_SQL, [], 60_000)),
      pool.run(request('SELECT 1')),
      pool.run(request('SELECT 2')),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await pool.close();
    for (const outcome of await outcomes)
      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'ExecutorClosedError' } });
  });
});

test('refuses a pool without workers', () => {
  expect(() => createSqlPool({ size: 0 })).toThrow(/positive integer/);
});

/**
 * Runs an ES module script in a fresh Node process, as a user's program would: on the sources
 * (with tsx) or on the build (`npm test` builds first), without the test run's prebuilt worker.
 */
function runScript(body: string, from: 'sources' | 'build' = 'sources'): string {
  const poolUrl = new URL(
    from === 'sources' ? '../../runtime/sql/pool.ts' : '../../dist/runtime/sql/pool.js',
    import.meta.url,
  ).href;
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const script = `
    import { createSqlPool } from ${JSON.stringify(poolUrl)};
    const run = (pool, n) => pool.run({ dbPath: ${JSON.stringify(dbPath)}, sql: 'SELECT ?', params: [n], timeoutMs: 10000 });
    ${body}
  `;
  const { NL2API_SQL_WORKER_MODULE: _prebuilt, ...env } = process.env;
  return execFileSync(
    process.execPath,
    [...(from === 'sources' ? ['--import', tsx] : []), '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
      env,
      timeout: 50_000,
    },
  ); // a hang guard only
}

/** A worker's command line, as /proc shows it (its arguments joined by spaces). */
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');

test('workers run the module NL2API_SQL_WORKER_MODULE names, else worker.ts’s sibling: built, or through tsx from the sources', async () => {
  const prebuilt = process.env.NL2API_SQL_WORKER_MODULE;
  expect(prebuilt).toMatch(/test-runs\/.*\/runtime\/sql\/worker\.mjs$/); // test/support/global-setup.js
  const pool = newPool(1);
  await pool.run(request('SELECT 1'));
  expect(commandLine(pool.workerPids()[0])).toContain(prebuilt);
  const workerCommand = `
    const pool = createSqlPool({ size: 1 });
    await run(pool, 1);
    console.log((await import('node:fs')).readFileSync(\`/proc/\${pool.workerPids()[0]}/cmdline\`, 'utf8').split('\\0').join(' '));
    await pool.close();
  `;
  const fromSources = runScript(workerCommand, 'sources');
  expect(fromSources).toMatch(/--import \S*tsx\S* .*runtime\/sql\/worker\.ts/);
  const fromBuild = runScript(workerCommand, 'build');
  expect(fromBuild).toMatch(/dist\/runtime\/sql\/worker\.js/);
  expect(fromBuild).not.toMatch(/--import|test-runs/);
});

test('a process that used the pool exits, even without close()', () => {
  const output = runScript(`
    const pool = createSqlPool({ size: 2 });
    const results = await Promise.all([1, 2, 3].map((n) => run(pool, n)));
    console.log(JSON.stringify(results.map((r) => r.rows[0][0])));
  `);
  expect(output.trim()).toBe('[1,2,3]');
});

test.each([0, 1])(
  'workers that cannot start fail the waiting requests instead of respawning forever (%i spare)',
  (spare) => {
    const output = runScript(`
    const pool = createSqlPool({ size: 2, spare: ${spare} });
    process.env.NODE_OPTIONS = '--require /nonexistent/nl2api-preload.cjs'; // inherited by the workers
    const failed = await Promise.allSettled([1, 2, 3].map((n) => run(pool, n)));
    delete process.env.NODE_OPTIONS;
    const recovered = await run(pool, 4);
    await pool.close();
    console.log(JSON.stringify({ failed: failed.map((f) => f.reason ? \`\${f.reason.name}: \${f.reason.message}\` : 'resolved'), recovered: recovered.rows }));
  `);
    const { failed, recovered } = JSON.parse(output) as { failed: string[]; recovered: unknown };
    expect(failed).toHaveLength(3);
    for (const message of failed)
      expect(message).toMatch(/^SqlWorkerError: SQL worker failed to start \(exit code 1.*nonexistent/s);
    expect(recovered).toEqual([[4]]);
  },
);

/** Counts to 10^7: a second or so, long enough to be running when a signal arrives, and then done. */
const SLOW_SQL =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT count(*) FROM c';

interface Script {
  pid: number;
  /** The next line the script prints, parsed as JSON. */
  next(): Promise<unknown>;
  exited: Promise<number | null>;
}

/** Like runScript, but running on: in a process group of its own, as a terminal's foreground job. */
function startScript(body: string, env: NodeJS.ProcessEnv = process.env): Script {
  const poolUrl = new URL('../../runtime/sql/pool.ts', import.meta.url).href;
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const script = `import { createSqlPool } from ${JSON.stringify(poolUrl)};\nconst dbPath = ${JSON.stringify(dbPath)};\n${body}`;
  const child = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const reader = waiting.shift();
      if (reader) reader(line);
      else lines.push(line);
    }
  });
  return {
    pid: child.pid!,
    next: async () => JSON.parse(lines.shift() ?? (await new Promise<string>((resolve) => waiting.push(resolve)))),
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
}

test('workers have a process group of their own: a Ctrl-C to the parent’s group does not reach them', async () => {
  const script = startScript(`
    const pool = createSqlPool({ size: 1 });
    await pool.run({ dbPath, sql: 'SELECT 1', params: [], timeoutMs: 10000 });
    // As the CLI does on a first Ctrl-C: finish what is in flight.
    process.on('SIGINT', () => console.log(JSON.stringify('SIGINT')));
    const slow = pool.run({ dbPath, sql: ${JSON.stringify(SLOW_SQL)}, params: [], timeoutMs: 600000 });
    console.log(JSON.stringify({ parent: process.pid, worker: pool.workerPids()[0] }));
    console.log(JSON.stringify(await slow.then((result) => result.rows, (error) => error.name + ': ' + error.message)));
    await pool.close();
  `);
  const { parent, worker } = (await script.next()) as { parent: number; worker: number };
  expect(processGroupOf(parent)).toBe(parent);
  expect(processGroupOf(worker)).not.toBe(parent);
  process.kill(-parent, 'SIGINT'); // the whole foreground group, as a terminal's Ctrl-C
  expect(await script.next()).toBe('SIGINT');
  expect(await script.next()).toEqual([[10_000_000]]);
  expect(await script.exited).toBe(0);
}, 60_000);

// The kernel's parent-death signal where setpriv is found on the PATH, else the worker's own watchdog thread.
test.each([
  ['setpriv', process.env.PATH],
  ['a watchdog thread', ''],
])(
  'workers do not outlive a parent killed with SIGKILL, idle or in the middle of a runaway statement (%s)',
  async (_, PATH) => {
    const script = startScript(
      `
    const pool = createSqlPool({ size: 2 });
    await Promise.all([1, 2].map(() => pool.run({ dbPath, sql: 'SELECT 1', params: [], timeoutMs: 10000 })));
    void pool.run({ dbPath, sql: ${JSON.stringify(RUNAWAY_SQL)}, params: [], timeoutMs: 600000 }).catch(() => {});
    console.log(JSON.stringify(pool.workerPids()));
    setInterval(() => {}, 1000);
  `,
      { ...process.env, PATH },
    );
    const workers = (await script.next()) as number[];
    expect(workers).toHaveLength(2);
    const kernelGuarded = (pid: number) =>
      readFileSync(`/proc/${pid}/environ`, 'utf8').includes('NL2API_SQL_WORKER_PDEATHSIG=1');
    expect(workers.map(kernelGuarded)).toEqual(PATH ? [true, true] : [false, false]);
    process.kill(script.pid, 'SIGKILL');
    await script.exited;
    await waitUntil(() => !workers.some(isAlive), 20_000);
  },
  60_000,
);
