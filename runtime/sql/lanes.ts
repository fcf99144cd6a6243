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
import { createSqlPool, type SqlPool } from './pool.js';

/**
 * The laned executor (bulkheads, for `nl2api serve`): two process pools, a fast lane and a
 * slow lane, so that a cheap statement never waits behind an expensive one.
 *
 * Cost is learnt per statement text (a served endpoint's SQL is fixed; its arguments are bound
 * parameters). A statement of unknown cost runs in the fast lane; if it runs past the fast
 * budget its worker is killed (the lane's spare takes over at once) and it is tried once more
 * there (a hiccup of a busy machine is no verdict); past the budget again, the statement is
 * marked slow and run again in the slow lane within what is left of its timeout. A statement marked
 * slow goes straight to the slow lane, and back to the fast one after `promoteAfter`
 * consecutive runs there within the budget (one hostile argument does not banish an endpoint).
 * While the first run of an unknown statement is measured, other requests for it wait for the
 * verdict (at most the budget): a burst of an expensive endpoint costs one kill, not one each.
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
  /** A fast-lane statement running longer is stopped and moved to the slow lane (ms). */
  fastBudgetMs: number;
  /** Consecutive slow-lane runs within the budget that move a statement back to the fast lane. */
  promoteAfter: number;
  /** Database files every worker opens as it starts (pool.ts): a cold first run is no reason to demote. */
  warm?: readonly string[];
}

export type LaneName = 'fast' | 'slow';

export interface LanedExecutor extends SqlExecutor {
  /** Process ids of both lanes' live workers (diagnostics, CPU accounting and tests). */
  workerPids(): number[];
  /** The lane a request would go to now (`fast` too for a statement of unknown cost). */
  laneOf(request: SqlRequest): LaneName;
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
  const fast = lane('fast', options.fast, options.warm);
  const slow = lane('slow', options.slow, options.warm);
  const costs = new LruMap<string, Cost>(REMEMBERED_STATEMENTS);
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
    const budgeted = request.timeoutMs > fastBudgetMs;
    try {
      // A second chance after one overrun: a hiccup (a busy machine) is no reason to send a cheap
      // statement to wait behind expensive ones; two in a row are.
      for (let attempt = 1; ; attempt++) {
        try {
          return await fast.pool.run(budgeted ? { ...request, timeoutMs: fastBudgetMs } : request);
        } catch (error) {
          if (!(budgeted && error instanceof SqlTimeoutError)) throw error;
          if (attempt === 2) {
            costs.set(key, { slow: true, fastRuns: 0 });
            return undefined;
          }
        }
      }
    } finally {
      if (endProbe) {
        cost.probe = undefined;
        endProbe();
      }
    }
  }

  async function runSlow(request: SqlRequest, key: string, arrived: number): Promise<ResultSet> {
    const timeoutMs = request.timeoutMs - (performance.now() - arrived);
    if (timeoutMs <= 0) throw timedOut(request);
    try {
      const { result, runMs } = await slow.pool.runTimed({ ...request, timeoutMs });
      measured(key, runMs < fastBudgetMs);
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
  };
}

/** A lane's pool keeps a spare worker: one killed at the budget or a timeout is replaced at once. */
function lane(name: LaneName, { workers, maxInFlight, nice }: LaneOptions, warm?: readonly string[]): Lane {
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
    throw new Error(`the ${name} lane's maxInFlight must be a positive integer, got ${maxInFlight}`);
  return { name, pool: createSqlPool({ size: workers, spare: 1, nice, warm }), maxInFlight, inFlight: 0 };
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
