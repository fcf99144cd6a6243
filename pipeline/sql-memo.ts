import type { ResultSet } from '../core/model.js';
import { LruMap } from '../core/lru.js';
import type { SqlExecutor, SqlRequest } from '../runtime/sql/executor.js';

/**
 * Shares the results of identical read-only statements within a run. SEL calls execute as
 * the SLOT calls they bind to, so an item's two formulations send the very same SQL, at
 * about the same time: without this, every SLOT query would run twice. Databases are
 * opened read-only, so the same statement gives the same result; requests in flight are
 * shared (errors included), finished results are kept in an LRU bounded by entries and by
 * cells in all (REST runs each endpoint once to check it, then again over HTTP).
 */

export interface SqlMemoOptions {
  /** Finished results kept (least recently used dropped first). */
  maxEntries?: number;
  /** Results with more cells than this are shared while in flight but not kept. */
  maxCells?: number;
  /** Cells kept in all (least recently used dropped first). */
  maxTotalCells?: number;
}

export function memoizeExecutor(inner: SqlExecutor, options: SqlMemoOptions = {}): SqlExecutor {
  const maxEntries = options.maxEntries ?? 8192;
  const maxCells = options.maxCells ?? 50_000;
  const maxTotalCells = options.maxTotalCells ?? 2_000_000;
  const inFlight = new Map<string, Promise<ResultSet>>();
  const cellsOf = (result: ResultSet) => result.rows.length * Math.max(1, result.columns.length);
  const done = new LruMap<string, ResultSet>(maxEntries, { weigh: cellsOf, maxWeight: maxTotalCells });

  const keep = (key: string, result: ResultSet) => {
    if (cellsOf(result) <= maxCells) done.set(key, result);
  };

  return {
    async run(request: SqlRequest): Promise<ResultSet> {
      const key = JSON.stringify([
        request.dbPath,
        request.sql,
        request.params.map(String),
        request.params.map((p) => typeof p),
        request.view ?? null,
      ]);
      const hit = done.get(key);
      if (hit) return copy(hit);
      let pending = inFlight.get(key);
      if (!pending) {
        pending = inner.run(request);
        inFlight.set(key, pending);
        pending.then(
          (result) => {
            inFlight.delete(key);
            keep(key, result);
          },
          () => inFlight.delete(key),
        );
      }
      return copy(await pending);
    },
    buildVariantTable: (request) => inner.buildVariantTable(request),
    close: () => inner.close(),
  };
}

/** Callers own what they get: no two of them share mutable rows. */
function copy(result: ResultSet): ResultSet {
  return { columns: [...result.columns], rows: result.rows.map((row) => [...row]) };
}
