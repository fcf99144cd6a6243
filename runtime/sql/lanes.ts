import { performance } from 'node:perf_hooks';
import type { ResultSet } from '../../core/model.js';
import { LruMap } from '../../core/lru.js';
import {
  ExecutorClosedError,
  SqlSaturatedError,
  SqlTimeoutError,
  type SqlExecutor,
  type SqlRequest,
  type VariantTableRequest,
  type VariantTableResult,
} from './executor.js';
import { createSqlPool, SqlOverBudgetError, type SqlPool } from './pool.js';

/**
 * The laned executor (bulkheads, for `nl2api serve`): two process pools, a fast lane and a
 * slow lane, so that a cheap statement never waits behind an expensive one.
 *
 * Cost is learnt per statement text (a served endpoint's SQL is fixed; its arguments are bound
 * parameters), and measured in CPU time, not wall time: on a busy machine (other processes on
 * every core) a cheap statement waits for a CPU far longer than it runs, and a wall-clock budget
 * then killed and restarted workers all day, which only added process start-ups to the
 * contention (throughput fell below a plain single-process server's). A statement of unknown
 * cost runs in the fast lane with a CPU budget (pool.ts reads the worker's CPU time only when
 * the budget's time is up, and gives a statement that was waiting the rest of its budget). One
 * that uses the whole budget is marked slow: its worker is killed (the lane's spare takes over
 * at once) and it runs again in the slow lane within what is left of its timeout, unless the
 * kills of the last while are spent (`recyclesPerMinute`, a token bucket: a flood of new
 * expensive statements must not turn the server into a process factory); then it finishes
 * where it is, and only its timeout stops it. A statement marked slow goes straight to the
 * slow lane, and back to the fast one after `promoteAfter` consecutive runs there within the
 * budget's CPU (one hostile argument does not banish an endpoint). While the first run of an
 * unknown statement is measured, other requests for it wait for the verdict (at most until it
 * used its budget): a burst of an expensive endpoint costs one kill, not one each.
 *
 * Each lane admits at most `maxInFlight` statements (running or queued); past that a request
 * fails at once with SqlSaturatedError (a server answers 503), never waiting in an unbounded
 * queue. Each pool's timeout still SIGKILLs a runaway statement, in either lane.
 */

export interface LaneOptions {
  /** Statements running at once: worker processes (plus one spare). */
  workers: number;
  /** Statements admitted at once, running or queued: past them, SqlSaturatedError. */
  maxInFlight: number;
  /** The workers' scheduling niceness (pool.ts; default 0). */
  nice?: number;
}

export interface LanedExecutorOptions {
  fast: LaneOptions;
  slow: LaneOptions;
  /** A fast-lane statement using more CPU time (ms) is marked slow (and stopped, moved to the slow lane). */
  fastBudgetMs: number;
  /** Workers killed at the budget per minute at most (a token bucket of this size); 0: none. Timeouts always kill. */
  recyclesPerMinute?: number;
  /** Consecutive slow-lane runs within the budget that move a statement back to the fast lane. */
  promoteAfter: number;
  /** Database files every worker opens as it starts (pool.ts): a cold first run is no reason to demote. */
  warm?: readonly string[];
  /** The pools' CPU reader (pool.ts `cpuOf`) and the token bucket's clock (ms): injected by tests. */
  cpuOf?: (pid: number) => number | undefined;
  now?: () => number;
}

/** Budget kills allowed per minute by default (config: rest.serveLanes.recyclesPerMinute). */
const DEFAULT_RECYCLES_PER_MINUTE = 30;

export type LaneName = 'fast' | 'slow';

export interface LanedExecutor extends SqlExecutor {
  /** Process ids of both lanes' live workers (diagnostics, CPU accounting and tests). */
  workerPids(): number[];
  /** The lane a request would go to now (`fast` too for a statement of unknown cost). */
  laneOf(request: SqlRequest): LaneName;
  /** Workers killed and replaced so far, both lanes, at a budget or a timeout. */
  workerRecycles(): number;
  /** Statements that used their budget when no kill was left (marked slow, left to finish in the fast lane). */
  sparedOverruns(): number;
}

/** What is known of a statement's cost. */
interface Cost {
  slow: boolean;
  /** Consecutive slow-lane runs within the fast budget. */
  fastRuns: number;
  /** The first, measuring run in the fast lane, while it runs. */
  probe?: Promise<void>;
}

interface Lane {
  name: LaneName;
  pool: SqlPool;
  maxInFlight: number;
  inFlight: number;
}

/** Statements whose cost is remembered (a server's endpoints; the least recently used forgotten past it). */
const REMEMBERED_STATEMENTS = 10_000;

