import { expect, test } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli, startCli, startWorker } from '../../bench/queue-harness.js';
import { startScriptedMistral } from '../../bench/scripted-mistral.js';
import { redisForTests } from '../support/redis.js';
import { DEMO, driver, fresh, queueFixture, read, stats, stopAll } from './queue-cli.js';

/**
 * The queue backend end to end, as users run it: the built CLI as driver
 * (`generate --queue … --no-local-workers`) and as `nl2api worker` processes against a
 * real Redis (our own redis-server, or REDIS_URL). Every run is compared with the
 * in-process runner's output on the same input. Faults during a run (kill -9 of a worker,
 * a Redis restart, a poison job, SIGTERM): queue-faults.test.ts.
 */

const fx = queueFixture(redisForTests);

test('a queue run on worker processes writes byte for byte what the in-process runner writes; status and runs report it', async () => {
  const { prefix, out } = fresh(fx, 'plain');
  const workers = [startWorker({ url: fx.redis.url, prefix }), startWorker({ url: fx.redis.url, prefix })];
  try {
    const run = driver(fx.redis.url, prefix, out, 'plain-1');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toMatch(
      /queue run plain-1 \(resume with --run plain-1\): 50 item jobs, 13 synthesis batches, 2 databases; waiting for workers/,
    );
    expect(read(out, 'manifest.json')).toBe(read(fx.reference, 'manifest.json'));
    expect(read(out, 'rejections.jsonl')).toBe(read(fx.reference, 'rejections.jsonl'));
    expect(stats(out).timing.queueRunId).toBe('plain-1');
    // The work was done by the workers: their stage metrics are the run's.
    expect(stats(out).timing.stages.gold.runs).toBeGreaterThan(0);

    const status = await runCli(['status', '--queue', fx.redis.url, '--queue-prefix', prefix, '--run', 'plain-1']);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/run plain-1: completed, bird-dev/);
    expect(status.stdout).toMatch(/^item\s+50\s+50\s+0\s/m);
    expect(status.stdout).toMatch(/^rest\.synthesize\s+13\s+13\s+0\s/m);
    expect(status.stdout).toMatch(/^emit\s+2\s+2\s+0\s/m);
    const runs = await runCli(['runs', '--queue', fx.redis.url, '--queue-prefix', prefix]);
    expect(runs.stdout).toMatch(/plain-1\s+completed\s+bird-dev.*slot 50\/50, sel 50\/50, rest 50\/50/);

    // A second run finds everything in the shared store: no item job, no synthesis batch.
    const again = driver(fx.redis.url, prefix, `${out}-again`, 'plain-2');
    expect(await again.exited).toBe(0);
    expect(again.stderr()).toMatch(/0 item jobs, 0 synthesis batches/);
    expect(read(`${out}-again`, 'manifest.json')).toBe(read(fx.reference, 'manifest.json'));

    // --no-cache: a store of the run's own: everything is computed again, and shared by its workers.
    const fresh_ = driver(fx.redis.url, prefix, `${out}-no-cache`, 'plain-3', ['--no-cache']);
    expect(await fresh_.exited).toBe(0);
    expect(fresh_.stderr()).toMatch(/50 item jobs, 13 synthesis batches/);
    expect(read(`${out}-no-cache`, 'manifest.json')).toBe(read(fx.reference, 'manifest.json'));
  } finally {
    await stopAll(workers);
  }
});

