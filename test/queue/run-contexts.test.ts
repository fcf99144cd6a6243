import { expect, test } from '@jest/globals';
import type { RunSpec } from '../../pipeline/queue/jobs.js';
import { RunContexts } from '../../pipeline/queue/run-contexts.js';
import type { RedisStore } from '../../pipeline/store/redis-store.js';

/** A worker's contexts of the runs it has jobs of: each read once from the registry, the latest four kept. */

const CODE = 'this-build';

function contexts(known: (runId: string) => boolean = () => true) {
  const reads: string[] = [];
  const runs = new RunContexts({
    registry: {
      spec: async (runId: string) => {
        reads.push(runId);
        return known(runId)
          ? ({
              runId,
              code: CODE,
              config: { cache: true },
              datasetName: 'd',
              databases: [],
              instances: [],
            } as unknown as RunSpec)
          : undefined;
      },
    },
    code: CODE,
    storeOf: () => ({}) as RedisStore,
  });
  return { runs, reads };
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
    registry: { spec: async (runId: string) => ({ runId, code: 'another-build' }) as unknown as RunSpec },
    code: CODE,
    storeOf: () => ({}) as RedisStore,
  });
  await expect(runs.of('r1')).rejects.toThrow(/differs from the run's/);
});
