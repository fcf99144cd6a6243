import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Queue } from 'bullmq';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { doneIn, startCli, startWorker, waitForProgress, type CliProcess } from '../../bench/queue-harness.js';
import { closeConnection, redisConnection } from '../../pipeline/queue/connection.js';
import { STAGE_GROUPS, STAGE_QUEUES } from '../../pipeline/queue/jobs.js';
import { writeJsonlSource } from '../support/jsonl-source.js';
import { startRedisServer, type RedisProcess } from '../support/redis.js';
import { DEMO, inProcessReference, read, stopAll } from './queue-cli.js';

/**
 * A worker told to stop (SIGTERM) while its Redis is gone, as users run it: the built CLI
 * against a redis-server of the test's own. Its shutdown is bounded: `--grace` for the jobs
 * in hand and the graceful close, then a forced close, then the process exits (130) and says
 * why. Redis killed: nothing to wait for. Redis stopped (SIGSTOP: its sockets stay up, it
 * answers nothing, its data survives) with jobs in hand: once it answers again, nothing the
 * interruption caused was recorded (no failed attempt, no `job_failed`), and another worker
 * completes the run as the in-process runner would have. And with Redis up, a job in hand
 * past the grace is let go by the forced close at once, and left to be taken back: whatever
 * it does next (fail as its SQL pool closes under it) is not recorded.
 */

const GRACE_S = 1;
/** Grace, then the forced close (the CLI's FORCED_CLOSE_MS, 5 s, is its ceiling; it takes far less), with room for a loaded machine. */
const EXIT_BOUND_MS = (GRACE_S + 5 + 4) * 1000;
let tmp: string;
let reference: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-worker-shutdown-'));
  reference = await inProcessReference();
}, 120_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A worker as users start one; its jobs are taken back 2 s after it is gone (the default, 30 s, would only slow the test). */
const worker = (url: string, prefix: string) =>
  startCli([
    ...['worker', '--queue', url, '--queue-prefix', prefix, '--concurrency', '2'],
    ...['--grace', String(GRACE_S), '--lock-duration', '2000'],
  ]);

/** The worker says so once it listens; its signal handlers are set from then on. */
const listening = (process_: CliProcess) => until(() => /worker: \d+ queues/.test(process_.stderr()), process_);

const driver = (source: string, out: string, url: string, prefix: string, runId: string, extra: string[] = []) =>
  startCli([
    ...['generate', '--source', source, '--out', out, '--progress', 'none', ...extra],
    ...['--queue', url, '--queue-prefix', prefix, '--no-local-workers', '--run', runId],
  ]);

test('Redis killed: SIGTERM ends the worker within its grace and the forced close, exit 130, saying why', async () => {
  const server = await startRedisServer({ persistence: false });
  const idle = worker(server.url, 'killed');
  try {
    await listening(idle);
    await server.stop('SIGKILL');
    await until(() => idle.stderr().includes('unreachable'), idle);
    const { code, ms } = await terminate(idle);
    expect({ code, within: ms < EXIT_BOUND_MS }).toEqual({ code: 130, within: true });
    expect(idle.stderr()).toMatch(
      new RegExp(
        `grace period over \\(${GRACE_S} s\\) and Redis at ${server.url} unreachable: closing forced; the jobs in hand go back to the queue once their lock expires\\n.*\\(exit 130\\)\\n$`,
      ),
    );
  } finally {
    await stopAll([idle]);
    await server.stop();
  }
}, 60_000);

test('Redis stopped with jobs in hand: the worker exits within its bound, and nothing the interruption caused is recorded', async () => {
  const server = await startRedisServer({ persistence: false });
  const prefix = 'stopped';
  const out = path.join(tmp, 'stopped');
  const first = worker(server.url, prefix);
  const processes = [first];
  const redisPid = await serverPid(server);
  try {
    await listening(first);
    const run = driver(DEMO, out, server.url, prefix, 'stopped-1');
    processes.push(run);
    await waitForProgress(server.url, prefix, 'stopped-1', (p) => doneIn(p, 'item') >= 3);
    process.kill(redisPid, 'SIGSTOP');
    let stopped;
    try {
      stopped = await terminate(first);
    } finally {
      process.kill(redisPid, 'SIGCONT');
    }
    expect({ code: stopped.code, within: stopped.ms < EXIT_BOUND_MS }).toEqual({ code: 130, within: true });
    // The jobs in hand let go at once; the QUIT of BullMQ's connections, never answered, bounded by the CLI.
    expect(first.stderr()).toMatch(
      /grace period over \(1 s\): closing forced[^\n]*\n(.* job \S+ cut short by the shutdown: left to be taken back once its lock expires\n)+.*did not end within 5 s \(Redis not answering\?\): exiting anyway \(exit 130\)\n$/,
    );

    const second = startWorker({ url: server.url, prefix });
    processes.push(second);
    expect(await run.exited).toBe(0);
    // The jobs the first worker had in hand were taken back (they stalled), not failed.
    expect(second.stderr()).toMatch(/job \S+ stalled before \(1x\): running it alone/);
    expect(await failedAttempts(server.url, prefix)).toEqual([]);
    expect(read(out, 'rejections.jsonl')).not.toContain('job_failed');
    expect(read(out, 'manifest.json')).toBe(read(reference, 'manifest.json'));
  } finally {
    await stopAll(processes);
    await server.stop();
  }
}, 120_000);