test('schedule: a scheduled run is driven by a worker into a new version with a diff against the previous one, and the models it names evaluated', async () => {
  const { prefix } = fresh(fx, 'schedule');
  const base = path.join(fx.tmp, 'nightly');
  const config = path.join(fx.tmp, 'nightly.json');
  writeFileSync(config, JSON.stringify({ evaluate: { models: ['oracle', 'baseline:knn'], formulations: ['slot'] } }));
  const workers = [startWorker({ url: fx.redis.url, prefix })];
  const schedule = (...extra: string[]) =>
    runCli([
      'schedule',
      '--queue',
      fx.redis.url,
      '--queue-prefix',
      prefix,
      '--source',
      DEMO,
      '--out',
      base,
      '--formulations',
      'slot,sel',
      '--progress',
      'none',
      '--config',
      config,
      ...extra,
    ]);
  const latest = () => JSON.parse(readFileSync(path.join(base, 'latest.json'), 'utf8'));
  try {
    const registered = await schedule('--cron', '0 2 * * *', '--name', 'nightly');
    expect(registered.code).toBe(0);
    expect(registered.stdout).toMatch(/schedule nightly: "0 2 \* \* \*", next run \d{4}-/);
    expect((await runCli(['schedule', '--queue', fx.redis.url, '--queue-prefix', prefix, '--list'])).stdout).toMatch(
      /nightly: "0 2 \* \* \*"/,
    );

    expect((await schedule('--now', '--name', 'first')).code).toBe(0);
    await waitFor(() => exists(path.join(base, 'latest.json')));
    const first = latest();
    const firstDir = path.join(base, first.path);
    expect(read(firstDir, 'slot/bookstore.jsonl')).toBe(read(fx.reference, 'slot/bookstore.jsonl'));
    const firstDiff = JSON.parse(read(firstDir, 'diff.json'));
    expect(firstDiff.totals).toMatchObject({ added: 100, removed: 0, changed: 0 });
    // The models the config names, evaluated on the version: scores with nothing to compare yet.
    expect(firstDiff.evaluation.slot.oracle).toEqual({
      attempts: 50,
      completion: { previous: null, current: 1, delta: null },
      intentF1: { previous: null, current: 1, delta: null },
      slotF1: { previous: null, current: 1, delta: null },
    });
    expect(exists(path.join(firstDir, 'eval', 'slot', 'index.html'))).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, 1100)); // versions are named by the second
    expect((await schedule('--now', '--name', 'second')).code).toBe(0);
    await waitFor(() => exists(path.join(base, 'latest.json')) && latest().version !== first.version);
    const second = path.join(base, latest().path);
    const secondDiff = JSON.parse(read(second, 'diff.json'));
    expect(secondDiff).toMatchObject({
      previous: first.path,
      totals: { added: 0, removed: 0, changed: 0, unchanged: 100 },
    });
    // Beside the dataset's changes, the metrics' (none here: the same samples, the same scores).
    const knn = secondDiff.evaluation.slot['baseline:knn'];
    expect(knn.completion.delta).toBe(0);
    expect(knn.completion.previous).toBe(firstDiff.evaluation.slot['baseline:knn'].completion.current);
    // Incremental: the second night found every result in the shared store.
    expect(stats(second).timing.stages.gold?.runs ?? 0).toBe(0);

    expect(
      (await runCli(['schedule', '--queue', fx.redis.url, '--queue-prefix', prefix, '--remove', '--name', 'nightly']))
        .stdout,
    ).toMatch(/removed nightly/);
  } finally {
    await stopAll(workers);
  }
}, 90_000);

