import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { doneIn, runCli, startCli, startWorker, waitForProgress, type CliProcess } from '../../bench/queue-harness.js';
import { startScriptedMistral } from '../../bench/scripted-mistral.js';
import { redisForTests, startRedisServer, type TestRedis } from '../support/redis.js';

/**
 * The queue backend end to end, as users run it: the built CLI as driver
 * (`generate --queue … --no-local-workers`) and as `nl2api worker` processes against a
 * real Redis (our own redis-server, or REDIS_URL). Every run is compared with the
 * in-process runner's output on the same input; faults (kill -9 of a worker, a Redis
 * restart, a poison job) must lose and duplicate nothing.
 */

const DEMO = path.resolve('seeds/demo');
let redis: TestRedis;
let tmp: string;
let reference: string;
let prefixes = 0;

beforeAll(async () => {
  redis = await redisForTests();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-queue-'));
  reference = path.join(tmp, 'in-process');
  const run = await runCli(['generate', '--source', DEMO, '--out', reference, '--progress', 'none']);
  expect(run.code).toBe(0);
}, 120_000);

afterAll(async () => {
  await redis?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');
const stats = (dir: string) => JSON.parse(read(dir, 'stats.json'));

/** A fresh key prefix and out dir per run, so runs never see each other's cache. */
function fresh(name: string) {
  return { prefix: `${redis.prefix}${name}${prefixes++}`, out: path.join(tmp, name) };
}

function driver(url: string, prefix: string, out: string, runId: string, extra: string[] = []): CliProcess {
  return startCli([
    'generate',
    '--source',
    DEMO,
    '--out',
    out,
    '--progress',
    'none',
    '--queue',
    url,
    '--queue-prefix',
    prefix,
    '--no-local-workers',
    '--run',
    runId,
    ...extra,
  ]);
}

async function stopAll(workers: CliProcess[]): Promise<void> {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
}

/** Every instance ends exactly once per formulation, and the stats say so. */
function expectCountsAddUp(dir: string): void {
  for (const [, f] of Object.entries<{ total: { input: number; accepted: number; rejected: number } }>(
    stats(dir).formulations,
  )) {
    expect(f.total.input).toBe(50);
    expect(f.total.accepted + f.total.rejected).toBe(50);
  }
}

test('a queue run on worker processes writes byte for byte what the in-process runner writes; status and runs report it', async () => {
  const { prefix, out } = fresh('plain');
  const workers = [startWorker({ url: redis.url, prefix }), startWorker({ url: redis.url, prefix })];
  try {
    const run = driver(redis.url, prefix, out, 'plain-1');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toMatch(
      /queue run plain-1 \(resume with --run plain-1\): 50 item jobs, 13 synthesis batches, 2 databases; waiting for workers/,
    );
    expect(read(out, 'manifest.json')).toBe(read(reference, 'manifest.json'));
    expect(read(out, 'rejections.jsonl')).toBe(read(reference, 'rejections.jsonl'));
    expect(stats(out).timing.queueRunId).toBe('plain-1');
    // The work was done by the workers: their stage metrics are the run's.
    expect(stats(out).timing.stages.gold.runs).toBeGreaterThan(0);

    const status = await runCli(['status', '--queue', redis.url, '--queue-prefix', prefix, '--run', 'plain-1']);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/run plain-1: completed, bird-dev/);
    expect(status.stdout).toMatch(/^item\s+50\s+50\s+0\s/m);
    expect(status.stdout).toMatch(/^rest\.synthesize\s+13\s+13\s+0\s/m);
    expect(status.stdout).toMatch(/^emit\s+2\s+2\s+0\s/m);
    const runs = await runCli(['runs', '--queue', redis.url, '--queue-prefix', prefix]);
    expect(runs.stdout).toMatch(/plain-1\s+completed\s+bird-dev.*slot 48\/50, sel 48\/50, rest 50\/50/);

    // A second run finds everything in the shared store: no item job, no synthesis batch.
    const again = driver(redis.url, prefix, `${out}-again`, 'plain-2');
    expect(await again.exited).toBe(0);
    expect(again.stderr()).toMatch(/0 item jobs, 0 synthesis batches/);
    expect(read(`${out}-again`, 'manifest.json')).toBe(read(reference, 'manifest.json'));

    // --no-cache: a store of the run's own: everything is computed again, and shared by its workers.
    const fresh_ = driver(redis.url, prefix, `${out}-no-cache`, 'plain-3', ['--no-cache']);
    expect(await fresh_.exited).toBe(0);
    expect(fresh_.stderr()).toMatch(/50 item jobs, 13 synthesis batches/);
    expect(read(`${out}-no-cache`, 'manifest.json')).toBe(read(reference, 'manifest.json'));
  } finally {
    await stopAll(workers);
  }
});

test('kill -9 of a worker mid-run: its jobs are taken back, the run completes with nothing lost or duplicated', async () => {
  const { prefix, out } = fresh('kill');
  const victim = startWorker({ url: redis.url, prefix, concurrency: 1 });
  const workers = [victim, startWorker({ url: redis.url, prefix, concurrency: 1 })];
  try {
    const run = driver(redis.url, prefix, out, 'kill-1');
    const before = await waitForProgress(redis.url, prefix, 'kill-1', (p) => doneIn(p, 'item') >= 10);
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBeNull();
    expect(doneIn(before, 'item')).toBeLessThan(50);
    workers.push(startWorker({ url: redis.url, prefix, concurrency: 1 })); // restarted
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(reference, 'manifest.json'));
    expectCountsAddUp(out);
    const after = await waitForProgress(redis.url, prefix, 'kill-1', () => true);
    expect(after.map((p) => [p.group, p.done, p.failed])).toEqual([
      ['item', 50, 0],
      ['rest.synthesize', 13, 0],
      ['rest.dedup', 2, 0],
      ['rest.verify', 50, 0],
      ['emit', 2, 0],
    ]);
  } finally {
    await stopAll(workers);
  }
}, 90_000);

