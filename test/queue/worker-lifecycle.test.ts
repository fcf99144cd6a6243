import { afterAll, afterEach, beforeAll, beforeEach, expect, jest, test } from '@jest/globals';
import { Queue, Worker } from 'bullmq';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { closeConnection, redisConnection } from '../../pipeline/queue/connection.js';
import { STAGE_QUEUES } from '../../pipeline/queue/jobs.js';
import { QueueWorker } from '../../pipeline/queue/worker.js';
import { redisForTests, type TestRedis } from '../support/redis.js';

/**
 * A QueueWorker's lifecycle, in this process: close may be called twice, at once or after
 * the first has finished; a part that fails to close leaves none of the others open (the
 * Redis connections, the SQL worker processes). The worker's connections
 * are recognized by name (its URL names them; BullMQ names its blocking connections after
 * the prefix), so a Redis shared with other tests does not confuse the count.
 */

const DEMO = path.resolve('seeds/demo');
let redis: TestRedis;
let tmp: string;

beforeAll(async () => {
  redis = await redisForTests();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-worker-lifecycle-'));
}, 30_000);

afterAll(async () => {
  await redis?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

let prefix: string;
let admin: ReturnType<typeof redisConnection>;
beforeEach(() => {
  prefix = `${redis.prefix}${Math.random().toString(36).slice(2, 8)}`;
  admin = redisConnection(redis.url);
});
afterEach(async () => {
  jest.restoreAllMocks();
  await closeConnection(admin);
});

/** The worker's URL: every connection it opens (and BullMQ's duplicates) carries `prefix` as its name. */
const workerUrl = () => {
  const url = new URL(redis.url);
  url.searchParams.set('connectionName', prefix);
  return url.toString();
};

/** The worker's connections still open in Redis. */
async function openConnections(): Promise<string[]> {
  const clients = (await admin.client('LIST')) as string;
  return clients
    .split('\n')
    .map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '')
    .filter((name) => name === prefix || name.startsWith(`${prefix}:`));
}

/** SQL worker processes of this process (Linux: /proc). */
function sqlWorkerProcesses(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`sql${path.sep}worker`);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

const start = () => QueueWorker.start({ url: workerUrl(), prefix, concurrency: 2, sqlWorkers: 1 });

test('close twice, at once and after: one shutdown, everything closed', async () => {
  const worker = await start();
  expect((await openConnections()).length).toBeGreaterThan(0);
  const first = worker.close();
  const second = worker.close(true);
  expect(second).toBe(first);
  await Promise.all([first, second]);
  await expect(worker.close()).resolves.toBeUndefined();
  expect(await openConnections()).toEqual([]);
});

test.each([true, false])(
  'a part failing to close (a BullMQ worker) leaves none of the others open: Redis connections, SQL processes (forced: %s)',
  async (force) => {
    const worker = await start();
    // A queue run worked by this worker alone: its SQL pool and a REST server are open afterwards.
    const config = parseConfig({
      source: DEMO,
      out: path.join(tmp, `out-${prefix}`),
      cacheDir: path.join(tmp, `cache-${prefix}`),
      dbIds: ['bookstore'],
      formulations: ['slot', 'rest'],
      sqlWorkers: 1,
      progress: 'none',
      queue: { url: redis.url, prefix, localWorkers: false, pollMs: 50 },
    });
    const run = await generate({ config });
    expect(run.stats?.formulations.rest?.total.accepted).toBeGreaterThan(0);
    expect(sqlWorkerProcesses().length).toBeGreaterThan(0);
    expect((await openConnections()).length).toBeGreaterThan(0);

    // eslint-disable-next-line @typescript-eslint/unbound-method -- the original, called below with its worker as `this`
    const close = Worker.prototype.close;
    jest.spyOn(Worker.prototype, 'close').mockImplementation(async function (this: Worker, forced?: boolean) {
      await close.call(this, forced);
      if (this.name === 'item') throw new Error('boom');
    });
    const closing = worker.close(force);
    await expect(closing).rejects.toThrow(AggregateError);
    await expect(closing).rejects.toThrow('closing the queue worker: item worker: boom');
    expect(worker.close()).toBe(closing);
    expect(await openConnections()).toEqual([]);
    expect(sqlWorkerProcesses()).toEqual([]);
  },
  180_000,
);

test('a suspect is judged by its crashes alone: caught in any number of crashes in company it completes; past --max-stalls crashes alone it fails as a poison job', async () => {
  const ran: string[] = [];
  const worker = await QueueWorker.start({
    url: workerUrl(),
    prefix,
    concurrency: 1,
    groups: ['eval'],
    maxStalls: 2,
    evaluate: { process: async (job) => void ran.push(job.id!), close: async () => {} },
  });
  const connection = redisConnection(redis.url);
  const queue = new Queue(STAGE_QUEUES.eval, { connection, prefix });
  try {
    // As BullMQ's stall checker and earlier runs alone leave them: `stc` counts every stall,
    // the second field the runs alone that never ended.
    const suspects = { company: [7, 0], once: [3, 1], poison: [3, 2] };
    for (const [id, [stalls, alone]] of Object.entries(suspects)) {
      const job = await queue.add(id, {}, { jobId: id, delay: 300 });
      await admin.hset(`${prefix}:${STAGE_QUEUES.eval}:${job.id}`, 'stc', stalls, 'nl2apiUnendedAlone', alone);
    }
    const ended = async (id: string) => {
      for (;;) {
        const state = await queue.getJobState(id);
        if (state === 'completed' || state === 'failed') return state;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    expect(await ended('company')).toBe('completed');
    expect(await ended('once')).toBe('completed');
    expect(await ended('poison')).toBe('failed');
    expect((await queue.getJob('poison'))?.failedReason).toBe('poison job: it killed its worker 2 times running alone');
    expect(ran.sort()).toEqual(['company', 'once']);
    // A run alone that ended is uncounted again.
    expect(await admin.hget(`${prefix}:${STAGE_QUEUES.eval}:once`, 'nl2apiUnendedAlone')).toBe('1');
  } finally {
    await queue.close();
    await closeConnection(connection);
    await worker.close();
  }
}, 60_000);

test('a suspect let go by a forced close is not counted against it: our own shutdown is no crash of the job', async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const worker = await QueueWorker.start({
    url: workerUrl(),
    prefix,
    concurrency: 1,
    groups: ['eval'],
    evaluate: { process: () => (started(), new Promise(() => {})), close: async () => {} },
  });
  const connection = redisConnection(redis.url);
  const queue = new Queue(STAGE_QUEUES.eval, { connection, prefix });
  const key = `${prefix}:${STAGE_QUEUES.eval}:suspect`;
  try {
    await queue.add('suspect', {}, { jobId: 'suspect', delay: 300 });
    await admin.hset(key, 'stc', 1, 'nl2apiUnendedAlone', 1);
    await running;
    expect(await admin.hget(key, 'nl2apiUnendedAlone')).toBe('2'); // counted while it runs alone
    await worker.close(true);
    expect(await admin.hget(key, 'nl2apiUnendedAlone')).toBe('1');
  } finally {
    await queue.close();
    await closeConnection(connection);
    await worker.close(true);
  }
}, 60_000);