test('Redis up, a job in hand past the grace: the forced close cuts it short without failing it (no attempt used)', async () => {
  const server = await startRedisServer({ persistence: false });
  const prefix = 'slow';
  // A gold statement that counts to 10^7: seconds, far longer than the grace.
  const slow =
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT count(*) FROM c';
  const source = writeJsonlSource(path.join(tmp, 'slow-source'), 'slow', 'CREATE TABLE t (x INTEGER);', [['1', slow]]);
  const first = worker(server.url, prefix);
  const connection = redisConnection(server.url);
  const items = new Queue(STAGE_QUEUES.item, { connection, prefix });
  let run: CliProcess | undefined;
  try {
    await listening(first);
    run = driver(source, path.join(tmp, 'slow'), server.url, prefix, 'slow-1', ['--formulations', 'slot']);
    await until(async () => (await items.getActiveCount()) === 1, first);
    const { code, ms } = await terminate(first);
    expect({ code, within: ms < EXIT_BOUND_MS }).toEqual({ code: 130, within: true });
    // Let go at once: the forced close did not wait for it (nor hit the CLI's bound).
    expect(first.stderr()).toMatch(
      /grace period over \(1 s\): closing forced[^\n]*\n.* item job slow-1\.item\.0 cut short by the shutdown[^\n]*\n.* stopped without finishing the jobs in hand \(exit 130\)\n$/,
    );
    const [job] = await items.getJobs(['active', 'waiting', 'delayed', 'failed', 'completed']);
    expect({ state: await job.getState(), attemptsMade: job.attemptsMade, failedReason: job.failedReason }).toEqual({
      state: 'active',
      attemptsMade: 0,
      failedReason: undefined,
    });
  } finally {
    await items.close();
    await closeConnection(connection);
    await stopAll(run ? [first, run] : [first]);
    await server.stop();
  }
}, 60_000);

/** SIGTERM, then how long the process took to exit and with what code. */
async function terminate(process_: CliProcess): Promise<{ code: number | null; ms: number }> {
  const sent = Date.now();
  process_.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'still running'>(
    (resolve) => (timer = setTimeout(() => resolve('still running'), EXIT_BOUND_MS * 2)),
  );
  const code = await Promise.race([process_.exited, bound]);
  clearTimeout(timer);
  if (code === 'still running') throw new Error(`the worker did not exit; stderr:\n${process_.stderr()}`);
  return { code, ms: Date.now() - sent };
}

/** Polls `condition` until it holds; fails after 30 s with what `process_` said so far. */
async function until(condition: () => boolean | Promise<boolean>, process_: CliProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met in time; stderr so far:\n${process_.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The redis-server's process id, as it reports it. */
async function serverPid(server: RedisProcess): Promise<number> {
  const admin = redisConnection(server.url);
  try {
    return Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
  } finally {
    await closeConnection(admin);
  }
}

/** Every job of the run's queues that ever failed an attempt: `<queue> <id>: <reason>`. */
async function failedAttempts(url: string, prefix: string): Promise<string[]> {
  const connection = redisConnection(url);
  const failed: string[] = [];
  try {
    for (const group of STAGE_GROUPS) {
      const queue = new Queue(STAGE_QUEUES[group], { connection, prefix });
      for (const job of await queue.getJobs(['completed', 'failed', 'waiting', 'delayed', 'active']))
        if (job.failedReason || job.stacktrace?.length) failed.push(`${group} ${job.id}: ${job.failedReason}`);
      await queue.close();
    }
  } finally {
    await closeConnection(connection);
  }
  return failed;
}
