import { expect, test } from '@jest/globals';
import path from 'node:path';
import { doneIn, runCli, startWorker, waitForProgress, type CliProcess } from '../../bench/queue-harness.js';
import { redisForTests, startRedisServer } from '../support/redis.js';
import { driver, expectCountsAddUp, fresh, queueFixture, read, stats, stopAll } from './queue-cli.js';

/**
 * Faults during a queue run, on the built CLI's driver and worker processes against a real
 * Redis (queue-run.test.ts runs them without faults): kill -9 of a worker, a Redis restart, a
 * poison job, SIGTERM. Each must lose and duplicate nothing: the output is the in-process
 * runner's on the same input.
 */

const fx = queueFixture(redisForTests);

test('kill -9 of a worker mid-run: its jobs are taken back, the run completes with nothing lost or duplicated', async () => {
  const { prefix, out } = fresh(fx, 'kill');
  const victim = startWorker({ url: fx.redis.url, prefix, concurrency: 1 });
  const workers = [victim, startWorker({ url: fx.redis.url, prefix, concurrency: 1 })];
  try {
    const run = driver(fx.redis.url, prefix, out, 'kill-1');
    const before = await waitForProgress(fx.redis.url, prefix, 'kill-1', (p) => doneIn(p, 'item') >= 10);
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBeNull();
    expect(doneIn(before, 'item')).toBeLessThan(50);
    workers.push(startWorker({ url: fx.redis.url, prefix, concurrency: 1 })); // restarted
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(fx.reference, 'manifest.json'));
    expectCountsAddUp(out);
    const after = await waitForProgress(fx.redis.url, prefix, 'kill-1', () => true);
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
  const out = path.join(fx.tmp, 'restart');
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
    expect(read(out, 'manifest.json')).toBe(read(fx.reference, 'manifest.json'));
    expectCountsAddUp(out);
  } finally {
    await stopAll(workers);
    await own.stop();
  }
}, 90_000);

test('a poison job (it kills its worker) is retried, then rejected as job_failed; the run does not stall and nothing else changes', async () => {
  const { prefix, out } = fresh(fx, 'poison');
  const POISON = '3'; // bookstore, accepted in every formulation in-process
  const env = { NL2API_POISON: POISON };
  const workers: CliProcess[] = [];
  const spawn = () => {
    const w = startWorker({ url: fx.redis.url, prefix, concurrency: 2, lockDurationMs: 3000, env });
    workers.push(w);
    // A supervisor restarts what dies, as systemd or Kubernetes would.
    void w.exited.then(() => supervising && spawn());
  };
  let supervising = true;
  spawn();
  spawn();
  try {
    const run = driver(fx.redis.url, prefix, out, 'poison-1');
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
      expect(others(out, `${f}/bookstore.jsonl`)).toEqual(others(fx.reference, `${f}/bookstore.jsonl`));
    expect(read(out, 'slot/cycling_club.jsonl')).toBe(read(fx.reference, 'slot/cycling_club.jsonl'));
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
      fx.redis.url,
      '--queue-prefix',
      prefix,
      '--run',
      'poison-1',
      '--failed',
    ]);
    expect(status.stdout).toMatch(/^item\s+50\s+49\s+1\s/m);
    expect(status.stdout).toMatch(
      /failed jobs:\n.*\npoison-1\.item\.3\s+item\s+\d+\s+poison job: it killed its worker 2 times running alone/,
    );
    expect(status.stdout).toMatch(/poison-1\.synth\.bookstore\.0\s+rest\.synthesize/);
  } finally {
    supervising = false;
    await stopAll(workers);
  }
}, 120_000);

test('SIGTERM: a worker finishes the jobs in hand and exits cleanly', async () => {
  const { prefix, out } = fresh(fx, 'sigterm');
  const first = startWorker({ url: fx.redis.url, prefix, concurrency: 1 });
  const workers = [first];
  try {
    const run = driver(fx.redis.url, prefix, out, 'term-1');
    await waitForProgress(fx.redis.url, prefix, 'term-1', (p) => doneIn(p, 'item') >= 3);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.stderr()).toMatch(/SIGTERM: finishing the jobs in hand[\s\S]*worker: stopped/);
    workers.push(startWorker({ url: fx.redis.url, prefix }));
    expect(await run.exited).toBe(0);
    expect(read(out, 'manifest.json')).toBe(read(fx.reference, 'manifest.json'));
  } finally {
    await stopAll(workers);
  }
}, 90_000);