test('an LLM run on two workers: replies are shared through Redis, a rerun asks the model nothing, the output equals the in-process one', async () => {
  const llm = await startScriptedMistral({});
  const { prefix, out } = fresh(fx, 'llm');
  const config = path.join(fx.tmp, 'llm.json');
  writeFileSync(
    config,
    JSON.stringify({
      formulations: ['rest'],
      llm: { provider: 'mistral', model: 'scripted', baseUrl: llm.url, requestsPerMinute: 100_000 },
    }),
  );
  const env = { MISTRAL_API_KEY: 'test-key' };
  const workers = [startWorker({ url: fx.redis.url, prefix, env }), startWorker({ url: fx.redis.url, prefix, env })];
  try {
    const inProcess = await runCli(
      [
        'generate',
        '--source',
        DEMO,
        '--out',
        path.join(fx.tmp, 'llm-in-process'),
        '--config',
        config,
        '--progress',
        'none',
      ],
      env,
    );
    expect(inProcess.code).toBe(0);
    const asked = llm.requests.length;
    const run = startCli(
      [
        'generate',
        '--source',
        DEMO,
        '--out',
        out,
        '--config',
        config,
        '--progress',
        'none',
        '--queue',
        fx.redis.url,
        '--queue-prefix',
        prefix,
        '--no-local-workers',
      ],
      env,
    );
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(path.join(fx.tmp, 'llm-in-process'), 'manifest.json'));
    expect(stats(out).timing.llm.total.requests).toBe(llm.requests.length - asked);
    expect(llm.requests.length - asked).toBeGreaterThan(0);

    const before = llm.requests.length;
    const rerun = startCli(
      [
        'generate',
        '--source',
        DEMO,
        '--out',
        `${out}-again`,
        '--config',
        config,
        '--progress',
        'none',
        '--queue',
        fx.redis.url,
        '--queue-prefix',
        prefix,
        '--no-local-workers',
      ],
      env,
    );
    expect(await rerun.exited).toBe(0);
    expect(llm.requests.length).toBe(before);
    expect(read(`${out}-again`, 'manifest.json')).toBe(read(out, 'manifest.json'));
  } finally {
    await stopAll(workers);
    await llm.close();
  }
}, 120_000);

test('a run restricted to some databases (--db) on the queue: the same output as in-process', async () => {
  const { prefix, out } = fresh(fx, 'db');
  const workers = [startWorker({ url: fx.redis.url, prefix })];
  try {
    const inProcess = await runCli([
      'generate',
      '--source',
      DEMO,
      '--out',
      `${out}-in-process`,
      '--db',
      'cycling_club',
      '--formulations',
      'slot,sel',
      '--progress',
      'none',
    ]);
    expect(inProcess.code).toBe(0);
    const run = driver(fx.redis.url, prefix, out, 'db-1', ['--db', 'cycling_club', '--formulations', 'slot,sel']);
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(`${out}-in-process`, 'manifest.json'));
    expect(stats(out).formulations.slot.total.accepted).toBeGreaterThan(0);
  } finally {
    await stopAll(workers);
  }
});

test('an unreachable Redis is a clear error, at once', async () => {
  // "At once" against this machine's own pace: a CLI run that does nothing is the reference.
  let started = Date.now();
  expect((await runCli(['--version'])).code).toBe(0);
  const reference = Date.now() - started;
  started = Date.now();
  const run = await runCli([
    'generate',
    '--source',
    DEMO,
    '--out',
    path.join(fx.tmp, 'nowhere'),
    '--queue',
    'redis://127.0.0.1:1',
    '--progress',
    'none',
  ]);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/nl2api: cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  // Generous: load may vary between the two runs; a CLI retrying for long would not pass.
  expect(Date.now() - started).toBeLessThan(3 * reference + 10_000);
});

function exists(file: string): boolean {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('chains on the queue: each database’s emit gate composes them on a worker; the output equals the in-process one', async () => {
  const { prefix, out } = fresh(fx, 'chain');
  const workers = [startWorker({ url: fx.redis.url, prefix })];
  const args = ['--db', 'bookstore', '--formulations', 'rest,chain'];
  try {
    const inProcess = await runCli([
      'generate',
      '--source',
      DEMO,
      '--out',
      `${out}-in-process`,
      ...args,
      '--progress',
      'none',
    ]);
    expect(inProcess.code).toBe(0);
    const run = driver(fx.redis.url, prefix, out, 'chain-1', args);
    expect(await run.exited).toBe(0);
    for (const file of ['chain/bookstore.jsonl', 'rest/endpoints/bookstore.json', 'rejections.jsonl'])
      expect(read(out, file)).toBe(read(`${out}-in-process`, file));
    expect(stats(out).chain.samples).toBeGreaterThan(0);
    // Composed by the worker: the run's metrics (its workers') count the stage's run.
    expect(stats(out).timing.stages['chain.compose']).toMatchObject({ runs: 1 });
  } finally {
    await stopAll(workers);
  }
});
