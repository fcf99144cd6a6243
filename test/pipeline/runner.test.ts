import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TransientError } from '../../core/outcome.js';
import type { ItemStages } from '../../pipeline/runner/flow.js';
import { planResults, runInProcess } from '../../pipeline/runner/in-process.js';
import { StageRunner } from '../../pipeline/runner/stage-runner.js';
import { RunStore } from '../../pipeline/store/run-store.js';
import { backoffDelay, RetriesExhaustedError, withRetries } from '../../pipeline/runner/retry.js';
import { assertNothingLost, collectRejections, computeStats, InvariantError } from '../../pipeline/stats.js';
import { summarize } from '../../pipeline/samples.js';
import type { Rejection } from '../../core/model.js';
import type { ProgressEvent } from '../../pipeline/progress.js';
import { nullExecutor, toyConfig, toyDb, toyInstances, toyStages } from './fixtures/toy.js';

describe('in-process runner', () => {
  test('never has more than `concurrency` items in flight', async () => {
    const { stages, log } = toyStages({ delayMs: 5 });
    const instances = toyInstances(Array.from({ length: 24 }, (_, i) => `SELECT ${i}`));
    const run = await runInProcess({
      config: toyConfig({ concurrency: 3 }),
      databases: [toyDb()],
      instances,
      stages,
      executor: nullExecutor,
      store: null,
    });
    expect(log.maxActive).toBe(3);
    expect(run.items).toHaveLength(24);
    expect(run.items.every((item) => item.results.slot?.ok && item.results.sel?.ok)).toBe(true);
  });

  test('retries TransientErrors with growing backoff, then succeeds', async () => {
    const { stages } = toyStages();
    const sleeps: number[] = [];
    const run = await runInProcess({
      config: toyConfig({ retries: 3, backoff: { baseMs: 100, maxMs: 1000 }, formulations: ['slot'] }),
      databases: [toyDb()],
      instances: toyInstances(['SELECT FLAKY2']),
      stages,
      executor: nullExecutor,
      store: null,
      sleep: async (ms) => void sleeps.push(ms),
    });
    expect(run.items[0].results.slot?.ok).toBe(true);
    expect(run.metrics.get('execute')?.retries).toBe(2);
    expect(sleeps).toHaveLength(2);
    // Equal jitter: attempt n waits within [cap/2, cap] with cap = base * 2^n.
    expect(sleeps[0]).toBeGreaterThanOrEqual(50);
    expect(sleeps[0]).toBeLessThanOrEqual(100);
    expect(sleeps[1]).toBeGreaterThanOrEqual(100);
    expect(sleeps[1]).toBeLessThanOrEqual(200);
  });

  test('exhausted retries reject that item with internal_error', async () => {
    const { stages } = toyStages();
    const sleeps: number[] = [];
    const run = await runInProcess({
      config: toyConfig({ retries: 2, formulations: ['slot'] }),
      databases: [toyDb()],
      instances: toyInstances(['SELECT ALWAYSFLAKY', 'SELECT 1']),
      stages,
      executor: nullExecutor,
      store: null,
      sleep: async (ms) => void sleeps.push(ms),
    });
    expect(sleeps).toHaveLength(2);
    expect(run.items[0].results.slot).toMatchObject({ ok: false, stage: 'execute', category: 'internal_error' });
    expect(run.items[0].results.slot).toMatchObject({ message: expect.stringContaining('after 3 attempts') });
    expect(run.items[1].results.slot?.ok).toBe(true);
  });

  test('a throwing item is rejected alone; categorized throws keep their category', async () => {
    const { stages } = toyStages();
    const run = await runInProcess({
      config: toyConfig(),
      databases: [toyDb()],
      instances: toyInstances(['SELECT 0', 'SELECT THROW', 'SELECT REJECTERR', 'SELECT 3']),
      stages,
      executor: nullExecutor,
      store: null,
    });
    expect(run.items.map((i) => i.instance.id)).toEqual(['q0', 'q1', 'q2', 'q3']);
    for (const f of ['slot', 'sel'] as const) {
      expect(run.items[0].results[f]?.ok).toBe(true);
      expect(run.items[1].results[f]).toMatchObject({ ok: false, stage: 'slot.decompose', category: 'internal_error' });
      expect(run.items[1].results[f]).toMatchObject({ message: 'TypeError: bug in decompose' });
      expect(run.items[2].results[f]).toMatchObject({
        ok: false,
        stage: 'slot.decompose',
        category: 'unsupported:window',
      });
      expect(run.items[3].results[f]?.ok).toBe(true);
    }
  });

  test('an instance of an unknown database is rejected at ingest', async () => {
    const { stages } = toyStages();
    const run = await runInProcess({
      config: toyConfig({ formulations: ['slot'] }),
      databases: [toyDb()],
      instances: toyInstances(['SELECT 1'], 'elsewhere'),
      stages,
      executor: nullExecutor,
      store: null,
    });
    expect(run.items[0].results.slot).toMatchObject({ ok: false, stage: 'ingest', category: 'bad_input' });
  });

  test('progress reaches every stage total, skipped stages included', async () => {
    const { stages } = toyStages();
    const last = new Map<string, ProgressEvent>();
    await runInProcess({
      config: toyConfig(),
      databases: [toyDb()],
      instances: toyInstances(['SELECT 0', 'SELECT BADGOLD', 'SELECT BADSEL', 'SELECT WRONG']),
      stages,
      executor: nullExecutor,
      store: null,
      onProgress: (e) => void last.set(e.stage, e),
    });
    expect(Object.fromEntries([...last].map(([s, e]) => [s, `${e.done}/${e.total}`]))).toEqual({
      gold: '4/4',
      parse: '4/4',
      'slot.decompose': '4/4',
      'sel.expand': '4/4',
      execute: '8/8',
      verify: '8/8',
    });
  });

  test('an aborted run reports itself partial', async () => {
    const { stages } = toyStages({ delayMs: 5 });
    const controller = new AbortController();
    const run = await runInProcess({
      config: toyConfig({ concurrency: 1 }),
      databases: [toyDb()],
      instances: toyInstances(Array.from({ length: 20 }, (_, i) => `SELECT ${i}`)),
      stages,
      executor: nullExecutor,
      store: null,
      onProgress: (e) => {
        if (e.stage === 'verify' && e.done >= 4) controller.abort();
      },
      signal: controller.signal,
    });
    expect(run.aborted).toBe(true);
    expect(run.items.length).toBeGreaterThanOrEqual(2);
    expect(run.items.length).toBeLessThan(20);
  });
});

