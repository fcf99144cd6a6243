import { afterAll, beforeAll, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cleanups } from '../../core/cleanups.js';
import { codeFingerprint } from '../../pipeline/code-fingerprint.js';
import { closeConnection, ConnectionWatch, redisConnection } from '../../pipeline/queue/connection.js';
import { JobResources } from '../../pipeline/queue/job-resources.js';
import type { DatabaseChunk, RunHead } from '../../pipeline/queue/jobs.js';
import { RunRegistry } from '../../pipeline/queue/registry.js';
import { KEPT_DATABASES } from '../../pipeline/queue/run-contexts.js';
import { sha256File } from '../../pipeline/sources/schema.js';
import { redisForTests, type TestRedis } from '../support/redis.js';

/**
 * A queue worker's SQL memo lives as long as the worker, across runs and databases: a
 * database's results are forgotten once jobs have named KEPT_DATABASES others since, so the
 * memo follows the databases being worked on, not the corpus (generate forgets each database
 * once its outputs are written; a worker is never told). Here through the worker's job
 * resources, as its jobs use them: name a database, run SQL on it.
 */

const RUN = 'memo-1';
const DB_IDS = Array.from({ length: KEPT_DATABASES + 4 }, (_, i) => `db${String(i).padStart(2, '0')}`);
let redis: TestRedis;
let tmp: string;
let resources: JobResources;

beforeAll(async () => {
  redis = await redisForTests();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-worker-sql-memo-'));
  const chunks = new Map<string, DatabaseChunk>();
  for (const [k, dbId] of DB_IDS.entries()) {
    const file = path.join(tmp, `${dbId}.sqlite`);
    const db = new Database(file);
    db.exec(`CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (${k});`);
    db.close();
    chunks.set(dbId, {
      database: { dbId, path: file, fingerprint: await sha256File(file), tables: [] },
      instances: [],
    });
  }
  const head = {
    runId: RUN,
    code: codeFingerprint(),
    config: { cache: true },
    datasetName: 'memo',
    dbIds: DB_IDS,
    instanceCounts: Object.fromEntries(DB_IDS.map((dbId) => [dbId, 0])),
  } as unknown as RunHead;
  const admin = redisConnection(redis.url);
  await new RunRegistry(admin, redis.prefix).create(
    head,
    { runId: RUN, dataset: 'memo', source: tmp, out: tmp },
    chunks,
  );
  await closeConnection(admin);
  resources = new JobResources({
    url: redis.url,
    prefix: redis.prefix,
    watch: new ConnectionWatch(redis.url, () => {}),
    sqlWorkers: 1,
    log: () => {},
  });
}, 30_000);

afterAll(async () => {
  const cleanups = new Cleanups();
  await resources?.close(cleanups);
  await redis?.stop();
  rmSync(tmp, { recursive: true, force: true });
  cleanups.throwIfFailed('closing the job resources');
});

/** What a job does: name its database, then run a statement on it. */
async function job(dbId: string): Promise<void> {
  const db = await resources.database(await resources.runs.of(RUN), dbId);
  await resources.sql().run({ dbPath: db.info.path, sql: 'SELECT x FROM t', params: [], timeoutMs: 10_000 });
}

const executions = () => resources.sql().counts().executions;

test('the SQL results of the last KEPT_DATABASES databases jobs named are kept, those of the others forgotten', async () => {
  for (const dbId of DB_IDS) await job(dbId);
  expect(executions()).toBe(DB_IDS.length);
  // The latest KEPT_DATABASES, asked again: answered by the memo.
  for (const dbId of DB_IDS.slice(-KEPT_DATABASES)) await job(dbId);
  expect(executions()).toBe(DB_IDS.length);
  // The first four were let go when the last four were named: run again.
  for (const dbId of DB_IDS.slice(0, 4)) await job(dbId);
  expect(executions()).toBe(DB_IDS.length + 4);
});
