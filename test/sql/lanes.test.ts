import path from 'node:path';
import { ExecutorClosedError, SqlSaturatedError, SqlTimeoutError } from '../../runtime/sql/executor.js';
import { processCpuMicros } from '../../runtime/sql/proc-cpu.js';
import { createLanedExecutor, type LanedExecutor, type LanedExecutorOptions } from '../../runtime/sql/lanes.js';
import { createDb, HEROES_SQL, isAlive, removeTempDirs, RUNAWAY_SQL, tempDir, waitUntil } from './fixtures.js';

/**
 * The laned executor: cheap statements are not held up by expensive ones, cost is learnt per
 * statement (demotion, re-promotion), admission is bounded, timeouts still kill, close ends all.
 * No assertion is on a speed margin: the order in which answers arrive, or generous bounds.
 * The CPU budget's reader is injected unless a test is about it: `ranAway` says every statement
 * still running when its budget's time is up used all of it (what a wall-clock budget did),
 * so that a loaded machine, where a runaway gets little CPU, changes no verdict.
 */

let dbPath: string;
const executors: LanedExecutor[] = [];
const ranAway = () => Number.MAX_SAFE_INTEGER;
const newExecutor = (options: Partial<LanedExecutorOptions> = {}) => {
  const executor = createLanedExecutor({
    fast: { workers: 1, maxInFlight: 64 },
    slow: { workers: 1, maxInFlight: 64 },
    fastBudgetMs: 1000,
    promoteAfter: 3,
    cpuOf: ranAway,
    ...options,
  });
  executors.push(executor);
  return executor;
};
const request = (sql: string, params: (number | string)[] = [], timeoutMs = 60_000) => ({
  dbPath,
  sql,
  params,
  timeoutMs,
});
/** Counts up to its parameter: as cheap or as expensive as asked. */
const COUNT_UP_TO = RUNAWAY_SQL.replace('1000000000000', '?');

beforeAll(() => {
  dbPath = createDb(path.join(tempDir(), 'heroes.sqlite'), HEROES_SQL);
});
afterAll(async () => {
  await Promise.all(executors.map((executor) => executor.close()));
  removeTempDirs();
});

test('cheap statements keep answering while the slow lane is busy with a long one', async () => {
  const executor = newExecutor();
  let longDone = false;
  // Runs past the fast budget: moved to the slow lane, where only close() or its timeout ends it.
  const long = executor.run(request(RUNAWAY_SQL)).catch((error: unknown) => {
    longDone = true;
    return error;
  });
  await waitUntil(() => executor.laneOf(request(RUNAWAY_SQL)) === 'slow');
  for (let i = 0; i < 20; i++) {
    await expect(executor.run(request('SELECT hero_name FROM hero WHERE id = ?', [1 + (i % 4)]))).resolves.toEqual({
      columns: ['hero_name'],
      rows: [[['Spider-Man', 'Batman', 'Superman', 'Storm'][i % 4]]],
    });
  }
  expect(longDone).toBe(false);
  expect(executor.laneOf(request('SELECT hero_name FROM hero WHERE id = ?'))).toBe('fast');
  await executor.close();
  expect(await long).toBeInstanceOf(ExecutorClosedError);
});

test('a statement past the budget is demoted, re-run in the slow lane, and promoted back after fast runs there', async () => {
  const executor = newExecutor({ fastBudgetMs: 1000, promoteAfter: 3 });
  await executor.run(request('SELECT 1')); // a fast-lane worker is up: the budget run starts at once
  const slowOne = request(COUNT_UP_TO, [1e12], 3000);
  expect(executor.laneOf(slowOne)).toBe('fast');
  // Killed at the budget in the fast lane, then at what is left of its timeout in the slow lane.
  const error = await executor.run(slowOne).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SqlTimeoutError);
  expect((error as Error).message).toContain('3000 ms');
  expect(executor.laneOf(slowOne)).toBe('slow');
  // The same statement with a cheap argument: answered in the slow lane, promoted after three.
  const cheap = request(COUNT_UP_TO, [10]);
  await expect(executor.run(cheap)).resolves.toEqual({ columns: ['count(*)'], rows: [[10]] });
  await executor.run(cheap);
  expect(executor.laneOf(cheap)).toBe('slow');
  await executor.run(cheap);
  expect(executor.laneOf(cheap)).toBe('fast');
});

