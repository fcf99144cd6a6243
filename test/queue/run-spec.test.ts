import { afterAll, afterEach, beforeAll, expect, jest, test } from '@jest/globals';
import { Queue, type Job } from 'bullmq';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { codeFingerprint } from '../../pipeline/code-fingerprint.js';
import { closeConnection, redisConnection } from '../../pipeline/queue/connection.js';
import { STAGE_QUEUES, type ItemJob, type RunHead, type RunSpec } from '../../pipeline/queue/jobs.js';
import { RunRegistry } from '../../pipeline/queue/registry.js';
import { QueueWorker } from '../../pipeline/queue/worker.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { redisForTests, type TestRedis } from '../support/redis.js';

/**
 * A run's spec in Redis, split: a small head, and a chunk per database (schema and
 * instances). A worker reads the chunks of the databases its jobs name and no other; a
 * chunk that is gone fails its jobs for good, saying so; a driver re-attaching with fewer
 * databases leaves no chunk behind.
 */

const DEMO = path.resolve('seeds/demo');
let redis: TestRedis;
let tmp: string;
let admin: ReturnType<typeof redisConnection>;
let spec: RunSpec;

beforeAll(async () => {
  redis = await redisForTests();
  admin = redisConnection(redis.url);
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-run-spec-'));
  const source = await loadSource(DEMO);
  const config = parseConfig({ source: DEMO, out: tmp, formulations: ['slot'], sqlWorkers: 1, progress: 'none' });
  spec = {
    runId: 'spec-1',
    config,
    datasetName: 'demo',
    databases: source.databases,
    instances: source.instances,
    code: codeFingerprint(),
  };
}, 30_000);

afterEach(() => {
  jest.restoreAllMocks();
});

afterAll(async () => {
  await closeConnection(admin);
  await redis?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const RECORD = { runId: 'spec-1', dataset: 'demo', source: DEMO, out: 'out' };
const dbIds = () => spec.databases.map((db) => db.dbId).sort();

async function until<T>(value: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const v = await value();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the head holds no instance nor schema; each database has a chunk of its own', async () => {
  const prefix = `${redis.prefix}split`;
  const registry = new RunRegistry(admin, prefix);
  await registry.createRun(spec, RECORD);
  const head = JSON.parse((await admin.get(`${prefix}:runs:spec-1:spec`))!) as RunHead;
  expect(head.dbIds).toEqual(dbIds());
  expect(Object.values(head.instanceCounts).reduce((a, b) => a + b, 0)).toBe(spec.instances.length);
  expect(Object.keys(head).sort()).toEqual(['code', 'config', 'datasetName', 'dbIds', 'instanceCounts', 'runId']);
  for (const dbId of dbIds()) {
    const chunk = await registry.chunk('spec-1', dbId);
    expect(chunk?.database).toEqual(spec.databases.find((db) => db.dbId === dbId));
    expect(chunk?.instances).toEqual(spec.instances.filter((i) => i.dbId === dbId));
  }

  // The driver re-attaches on one database only: the other's chunk goes with it from the head.
  const [kept, dropped] = dbIds();
  await registry.createRun({ ...spec, databases: spec.databases.filter((db) => db.dbId === kept) }, RECORD);
  expect((await registry.head('spec-1'))?.dbIds).toEqual([kept]);
  expect(await registry.chunk('spec-1', kept)).toBeDefined();
  expect(await admin.exists(registry.chunkKey('spec-1', dropped))).toBe(0);
});

test('a worker reads only the chunks of the databases its jobs name; a missing chunk fails its job for good, saying so', async () => {
  const prefix = `${redis.prefix}worker`;
  const registry = new RunRegistry(admin, prefix);
  await registry.createRun(spec, RECORD);
  const [used, other] = dbIds();
  const reads = jest.spyOn(RunRegistry.prototype, 'chunk');
  const connection = redisConnection(redis.url);
  const queue = new Queue<ItemJob>(STAGE_QUEUES.item, { connection, prefix });
  const worker = await QueueWorker.start({ url: redis.url, prefix, concurrency: 2, sqlWorkers: 1, groups: ['item'] });
  const settled = (job: Job<ItemJob>) =>
    until(
      () => job.getState(),
      (state) => state === 'completed' || state === 'failed',
    );
  try {
    const [first, second] = spec.instances.filter((i) => i.dbId === used);
    const jobs = await queue.addBulk(
      [first, second].map((instance) => ({
        name: 'item',
        data: { runId: 'spec-1', db: used, index: instance.index },
        opts: { jobId: `spec-1.item.${instance.index}` },
      })),
    );
    for (const job of jobs) expect(await settled(job)).toBe('completed');
    expect(reads.mock.calls).toEqual([['spec-1', used]]);

    await admin.del(registry.chunkKey('spec-1', other));
    const lost = spec.instances.find((i) => i.dbId === other)!;
    const job = await queue.add(
      'item',
      { runId: 'spec-1', db: other, index: lost.index },
      { jobId: `spec-1.item.${lost.index}`, attempts: 3 },
    );
    expect(await settled(job)).toBe('failed');
    const failed = (await queue.getJob(job.id!))!;
    expect(failed.failedReason).toBe(
      `run spec-1: the spec of database ${other} is missing from Redis (lost?); rerun the driver with --run spec-1 to register it again`,
    );
    expect(failed.attemptsMade).toBe(1); // not retried: no attempt could find it
    expect(reads.mock.calls).toEqual([
      ['spec-1', used],
      ['spec-1', other],
    ]);
  } finally {
    await worker.close();
    await queue.close();
    await closeConnection(connection);
  }
}, 120_000);
