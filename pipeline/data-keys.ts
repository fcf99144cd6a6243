import { LruMap } from '../core/lru.js';
import type { DatabaseInfo, DataKey } from '../core/model.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { quoteIdent } from '../runtime/slot/sqlfrag.js';
import type { KeyCount } from '../verifiers/dependencies.js';

/**
 * Keys the data proves: column sets of a table that no row repeats and none holds NULL in,
 * or (selection keys) values of them that at most one row holds, where the schema declares no key (generators/slot/dependencies.ts, `dataKeys`). Counted by
 * one read-only statement per table, its rows and each key's distinct non-NULL values, on the
 * database (slot.decompose) or on a variant of it (verify). Counts are kept per database
 * content, state and key for as long as the run's executor lives; a statement that fails is
 * not (its error is thrown: a lost worker, a timeout are no verdict about the data).
 */

/** Where keys are counted: an executor over one state of a database, and that state's name (`original`, a variant's identity). */
export interface KeyCountTarget {
  db: DatabaseInfo;
  /** Runs the statement (on the variant, for a variant). */
  executor: SqlExecutor;
  /** The run's executor: counts are kept with it. */
  run: SqlExecutor;
  state: string;
  timeoutMs: number;
}

const kept = new WeakMap<SqlExecutor, LruMap<string, Promise<KeyCount>>>();

/** Each key's count on `target`, in the order of `keys`. */
export async function countKeys(target: KeyCountTarget, keys: readonly DataKey[]): Promise<KeyCount[]> {
  let counted = kept.get(target.run);
  if (!counted) kept.set(target.run, (counted = new LruMap(4096)));
  // Names compare as SQLite's do (any case); a selection key's values exactly.
  const idOf = (key: DataKey) =>
    JSON.stringify([
      target.db.fingerprint,
      target.state,
      key.table.toLowerCase(),
      key.columns.map((c) => c.toLowerCase()),
      key.values ?? null,
    ]);
  const promises = new Map(keys.map((key) => [idOf(key), counted.get(idOf(key))]));
  const missing = keys.filter((key) => promises.get(idOf(key)) === undefined);
  for (const table of new Set(missing.map((key) => key.table))) {
    const tableKeys = missing.filter((key) => key.table === table);
    const counts = countTable(target, table, tableKeys);
    tableKeys.forEach((key, i) => {
      const id = idOf(key);
      const promise = counts.then((all) => all[i]);
      promises.set(id, promise);
      counted.set(id, promise);
      // A failure is not a count: the next caller asks again.
      promise.catch(() => {
        if (counted.get(id) === promise) counted.delete(id);
      });
    });
  }
  return Promise.all(keys.map((key) => promises.get(idOf(key))!));
}

/**
 * One statement: per key, the rows it counts and its distinct values among them. A key: the
 * table's rows, and its distinct values where none of its columns is NULL. A selection key:
 * the rows holding its values, and at most 1 (it holds where no two rows do).
 */
async function countTable(target: KeyCountTarget, table: string, keys: readonly DataKey[]): Promise<KeyCount[]> {
  const from = quoteIdent(table);
  const params: (string | number)[] = [];
  // COUNT(*) first: the table's rows, and the statement aggregates (one row whatever the keys).
  const expressions = ['COUNT(*)'];
  const counted = keys.map((key) => {
    const columns = key.columns.map(quoteIdent);
    const at = expressions.length;
    if (key.values) {
      const matching = `(SELECT COUNT(*) FROM ${from} WHERE ${columns.map((c) => `${c} = ?`).join(' AND ')})`;
      expressions.push(matching, `min(${matching}, 1)`);
      params.push(...key.values, ...key.values);
      return { rows: at, distinct: at + 1 };
    }
    const present = columns.map((c) => `${c} IS NOT NULL`).join(' AND ');
    expressions.push(`(SELECT COUNT(*) FROM (SELECT DISTINCT ${columns.join(', ')} FROM ${from} WHERE ${present}))`);
    return { rows: 0, distinct: at };
  });
  const sql = `SELECT ${expressions.join(', ')} FROM ${from}`;
  const { rows } = await target.executor.run({ dbPath: target.db.path, sql, params, timeoutMs: target.timeoutMs });
  const values = rows[0].map(Number);
  return keys.map((key, i) => ({ ...key, rows: values[counted[i].rows], distinct: values[counted[i].distinct] }));
}