test('a statement that only waited for the CPU is neither killed nor demoted at the budget (the real /proc reader)', async () => {
  // A stopped worker uses no CPU however long it waits, like one starved by a busy machine.
  let checks = 0;
  const cpuOf = (pid: number) => {
    checks++;
    return processCpuMicros(pid);
  };
  const executor = newExecutor({ fastBudgetMs: 100, promoteAfter: 5, cpuOf });
  await executor.run(request('SELECT 1'));
  await waitUntil(() => executor.workerPids().length === 2); // the fast lane's worker and spare
  const stalled = executor.workerPids().slice(0, 1); // the one a job goes to first, not the spare
  checks = 0;
  for (const pid of stalled) process.kill(pid, 'SIGSTOP');
  let answer: unknown;
  try {
    const running = executor.run(request('SELECT 6'));
    // Its budget's time came and went, twice: each time the worker had used none of it.
    await waitUntil(() => checks >= 2);
    expect(stalled.every(isAlive)).toBe(true);
    expect(executor.workerRecycles()).toBe(0);
    for (const pid of stalled) process.kill(pid, 'SIGCONT');
    answer = await running;
  } finally {
    for (const pid of stalled.filter(isAlive)) process.kill(pid, 'SIGCONT');
  }
  expect(answer).toEqual({ columns: ['6'], rows: [[6]] });
  expect(executor.workerPids()).toContain(stalled[0]);
  expect(executor.laneOf(request('SELECT 6'))).toBe('fast');
  expect(executor.workerRecycles()).toBe(0);
});

test('a runaway is stopped by its CPU budget as measured in /proc, and moved to the slow lane', async () => {
  const executor = newExecutor({ fastBudgetMs: 100, cpuOf: undefined });
  await executor.run(request('SELECT 1'));
  const [pid] = executor.workerPids();
  // However slowly the machine lets it burn its 100 ms of CPU: the timeout is far.
  await expect(executor.run(request(COUNT_UP_TO, [1e12], 5000))).rejects.toThrow(SqlTimeoutError);
  expect(executor.workerPids()).not.toContain(pid);
  expect(executor.laneOf(request(COUNT_UP_TO))).toBe('slow');
  expect(executor.workerRecycles()).toBeGreaterThanOrEqual(1);
});

test('without a CPU reading (no /proc) the budget is wall time', async () => {
  const executor = newExecutor({ fastBudgetMs: 200, cpuOf: () => undefined });
  await expect(executor.run(request(COUNT_UP_TO, [1e12], 1500))).rejects.toThrow(SqlTimeoutError);
  expect(executor.laneOf(request(COUNT_UP_TO))).toBe('slow');
});

test('kills at the budget are rate-limited: past the bucket a statement is marked slow and finishes where it is, its timeout still kills it', async () => {
  let clock = 0;
  // The warm-up may outlast the budget's time on a loaded machine: it reads as having waited, never as a runaway.
  let cpuOf = (): number => 0;
  const executor = newExecutor({ fastBudgetMs: 100, recyclesPerMinute: 1, now: () => clock, cpuOf: () => cpuOf() });
  await executor.run(request('SELECT 1'));
  cpuOf = ranAway;
  // The one kill of the minute: stopped at the budget, run again in the slow lane to its timeout.
  await expect(executor.run(request(RUNAWAY_SQL, [], 1500))).rejects.toThrow(SqlTimeoutError);
  expect(executor.laneOf(request(RUNAWAY_SQL))).toBe('slow');
  expect(executor.sparedOverruns()).toBe(0);
  const afterFirst = executor.workerRecycles();
  expect(afterFirst).toBeGreaterThanOrEqual(1);
  // No kill left: marked slow at once, but left running in the fast lane until its timeout kills it there.
  const second = executor.run(request(COUNT_UP_TO, [1e12], 1500)).catch((e: unknown) => e);
  await waitUntil(() => executor.laneOf(request(COUNT_UP_TO)) === 'slow');
  expect(executor.sparedOverruns()).toBe(1);
  const error = await second;
  expect(error).toBeInstanceOf(SqlTimeoutError);
  expect((error as Error).message).toContain('1500 ms');
  expect(executor.workerRecycles()).toBe(afterFirst + 1); // its timeout, not a budget kill
  // A minute later the bucket has a kill again.
  clock += 60_000;
  const third = `${COUNT_UP_TO} WHERE 1`; // another statement, the same runaway
  await expect(executor.run(request(third, [1e12], 1500))).rejects.toThrow(SqlTimeoutError);
  expect(executor.laneOf(request(third))).toBe('slow');
  expect(executor.sparedOverruns()).toBe(1);
});

