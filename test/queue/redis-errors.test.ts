import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, startCli, type CliProcess } from '../../bench/queue-harness.js';
import { freePort } from '../../bench/redis-process.js';
import { closeConnection, redisConnection, retryDelay } from '../../pipeline/queue/connection.js';
import { startRedisServer, type RedisProcess } from '../support/redis.js';

/**
 * What a user sees when the queue's Redis is missing, misconfigured or goes away: the built
 * CLI, as users run it. One clear line and exit 1 instead of ioredis' stack traces; a
 * worker that loses its Redis says so once per reconnect step, and again when it is back.
 * No assertion depends on the machine's speed: line counts are bounded by the backoff steps
 * that fit in the time that actually passed.
 */

const DEMO = path.resolve('seeds/demo');
let tmp: string;
let server: RedisProcess;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-redis-errors-'));
  // Our own server (its dir ours too, so that it can be stopped and started again): the tests change its config and stop it.
  server = await startRedisServer({ persistence: false, dir: mkdtempSync(path.join(tmp, 'redis-')) });
}, 30_000);

afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const lines = (text: string) => text.split('\n').filter(Boolean);

test('an unreachable Redis: every queue command prints one line and exits 1 (generate before any work)', async () => {
  const url = `redis://127.0.0.1:${await freePort()}`;
  const commands = [
    ['generate', '--source', DEMO, '--out', path.join(tmp, 'out'), '--progress', 'none', '--queue', url],
    ['worker', '--queue', url],
    ['status', '--queue', url],
    ['runs', '--queue', url],
    ['schedule', '--queue', url, '--list'],
  ];
  const runs = await Promise.all(commands.map((args) => runCli(args)));
  for (const [k, run] of runs.entries()) {
    expect({ command: commands[k][0], code: run.code, stderr: lines(run.stderr), stdout: run.stdout }).toEqual({
      command: commands[k][0],
      code: 1,
      stderr: [`nl2api: cannot reach Redis at ${url}: ECONNREFUSED`],
      stdout: '',
    });
  }
}, 120_000);

test('a Redis that may evict keys is refused in one line that says how to fix it', async () => {
  const admin = redisConnection(server.url);
  try {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const run = await runCli(['status', '--queue', server.url]);
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      `nl2api: Redis at ${server.url} may evict keys (maxmemory-policy allkeys-lru); BullMQ needs noeviction: redis-cli -u ${server.url} config set maxmemory-policy noeviction (and the same in redis.conf)`,
    ]);
  } finally {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await closeConnection(admin);
  }
}, 60_000);

test('the key prefix is --queue-prefix for every command (no --prefix)', async () => {
  const run = await runCli(['worker', '--queue', server.url, '--prefix', 'p']);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/unknown option '--prefix'/);
});

test('a worker names the queues it works on, then tells a Redis outage once per reconnect step and its end once', async () => {
  const worker = startCli([
    'worker',
    '--queue',
    server.url,
    '--queue-prefix',
    'outage',
    '--stages',
    'item,item,emit',
    '--grace',
    '1',
  ]);
  try {
    await waitFor(() => /worker: \d+ queues?/.test(worker.stderr()), worker);
    // Asked twice, worked once: two queues, named as --stages names them.
    expect(worker.stderr()).toMatch(
      /worker: 2 queues \(item, emit\) at redis:\/\/127\.0\.0\.1:\d+, prefix outage, concurrency 4\n/,
    );

    const stopped = Date.now();
    await server.stop();
    await waitFor(() => reconnectLines(worker).length >= 4, worker);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const outage = reconnectLines(worker);
    const elapsed = Date.now() - stopped;
    // One line per attempt of the whole process, numbered 1, 2, 3 …: never one per connection.
    expect(outage.map((line) => Number(/attempt (\d+)/.exec(line)?.[1]))).toEqual(outage.map((_, k) => k + 1));
    expect(outage.length).toBeLessThanOrEqual(stepsWithin(elapsed) + 1);

    server = await startRedisServer({ persistence: false, dir: server.dir, port: server.port });
    await waitFor(() => /reconnected after \d+ attempts?/.test(worker.stderr()), worker);
    // Nothing but the start line, the outage and its end: no ioredis stack traces, no per-connection errors.
    const other = lines(worker.stderr()).filter(
      (line) =>
        !/ worker: 2 queues | Redis at \S+( unreachable \(.*\): reconnect attempt \d+ in \d+ ms|: reconnected after \d+ attempts?)$/.test(
          line,
        ),
    );
    expect(other).toEqual([]);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
}, 120_000);

function reconnectLines(worker: CliProcess): string[] {
  return lines(worker.stderr()).filter((line) => line.includes('reconnect attempt'));
}

/** How many reconnect attempts can start within `ms`: timers never fire early, so no more than this. */
function stepsWithin(ms: number): number {
  let steps = 0;
  for (let waited = 0; waited <= ms; waited += retryDelay(steps)) steps++;
  return steps;
}

async function waitFor(condition: () => boolean, process_: CliProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met in time; stderr so far:\n${process_.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