export function createLanedExecutor(options: LanedExecutorOptions): LanedExecutor {
  const { fastBudgetMs, promoteAfter } = options;
  const fast = lane('fast', options.fast, options.warm, options.cpuOf);
  const slow = lane('slow', options.slow, options.warm, options.cpuOf);
  const costs = new LruMap<string, Cost>(REMEMBERED_STATEMENTS);
  const kills = tokenBucket(
    options.recyclesPerMinute ?? DEFAULT_RECYCLES_PER_MINUTE,
    options.now ?? performance.now.bind(performance),
  );
  let spared = 0;
  let closed = false;

  /** The answer within the fast budget, or undefined: the statement ran past it and is now marked slow. */
  async function tryFast(request: SqlRequest, key: string): Promise<ResultSet | undefined> {
    let cost = costs.get(key);
    while (cost?.probe) {
      await cost.probe;
      cost = costs.get(key);
    }
    if (cost?.slow) return undefined;
    let endProbe: (() => void) | undefined;
    if (!cost) {
      cost = { slow: false, fastRuns: 0, probe: new Promise((resolve) => (endProbe = resolve)) };
      costs.set(key, cost);
    }
    const measured = cost;
    const verdict = () => {
      if (!endProbe) return;
      measured.probe = undefined;
      endProbe();
      endProbe = undefined;
    };
    // Used its CPU budget: slow from now on, whatever happens to this run; the waiting requests go to the slow lane.
    const overrun = (): boolean => {
      costs.set(key, { slow: true, fastRuns: 0 });
      if (kills.take()) return true; // the verdict once the run has failed: it goes to the slow lane before its waiters
      // Left to finish here, perhaps until its timeout: its waiters need not wait for that.
      spared++;
      verdict();
      return false;
    };
    try {
      // Within a timeout shorter than the budget, the timeout alone decides (and kills).
      const budget = request.timeoutMs > fastBudgetMs ? { cpuMs: fastBudgetMs, overrun } : undefined;
      return (await fast.pool.runTimed(request, budget)).result;
    } catch (error) {
      if (error instanceof SqlOverBudgetError) return undefined;
      throw error;
    } finally {
      verdict();
    }
  }

  async function runSlow(request: SqlRequest, key: string, arrived: number): Promise<ResultSet> {
    const timeoutMs = request.timeoutMs - (performance.now() - arrived);
    if (timeoutMs <= 0) throw timedOut(request);
    try {
      const { result, runMs, cpuMs } = await slow.pool.runTimed({ ...request, timeoutMs });
      measured(key, (cpuMs ?? runMs) < fastBudgetMs);
      return result;
    } catch (error) {
      if (error instanceof SqlTimeoutError) measured(key, false);
      // The pool speaks of what was left of the time limit; the client knows the whole of it.
      throw error instanceof SqlTimeoutError ? timedOut(request) : error;
    }
  }

  /** A slow-lane run of the statement took (not) less than the fast budget: count towards its promotion. */
  function measured(key: string, fast: boolean): void {
    const cost = costs.get(key);
    if (!cost?.slow) return;
    cost.fastRuns = fast ? cost.fastRuns + 1 : 0;
    if (cost.fastRuns >= promoteAfter) costs.set(key, { slow: false, fastRuns: 0 });
  }

  return {
    async run(request: SqlRequest): Promise<ResultSet> {
      if (closed) throw new ExecutorClosedError('executor closed');
      const arrived = performance.now();
      const key = costKey(request);
      if (!costs.get(key)?.slow) {
        const answer = await admit(fast, () => tryFast(request, key));
        if (answer) return answer;
      }
      return admit(slow, () => runSlow(request, key, arrived));
    },

    /** A variant table copies a whole table: slow by nature. */
    buildVariantTable: (request: VariantTableRequest): Promise<VariantTableResult> =>
      admit(slow, () => slow.pool.buildVariantTable(request)),

    async close(): Promise<void> {
      closed = true;
      await Promise.all([fast.pool.close(), slow.pool.close()]);
    },

    workerPids: () => [...fast.pool.workerPids(), ...slow.pool.workerPids()],

    laneOf: (request: SqlRequest) => (costs.get(costKey(request))?.slow ? 'slow' : 'fast'),

    workerRecycles: () => fast.pool.workerRecycles() + slow.pool.workerRecycles(),

    sparedOverruns: () => spared,
  };
}

/** A lane's pool keeps a spare worker: one killed at the budget or a timeout is replaced at once. */
function lane(
  name: LaneName,
  { workers, maxInFlight, nice }: LaneOptions,
  warm: readonly string[] | undefined,
  cpuOf: ((pid: number) => number | undefined) | undefined,
): Lane {
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
    throw new Error(`the ${name} lane's maxInFlight must be a positive integer, got ${maxInFlight}`);
  return { name, pool: createSqlPool({ size: workers, spare: 1, nice, warm, cpuOf }), maxInFlight, inFlight: 0 };
}

/**
 * At most `perMinute` takes in any minute, refilled continuously; a burst may spend them all
 * at once. The clock (ms) is injected so that tests need not wait for a refill.
 */
function tokenBucket(perMinute: number, now: () => number): { take(): boolean } {
  if (!(Number.isInteger(perMinute) && perMinute >= 0))
    throw new Error(`recyclesPerMinute must be a non-negative integer, got ${perMinute}`);
  let tokens = perMinute;
  let at = now();
  return {
    take(): boolean {
      const time = now();
      tokens = Math.min(perMinute, tokens + ((time - at) * perMinute) / 60_000);
      at = time;
      if (tokens < 1) return false;
      tokens--;
      return true;
    },
  };
}

/** Runs `work` if the lane has room for one more statement; otherwise refuses at once. */
async function admit<T>(lane: Lane, work: () => Promise<T>): Promise<T> {
  if (lane.inFlight >= lane.maxInFlight)
    throw new SqlSaturatedError(`the ${lane.name} SQL lane is full (${lane.maxInFlight} statements admitted)`);
  lane.inFlight++;
  try {
    return await work();
  } finally {
    lane.inFlight--;
  }
}

/** A statement's cost depends on its text and the database state it runs on, not on its arguments (mostly). */
function costKey({ dbPath, sql, view }: SqlRequest): string {
  return JSON.stringify(view ? [dbPath, sql, view.overlays, view.reverseScans] : [dbPath, sql]);
}

function timedOut(request: SqlRequest): SqlTimeoutError {
  return new SqlTimeoutError(`statement exceeded its timeout of ${request.timeoutMs} ms and was stopped`);
}
