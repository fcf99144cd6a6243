import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { INTERNAL_ERROR, NOT_COMPUTED, StageRunner } from '../../pipeline/runner/stage-runner.js';
import type { BatchStage, StageContext } from '../../pipeline/stage.js';
import { RunStore } from '../../pipeline/store/run-store.js';
import { nullExecutor, toyConfig, toyDb } from './fixtures/toy.js';

/** A batch stage that doubles numbers, rejects negatives, and has a fault of the run on 13; it records what it is given. */
function doubler(calls: number[][], options: { throws?: boolean } = {}): BatchStage<number, number> {
  return {
    kind: 'batch',
    name: 'rest.synthesize',
    version: 1,
    cacheKey: (n) => ({ n }),
    async runBatch(inputs, _ctx, onSettled) {
      calls.push([...inputs]);
      if (options.throws) throw new Error('the batch fell over');
      onSettled?.(inputs.length);
      return inputs.map((n): Outcome<number> => {
        if (n === 13) return reject(INTERNAL_ERROR, 'lost a worker');
        return n < 0 ? reject('negative', `${n} < 0`) : accept(n * 2);
      });
    },
  };
}

describe('StageRunner over a batch stage', () => {
  let dir: string;
  let store: RunStore;
  const ctx: StageContext = { config: toyConfig(), db: toyDb(), executor: nullExecutor };
  const policy = { retries: 0, baseMs: 0, maxMs: 0 };
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-batch-'));
    store = new RunStore({ dir });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('computes the misses in one call, caches outcomes per item, but never an internal error', async () => {
    const calls: number[][] = [];
    const settled: number[] = [];
    const first = await new StageRunner(store, policy).runBatch(doubler(calls), [1, -2, 13], ctx, (n) =>
      settled.push(n),
    );
    expect(first.map((o) => (o.ok ? o.value : o.category))).toEqual([2, 'negative', INTERNAL_ERROR]);
    expect(settled.reduce((a, b) => a + b, 0)).toBe(3);
    await store.flush();

    const runner = new StageRunner(store, policy);
    const second = await runner.runBatch(doubler(calls), [13, 1, 4, -2], ctx);
    expect(second.map((o) => (o.ok ? o.value : o.category))).toEqual([INTERNAL_ERROR, 2, 8, 'negative']);
    // Only the internal error and the new item were computed again, together.
    expect(calls).toEqual([
      [1, -2, 13],
      [13, 4],
    ]);
    expect(runner.metrics.get('rest.synthesize')).toMatchObject({ cacheHits: 2, runs: 2 });
  });

  test('a throw is a fault of the run for every item of the call, and nothing is cached', async () => {
    const calls: number[][] = [];
    const outcomes = await new StageRunner(store, policy).runBatch(doubler(calls, { throws: true }), [1, 2], ctx);
    expect(outcomes).toEqual([
      reject(INTERNAL_ERROR, 'Error: the batch fell over'),
      reject(INTERNAL_ERROR, 'Error: the batch fell over'),
    ]);
    await store.flush();
    await new StageRunner(store, policy).runBatch(doubler(calls), [1, 2], ctx);
    expect(calls).toEqual([
      [1, 2],
      [1, 2],
    ]);
  });

  test('an assembling runner (computeMisses false) computes nothing: a miss is not computed', async () => {
    const calls: number[][] = [];
    await new StageRunner(store, policy).runBatch(doubler(calls), [1], ctx);
    await store.flush();
    const assembling = new StageRunner(store, policy, undefined, '', false);
    const outcomes = await assembling.runBatch(doubler(calls), [1, 5], ctx);
    expect(outcomes).toEqual([accept(2), reject(INTERNAL_ERROR, NOT_COMPUTED)]);
    expect(calls).toEqual([[1]]);
  });
});