test('a statement demoted while others of it wait costs one budget check: the others wait for its verdict', async () => {
  let checks = 0;
  const executor = newExecutor({
    fastBudgetMs: 300,
    cpuOf: () => {
      checks++;
      return ranAway();
    },
  });
  await executor.run(request('SELECT 1')); // both lanes' first workers are up
  checks = 0; // a warm-up slower than the budget on a loaded machine is checked too
  const runs = Array.from({ length: 4 }, () =>
    executor.run(request(COUNT_UP_TO, [1e12], 1500)).catch((e: unknown) => e),
  );
  for (const error of await Promise.all(runs)) expect(error).toBeInstanceOf(SqlTimeoutError);
  // Only the first run was measured in the fast lane; runs that did not wait would each have been.
  expect(checks).toBe(1);
  expect(executor.laneOf(request(COUNT_UP_TO))).toBe('slow');
});

test('a timeout within the budget kills the fast-lane worker and leaves the statement in the fast lane', async () => {
  const executor = newExecutor({ fastBudgetMs: 60_000 });
  await executor.run(request('SELECT 1'));
  const [pid] = executor.workerPids();
  await expect(executor.run(request(RUNAWAY_SQL, [], 300))).rejects.toThrow(SqlTimeoutError);
  await waitUntil(() => !isAlive(pid));
  expect(executor.laneOf(request(RUNAWAY_SQL))).toBe('fast');
  await expect(executor.run(request('SELECT 2'))).resolves.toEqual({ columns: ['2'], rows: [[2]] });
});

test('a timeout in the slow lane kills its worker; the slow lane keeps serving', async () => {
  const executor = newExecutor({ fastBudgetMs: 1000 });
  await expect(executor.run(request(RUNAWAY_SQL, [], 2000))).rejects.toThrow(SqlTimeoutError);
  expect(executor.laneOf(request(RUNAWAY_SQL))).toBe('slow');
  const stopped = executor.run(request(RUNAWAY_SQL, [], 3000));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const pids = executor.workerPids(); // the slow-lane worker running it among them
  await expect(stopped).rejects.toThrow(SqlTimeoutError);
  await waitUntil(() => pids.some((pid) => !isAlive(pid)));
  // A slow-marked statement with an argument that ends: answered by the slow lane's spare.
  await expect(executor.run(request(COUNT_UP_TO, [5]))).resolves.toEqual({ columns: ['count(*)'], rows: [[5]] });
});

test('past a lane’s admission limit a request fails at once with SqlSaturatedError; the other lane still serves', async () => {
  const executor = newExecutor({ fastBudgetMs: 1000, slow: { workers: 1, maxInFlight: 1 } });
  const occupying = executor.run(request(RUNAWAY_SQL, [], 60_000)).catch((e: unknown) => e);
  await waitUntil(() => executor.laneOf(request(RUNAWAY_SQL)) === 'slow');
  const started = Date.now();
  await expect(executor.run(request(RUNAWAY_SQL, [], 60_000))).rejects.toThrow(SqlSaturatedError);
  expect(Date.now() - started).toBeLessThan(10_000); // at once, not after the runaway
  await expect(executor.run(request('SELECT 3'))).resolves.toEqual({ columns: ['3'], rows: [[3]] });
  await executor.close();
  expect(await occupying).toBeInstanceOf(ExecutorClosedError);
});

test('the fast lane’s admission limit counts statements waiting for a worker too', async () => {
  const executor = newExecutor({ fastBudgetMs: 60_000, fast: { workers: 1, maxInFlight: 2 } });
  const first = executor.run(request(RUNAWAY_SQL, [], 60_000)).catch((e: unknown) => e);
  const queued = executor.run(request('SELECT 4')).catch((e: unknown) => e);
  await expect(executor.run(request('SELECT 5'))).rejects.toThrow(SqlSaturatedError);
  await executor.close();
  expect(await first).toBeInstanceOf(ExecutorClosedError);
  expect(await queued).toBeInstanceOf(ExecutorClosedError);
});

test('close() ends every worker of both lanes; later requests are refused', async () => {
  const executor = newExecutor({ fastBudgetMs: 1000 });
  const running = executor.run(request(RUNAWAY_SQL)).catch((e: unknown) => e);
  await waitUntil(() => executor.laneOf(request(RUNAWAY_SQL)) === 'slow');
  await executor.run(request('SELECT 1'));
  await waitUntil(() => executor.workerPids().length >= 4); // two lanes, each a worker and a spare
  const pids = executor.workerPids();
  await executor.close();
  expect(await running).toBeInstanceOf(ExecutorClosedError);
  expect(pids.filter(isAlive)).toEqual([]);
  expect(executor.workerPids()).toEqual([]);
  await expect(executor.run(request('SELECT 1'))).rejects.toThrow(ExecutorClosedError);
});
