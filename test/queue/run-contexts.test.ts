import { expect, test } from '@jest/globals';
import type { DatabaseChunk, RunHead } from '../../pipeline/queue/jobs.js';
import { instanceOf, RunContexts } from '../../pipeline/queue/run-contexts.js';
import type { RedisStore } from '../../pipeline/store/redis-store.js';

/**
 * A worker's contexts of the runs it has jobs of: each run's head read once from the
 * registry, the latest four kept; of each run, the chunks of the databases its jobs name,
 * each read once while kept, and no other.
 */

const CODE = 'this-build';

const DB_IDS = Array.from({ length: 20 }, (_, i) => `db${String(i).padStart(2, '0')}`);

/** Database `dbId`'s chunk: two instances, indices 10·k and 10·k + 1. */
function chunkOf(dbId: string): DatabaseChunk {
  const k = DB_IDS.indexOf(dbId);
  return {
    database: { dbId, path: `/data/${dbId}.sqlite`, fingerprint: 'f', tables: [] },
    instances: [0, 1].map((j) => ({
      id: `q${10 * k + j}`,
      index: 10 * k + j,
      dbId,
      question: '?',
      evidence: '',
      sql: 'SELECT 1',
      difficulty: null,
    })),
  };
}

function contexts(known: (runId: string) => boolean = () => true, stored: (dbId: string) => boolean = () => true) {
  const reads: string[] = [];
  const chunkReads: string[] = [];
  const runs = new RunContexts({
    registry: {
      head: async (runId: string) => {
        reads.push(runId);
        return known(runId)
          ? ({
              runId,
              code: CODE,
              config: { cache: true },
              datasetName: 'd',
              dbIds: DB_IDS,
              instanceCounts: Object.fromEntries(DB_IDS.map((db) => [db, 2])),
            } as unknown as RunHead)
          : undefined;
      },
      chunk: async (runId: string, dbId: string) => {
        chunkReads.push(`${runId}/${dbId}`);
        return stored(dbId) ? chunkOf(dbId) : undefined;
      },
    },
    code: CODE,
    storeOf: () => ({}) as RedisStore,
  });
  return { runs, reads, chunkReads };
}

test('a run is read from the registry once while its context is kept; the least recently used of five is let go', async () => {
  const { runs, reads } = contexts();
  for (const runId of ['r1', 'r2', 'r3', 'r4']) await runs.of(runId);
  await runs.of('r1'); // used again: r2 is now the least recently used
  await runs.of('r5');
  expect(reads).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  expect((await Promise.all(runs.kept())).map((ctx) => ctx.spec.runId)).toEqual(['r3', 'r4', 'r1', 'r5']);
  await runs.of('r1');
  await runs.of('r2'); // evicted: read again
  expect(reads).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r2']);
});

test('jobs of one run arriving together share one read', async () => {
  const { runs, reads } = contexts();
  const [a, b] = await Promise.all([runs.of('r1'), runs.of('r1')]);
  expect(a).toBe(b);
  expect(reads).toEqual(['r1']);
});

test('a run not known (yet) is not remembered as such: its next job asks again', async () => {
  let registered = false;
  const { runs, reads } = contexts(() => registered);
  await expect(runs.of('r1')).rejects.toThrow('run r1 is not known to this Redis');
  registered = true;
  expect((await runs.of('r1')).spec.runId).toBe('r1');
  expect(reads).toEqual(['r1', 'r1']);
});

test('a run planned by another build is refused', async () => {
  const runs = new RunContexts({
    registry: {
      head: async (runId: string) => ({ runId, code: 'another-build' }) as unknown as RunHead,
      chunk: async () => undefined,
    },
    code: CODE,
    storeOf: () => ({}) as RedisStore,
  });
  await expect(runs.of('r1')).rejects.toThrow(/differs from the run's/);
});

test('a job reads only the chunk of the database it names, once while kept; 16 databases are kept per run', async () => {
  const { runs, chunkReads } = contexts();
  const ctx = await runs.of('r1');
  const [a, b] = await Promise.all([runs.database(ctx, 'db03'), runs.database(ctx, 'db03')]);
  expect(a).toBe(b);
  expect(instanceOf(ctx, a, 31)).toMatchObject({ id: 'q31', dbId: 'db03' });
  expect(a.instances.map((i) => i.index)).toEqual([30, 31]);
  expect(chunkReads).toEqual(['r1/db03']);
  for (const db of DB_IDS) await runs.database(ctx, db);
  expect(chunkReads).toHaveLength(1 + 19);
  await runs.database(ctx, 'db19'); // kept
  await runs.database(ctx, 'db00'); // evicted by the 16 used after it: read again
  expect(chunkReads.slice(20)).toEqual(['r1/db00']);
});

test('a database the run does not have, a missing chunk, an instance not in its chunk: clear errors, nothing remembered', async () => {
  let stored = false;
  const { runs, chunkReads } = contexts(
    () => true,
    () => stored,
  );
  const ctx = await runs.of('r1');
  await expect(runs.database(ctx, 'elsewhere')).rejects.toThrow('run r1 has no database elsewhere');
  await expect(runs.database(ctx, 'db01')).rejects.toThrow(
    'run r1: the spec of database db01 is missing from Redis (lost?); rerun the driver with --run r1 to register it again',
  );
  expect(chunkReads).toEqual(['r1/db01']);
  stored = true;
  const db = await runs.database(ctx, 'db01');
  expect(() => instanceOf(ctx, db, 30)).toThrow('run r1 has no instance 30 in db01');
  expect(chunkReads).toEqual(['r1/db01', 'r1/db01']);
});