test('Redis restarted mid-run (with persistence): workers and driver reconnect, the run resumes and completes', async () => {
  const own = await startRedisServer({ persistence: true });
  const prefix = 'restart';
  const out = path.join(tmp, 'restart');
  const workers = [
    startWorker({ url: own.url, prefix, concurrency: 1 }),
    startWorker({ url: own.url, prefix, concurrency: 1 }),
  ];
  try {
    const run = driver(own.url, prefix, out, 'restart-1');
    const before = await waitForProgress(own.url, prefix, 'restart-1', (p) => doneIn(p, 'item') >= 10);
    await own.restart();
    expect(await run.exited).toBe(0);
    expect(doneIn(before, 'item')).toBeLessThan(50);
    expect(read(out, 'manifest.json')).toBe(read(reference, 'manifest.json'));
    expectCountsAddUp(out);
  } finally {
    await stopAll(workers);
    await own.stop();
  }
}, 90_000);

test('a poison job (it kills its worker) is retried, then rejected as job_failed; the run does not stall and nothing else changes', async () => {
  const { prefix, out } = fresh('poison');
  const POISON = '3'; // bookstore, accepted in every formulation in-process
  const env = { NL2API_POISON: POISON };
  const workers: CliProcess[] = [];
  const spawn = () => {
    const w = startWorker({ url: redis.url, prefix, concurrency: 2, lockDurationMs: 3000, env });
    workers.push(w);
    // A supervisor restarts what dies, as systemd or Kubernetes would.
    void w.exited.then(() => supervising && spawn());
  };
  let supervising = true;
  spawn();
  spawn();
  try {
    const run = driver(redis.url, prefix, out, 'poison-1');
    expect(await run.exited).toBe(0);
    expect(workers.length).toBeGreaterThan(2); // the poison did kill workers
    expectCountsAddUp(out);
    const rejections = read(out, 'rejections.jsonl')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const poisoned = rejections.filter((r) => r.id === POISON);
    expect(poisoned.map((r) => [r.formulation, r.category])).toEqual([
      ['slot', 'job_failed'],
      ['sel', 'job_failed'],
      ['rest', 'job_failed'],
    ]);
    expect(poisoned[0].message).toMatch(/item job poison-1\.item\.3 failed/);
    // Everything else is exactly the in-process output (REST loses the poisoned batch: 4 instances).
    const others = (dir: string, file: string) =>
      read(dir, file)
        .split('\n')
        .filter((line) => line && !line.includes(`"sample_id":"${POISON}"`));
    for (const f of ['slot', 'sel'])
      expect(others(out, `${f}/bookstore.jsonl`)).toEqual(others(reference, `${f}/bookstore.jsonl`));
    expect(read(out, 'slot/cycling_club.jsonl')).toBe(read(reference, 'slot/cycling_club.jsonl'));
    const rest = stats(out).formulations.rest.total;
    // The poisoned instance's gold was never computed (its item and batch jobs died): its REST
    // sample fails where its SLOT/SEL ones do; its batch's three others at rest.synthesize.
    expect(poisoned.map((r) => r.stage)).toEqual(['gold', 'gold', 'gold']);
    expect(rest.rejectedBy['gold:job_failed']).toBe(1);
    expect(rest.rejectedBy['rest.synthesize:job_failed']).toBe(3);
    expect(rest.accepted).toBe(46);
    // The failed jobs are kept for inspection.
    const status = await runCli([
      'status',
      '--queue',
      redis.url,
      '--queue-prefix',
      prefix,
      '--run',
      'poison-1',
      '--failed',
    ]);
    expect(status.stdout).toMatch(/^item\s+50\s+49\s+1\s/m);
    expect(status.stdout).toMatch(
      /failed jobs:\n.*\npoison-1\.item\.3\s+item\s+\d+\s+job stalled more than allowable limit/,
    );
    expect(status.stdout).toMatch(/poison-1\.synth\.bookstore\.0\s+rest\.synthesize/);
  } finally {
    supervising = false;
    await stopAll(workers);
  }
}, 120_000);

