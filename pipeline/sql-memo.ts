import { jsonKeyPrefix, LruMap } from '../core/lru.js';
import { inlinedStatement } from '../runtime/sql/inline-params.js';
import { isWord, tokenize, topLevel } from '../runtime/sql/lexer.js';
import { timedRun, type SqlExecutor, type SqlRequest, type TimedResult } from '../runtime/sql/executor.js';

/**
 * Shares the results of identical read-only statements within a run. SEL calls execute as
 * the SLOT calls they bind to, so an item's two formulations send the very same SQL, at
 * about the same time: without this, every SLOT query would run twice. Databases are
 * opened read-only, so the same statement gives the same result; requests in flight are
 * shared (errors included), finished results are kept in an LRU bounded by entries and by
 * cells in all (REST runs each endpoint once to check it, then again over HTTP; an endpoint
 * called with the question's values shares the run of the gold SQL it was made from).
 */

export interface SqlMemoOptions {
  /** Finished results kept (least recently used dropped first). */
  maxEntries?: number;
  /** Results with more cells than this are shared while in flight but not kept. */
  maxCells?: number;
  /** Cells kept in all (least recently used dropped first). */
  maxTotalCells?: number;
}

export interface MemoizedExecutor extends SqlExecutor {
  /**
   * Lets go of one database's results, and the executor's connections to it: a run that is
   * through with a database (its outputs written).
   */
  forget(dbPath: string): void;
  /** What was asked and what ran: how close a run comes to executing each distinct statement once. */
  counts(): SqlCounts;
}

export interface SqlCounts {
  /** Statements asked for (every run, by every stage). */
  requests: number;
  /** Statements the executor ran. */
  executions: number;
  /** Executions of a statement that had run before in the run (its result no longer kept, or too large to keep). */
  repeats: number;
}

/** Statements remembered as run (for `repeats`): more than a database of a run asks (BIRD dev's largest: ~1,500). */
const RAN_HISTORY = 65_536;

export function memoizeExecutor(inner: SqlExecutor, options: SqlMemoOptions = {}): MemoizedExecutor {
  const maxEntries = options.maxEntries ?? 8192;
  const maxCells = options.maxCells ?? 50_000;
  const maxTotalCells = options.maxTotalCells ?? 2_000_000;
  const inFlight = new Map<string, Promise<TimedResult>>();
  const cellsOf = ({ result }: TimedResult) => result.rows.length * Math.max(1, result.columns.length);
  const done = new LruMap<string, TimedResult>(maxEntries, { weigh: cellsOf, maxWeight: maxTotalCells });

  const counts: SqlCounts = { requests: 0, executions: 0, repeats: 0 };
  // The statements that ran, what tells a repeat; bounded, as a worker's memo lives across runs.
  const ran = new LruMap<string, true>(RAN_HISTORY);
  const execute = (key: string, request: SqlRequest): Promise<TimedResult> => {
    counts.executions++;
    if (ran.get(key)) counts.repeats++;
    else ran.set(key, true);
    return timedRun(inner, request);
  };

  const keep = (key: string, timed: TimedResult) => {
    if (cellsOf(timed) <= maxCells) done.set(key, timed);
  };

  /** A shared answer keeps the running time of the one run that gave it. */
  async function runTimed(request: SqlRequest): Promise<TimedResult> {
    const key = keyOf(request);
    counts.requests++;
    const hit = done.get(key);
    if (hit) return copy(hit);
    let pending = inFlight.get(key);
    if (!pending) {
      pending = sharedRun(request, key) ?? execute(key, request);
      inFlight.set(key, pending);
      pending.then(
        (timed) => {
          inFlight.delete(key);
          keep(key, timed);
        },
        () => inFlight.delete(key),
      );
    }
    return copy(await pending);
  }

  /**
   * The run of the statement a request names as giving the same rows (`sameRowsAs`), kept
   * or in flight, if the request with its values written in is that statement; its own run
   * if that one fails (the other may have had a shorter timeout). Kept under the request's
   * own key too, for its next asker (the same endpoint called over HTTP).
   */
  function sharedRun(request: SqlRequest, key: string): Promise<TimedResult> | null {
    if (request.sameRowsAs === undefined || inlinedStatement(request.sql, request.params) !== request.sameRowsAs)
      return null;
    if (!columnsNamedWithoutValues(request.sql)) return null;
    const shared = keyOf({ ...request, sql: request.sameRowsAs, params: [] });
    if (shared === key) return null;
    const kept = done.get(shared);
    if (kept) return Promise.resolve(kept);
    return inFlight.get(shared)?.catch(() => execute(key, request)) ?? null;
  }

  return {
    run: async (request) => (await runTimed(request)).result,
    runTimed,
    counts: () => ({ ...counts }),
    forget: (dbPath) => {
      const prefix = jsonKeyPrefix(dbPath);
      for (const map of [done, ran]) map.deleteWhere((key) => key.startsWith(prefix));
      inner.forget?.(dbPath);
    },
    buildVariantTable: (request) => inner.buildVariantTable(request),
    close: () => inner.close(),
  };
}

/**
 * What names a result: the database, the statement, its parameters and the view (its
 * overlays of the tables the statement reads: the others change nothing). On a
 * database variant, the statement with its parameters written in where that is exact
 * (runtime/sql/inline-params.ts): a REST endpoint called with the question's values there
 * is the gold SQL, and shares its run. Not on the database itself: an endpoint's answer
 * there is what it serves, rows in the order its own plan gives them (a query without
 * ORDER BY promises none), and whether a shared result is still kept depends on timing;
 * on a variant an answer only decides agreement with the gold, which the order never does.
 * On the database itself a request shares that way only where its caller knows the answer
 * to be the same whatever the plan, up to an order it fixes itself (`sameRowsAs`: sharedRun).
 */
function keyOf(request: SqlRequest): string {
  const inlined = request.view ? inlinedStatement(request.sql, request.params) : null;
  return JSON.stringify([
    // First, so that one database's keys share a prefix (forget).
    request.dbPath,
    inlined ?? request.sql,
    inlined === null ? request.params.map(String) : [],
    inlined === null ? request.params.map((p) => typeof p) : [],
    request.view ? [request.view.read ?? request.view.overlays, request.view.reverseScans] : null,
  ]);
}

/**
 * SQLite names a result column without an alias by its expression's text, so a value in the
 * select list (`SELECT ? + 1`) names it differently bound and written in: such a statement
 * has columns of its own. Values after the first top-level FROM name nothing.
 */
function columnsNamedWithoutValues(sql: string): boolean {
  const tokens = tokenize(sql);
  const from = topLevel(tokens).find((i) => isWord(tokens[i], 'FROM'));
  return from !== undefined && !tokens.slice(0, from).some((token) => token.kind === 'param');
}

/** Callers own what they get: no two of them share mutable rows. */
function copy({ result, runMs }: TimedResult): TimedResult {
  return { result: { columns: [...result.columns], rows: result.rows.map((row) => [...row]) }, runMs };
}