describe('planned keys', () => {
  /** The stages with every cache key refused: a run that computes one rejects the item. */
  const keyless = (stages: ItemStages): ItemStages => {
    const refuse = <S extends object>(stage: S): S => ({
      ...stage,
      cacheKey: () => {
        throw new Error('a stage key computed again');
      },
    });
    const { own, ...common } = stages;
    return {
      ...(Object.fromEntries(Object.entries(common).map(([name, stage]) => [name, refuse(stage)])) as Omit<
        ItemStages,
        'own'
      >),
      own: Object.fromEntries(Object.entries(own).map(([name, stage]) => [name, refuse(stage)])),
    };
  };

  test('a run given its plans hashes no stage input, and stores outcomes where a later run looks', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-plans-'));
    try {
      const { stages, log } = toyStages();
      const options = {
        config: toyConfig(),
        databases: [toyDb()],
        instances: toyInstances(['SELECT 1', 'SELECT 2', 'BADGOLD']),
        executor: nullExecutor,
        codeFingerprint: 'code',
      };
      const first = new RunStore({ dir });
      const planner = new StageRunner(first, { retries: 0, baseMs: 0, maxMs: 0 }, undefined, 'code');
      const plans = planResults({ ...options, stages }, planner);
      const planned = await runInProcess({ ...options, stages: keyless(stages), store: first, plans });
      first.close();
      expect(planned.items.map((item) => [item.results.slot, item.results.sel].map((r) => r?.ok))).toEqual([
        [true, true],
        [true, true],
        [false, false],
      ]);
      expect(planned.items[2].results.slot).toMatchObject({ stage: 'gold', category: 'gold_error' });

      // A later run plans for itself and finds everything: not one stage runs again.
      const callsBefore = log.calls.length;
      const second = new RunStore({ dir });
      const rerun = await runInProcess({ ...options, stages, store: second });
      second.close();
      expect(log.calls.length).toBe(callsBefore);
      expect(rerun.items).toEqual(planned.items);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('counts', () => {
  test('in = accepted + rejected per formulation and db; gold/parse rejections count in both', async () => {
    const { stages } = toyStages();
    const instances = [
      ...toyInstances(['SELECT 0', 'SELECT BADGOLD', 'SELECT BADPARSE', 'SELECT BADSEL', 'SELECT WRONG'], 'a'),
      ...toyInstances(['SELECT 5', 'SELECT THROW'], 'b').map((i) => ({ ...i, id: `b${i.index}`, index: i.index + 10 })),
    ];
    const ingestRejections: Rejection[] = [
      { id: 'x1', db: 'a', formulation: 'all', stage: 'ingest', category: 'bad_input', message: 'missing SQL' },
    ];
    const run = await runInProcess({
      config: toyConfig(),
      databases: [toyDb('a'), toyDb('b')],
      instances,
      stages,
      executor: nullExecutor,
      store: null,
    });
    const stats = computeStats({
      dataset: 'toy',
      dbIds: ['a', 'b'],
      formulations: ['slot', 'sel'],
      items: run.items.map(summarize),
      ingestRejections,
    });
    assertNothingLost(
      stats,
      new Map([
        ['a', 6],
        ['b', 2],
      ]),
    );
    expect(stats.formulations.slot?.byDb.a).toEqual({
      input: 6,
      accepted: 2,
      rejected: 4,
      rejectedBy: { 'gold:gold_error': 1, 'ingest:bad_input': 1, 'parse:parse_error': 1, 'verify:semantic:values': 1 },
      strength: {},
    });
    expect(stats.formulations.sel?.byDb.a).toEqual({
      input: 6,
      accepted: 1,
      rejected: 5,
      rejectedBy: {
        'gold:gold_error': 1,
        'ingest:bad_input': 1,
        'parse:parse_error': 1,
        'sel.expand:unsupported:getter': 1,
        'verify:semantic:values': 1,
      },
      strength: {},
    });
    expect(stats.formulations.sel?.total).toMatchObject({ input: 8, accepted: 2, rejected: 6 });
    // The funnel: each stage's input is what the previous one accepted.
    const funnel = stats.formulations.sel!.stages;
    expect(funnel.ingest).toEqual({ input: 8, accepted: 7, rejected: 1 });
    expect(funnel.gold).toEqual({ input: 7, accepted: 6, rejected: 1 });
    expect(funnel.parse).toEqual({ input: 6, accepted: 5, rejected: 1 });
    expect(funnel['slot.decompose']).toEqual({ input: 5, accepted: 4, rejected: 1 });
    expect(funnel['sel.expand']).toEqual({ input: 4, accepted: 3, rejected: 1 });
    expect(funnel.verify).toEqual({ input: 3, accepted: 2, rejected: 1 });

    const rejections = collectRejections(run.items.map(summarize), ingestRejections, ['sel', 'slot']);
    expect(rejections.filter((r) => r.formulation === 'slot')).toHaveLength(stats.formulations.slot!.total.rejected);
    expect(rejections.filter((r) => r.formulation === 'sel')).toHaveLength(stats.formulations.sel!.total.rejected);
    expect(rejections[0]).toMatchObject({ id: 'x1', formulation: 'slot', stage: 'ingest' });
    expect(rejections[2]).toMatchObject({ id: 'q1', formulation: 'slot', stage: 'gold' });
    expect(rejections[3]).toMatchObject({ id: 'q1', formulation: 'sel', stage: 'gold' });
  });

  test('a lost item violates the invariant', async () => {
    const { stages } = toyStages();
    const run = await runInProcess({
      config: toyConfig(),
      databases: [toyDb()],
      instances: toyInstances(['SELECT 0', 'SELECT 1']),
      stages,
      executor: nullExecutor,
      store: null,
    });
    delete run.items[1].results.sel;
    const stats = computeStats({
      dataset: 'toy',
      dbIds: ['toy'],
      formulations: ['slot', 'sel'],
      items: run.items.map(summarize),
      ingestRejections: [],
    });
    expect(() => assertNothingLost(stats, new Map([['toy', 2]]))).toThrow(InvariantError);
    expect(() => assertNothingLost(stats, new Map([['toy', 3]]))).toThrow(/slot\/toy: expected 3 inputs/);
  });
});

describe('retry', () => {
  test('backoff doubles per attempt, is capped, and jitters within [cap/2, cap]', () => {
    const policy = { retries: 5, baseMs: 100, maxMs: 1000 };
    expect(backoffDelay(0, policy, () => 0)).toBe(50);
    expect(backoffDelay(0, policy, () => 1)).toBe(100);
    expect(backoffDelay(2, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
    expect(backoffDelay(10, policy, () => 0)).toBe(500);
  });

  test('other errors are not retried', async () => {
    let calls = 0;
    await expect(
      withRetries(
        async () => {
          calls++;
          throw new Error('bug');
        },
        { retries: 3, baseMs: 1, maxMs: 1 },
      ),
    ).rejects.toThrow('bug');
    expect(calls).toBe(1);
    await expect(
      withRetries(async () => Promise.reject(new TransientError('busy')), { retries: 1, baseMs: 0, maxMs: 0 }),
    ).rejects.toBeInstanceOf(RetriesExhaustedError);
  });
});