test('SIGTERM: a worker finishes the jobs in hand and exits cleanly', async () => {
  const { prefix, out } = fresh('sigterm');
  const first = startWorker({ url: redis.url, prefix, concurrency: 1 });
  const workers = [first];
  try {
    const run = driver(redis.url, prefix, out, 'term-1');
    await waitForProgress(redis.url, prefix, 'term-1', (p) => doneIn(p, 'item') >= 3);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.stderr()).toMatch(/SIGTERM: finishing the jobs in hand[\s\S]*worker: stopped/);
    workers.push(startWorker({ url: redis.url, prefix }));
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(reference, 'manifest.json'));
  } finally {
    await stopAll(workers);
  }
}, 90_000);

test('schedule: a scheduled run is driven by a worker into a new version with a diff against the previous one, and the models it names evaluated', async () => {
  const { prefix } = fresh('schedule');
  const base = path.join(tmp, 'nightly');
  const config = path.join(tmp, 'nightly.json');
  writeFileSync(config, JSON.stringify({ evaluate: { models: ['oracle', 'baseline:knn'], formulations: ['slot'] } }));
  const workers = [startWorker({ url: redis.url, prefix })];
  const schedule = (...extra: string[]) =>
    runCli([
      'schedule',
      '--queue',
      redis.url,
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
    expect((await runCli(['schedule', '--queue', redis.url, '--queue-prefix', prefix, '--list'])).stdout).toMatch(
      /nightly: "0 2 \* \* \*"/,
    );

    expect((await schedule('--now', '--name', 'first')).code).toBe(0);
    await waitFor(() => exists(path.join(base, 'latest.json')));
    const first = latest();
    const firstDir = path.join(base, first.path);
    expect(read(firstDir, 'slot/bookstore.jsonl')).toBe(read(reference, 'slot/bookstore.jsonl'));
    const firstDiff = JSON.parse(read(firstDir, 'diff.json'));
    expect(firstDiff.totals).toMatchObject({ added: 96, removed: 0, changed: 0 });
    // The models the config names, evaluated on the version: scores with nothing to compare yet.
    expect(firstDiff.evaluation.slot.oracle).toEqual({
      attempts: 48,
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
      totals: { added: 0, removed: 0, changed: 0, unchanged: 96 },
    });
    // Beside the dataset's changes, the metrics' (none here: the same samples, the same scores).
    const knn = secondDiff.evaluation.slot['baseline:knn'];
    expect(knn.completion.delta).toBe(0);
    expect(knn.completion.previous).toBe(firstDiff.evaluation.slot['baseline:knn'].completion.current);
    // Incremental: the second night found every result in the shared store.
    expect(stats(second).timing.stages.gold?.runs ?? 0).toBe(0);

    expect(
      (await runCli(['schedule', '--queue', redis.url, '--queue-prefix', prefix, '--remove', '--name', 'nightly']))
        .stdout,
    ).toMatch(/removed nightly/);
  } finally {
    await stopAll(workers);
  }
}, 90_000);

test('an LLM run on two workers: replies are shared through Redis, a rerun asks the model nothing, the output equals the in-process one', async () => {
  const llm = await startScriptedMistral({});
  const { prefix, out } = fresh('llm');
  const config = path.join(tmp, 'llm.json');
  writeFileSync(
    config,
    JSON.stringify({
      formulations: ['rest'],
      llm: { provider: 'mistral', model: 'scripted', baseUrl: llm.url, requestsPerMinute: 100_000 },
    }),
  );
  const env = { MISTRAL_API_KEY: 'test-key' };
  const workers = [startWorker({ url: redis.url, prefix, env }), startWorker({ url: redis.url, prefix, env })];
  try {
    const inProcess = await runCli(
      [
        'generate',
        '--source',
        DEMO,
        '--out',
        path.join(tmp, 'llm-in-process'),
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
        redis.url,
        '--queue-prefix',
        prefix,
        '--no-local-workers',
      ],
      env,
    );
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(path.join(tmp, 'llm-in-process'), 'manifest.json'));
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
        redis.url,
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
  const { prefix, out } = fresh('db');
  const workers = [startWorker({ url: redis.url, prefix })];
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
    const run = driver(redis.url, prefix, out, 'db-1', ['--db', 'cycling_club', '--formulations', 'slot,sel']);
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
    path.join(tmp, 'nowhere'),
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
