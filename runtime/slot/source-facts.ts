import type { DatabaseInfo, ToolCall, ToolPool } from '../../core/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { LruMap } from '../../core/lru.js';
import { SlotCompiler, type StartingJoin } from './compiler.js';

/**
 * The database facts compiled SQL depends on (CompileOptions), probed through the
 * executor and cached per database (by fingerprint) and join:
 * - which tables have no rowid (they are identified by their primary key instead);
 * - for each starting join, the order in which SQLite's planner nests its loops, which
 *   is the order it enumerates the joined rows in: the source order (docs/TOOLS.md).
 */

/** CompileOptions, mutable: a session adds to them as initializations arrive. */
export interface SourceFacts {
  withoutRowid: Set<string>;
  sourceOrders: Map<string, string[]>;
}

export function emptyFacts(): SourceFacts {
  return { withoutRowid: new Set(), sourceOrders: new Map() };
}

/**
 * Bounded: a process may go through a corpus of any number of databases (a probe is cheap to
 * make again: one pragma, one EXPLAIN).
 */
const withoutRowidCache = new LruMap<string, string[]>(256);
const nestingCache = new LruMap<string, string[] | null>(4096);
/**
 * The joins an initialization call starts (null: it does not compile), by database and call:
 * a database's items mostly start from the same few tables, and each live session and
 * sequence probes its own.
 */
const joinsCache = new LruMap<string, StartingJoin[] | null>(4096);

function startingJoinsOf(db: DatabaseInfo, pool: ToolPool, call: ToolCall): StartingJoin[] | null {
  return joinsCache.getOrSet(JSON.stringify([db.fingerprint, pool, call]), () => {
    const scratch = new SlotCompiler(db, pool);
    try {
      scratch.define(call, { initialization: true });
    } catch {
      return null;
    }
    return scratch.startingJoins();
  });
}

/**
 * Adds to `facts` what compiling `initialization` needs. Invalid initialization calls
 * are skipped here: compiling them reports the error.
 */
export async function probeSourceFacts(
  db: DatabaseInfo,
  pool: ToolPool,
  initialization: readonly ToolCall[],
  executor: SqlExecutor,
  timeoutMs: number,
  facts: SourceFacts,
): Promise<void> {
  const joins = initialization.flatMap((call) => startingJoinsOf(db, pool, call) ?? []);
  if (joins.length === 0) return;
  let tables = withoutRowidCache.get(db.fingerprint);
  if (!tables) {
    const sql = "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND wr = 1";
    const result = await executor.run({ dbPath: db.path, sql, params: [], timeoutMs });
    tables = result.rows.map((row) => String(row[0]).toLowerCase());
    withoutRowidCache.set(db.fingerprint, tables);
  }
  tables.forEach((t) => facts.withoutRowid.add(t));
  for (const join of joins) {
    if (join.aliases.length < 2) continue;
    const key = `${db.fingerprint}\n${join.from}`;
    let nesting = nestingCache.get(key);
    if (nesting === undefined) {
      // The plan of the whole join, all columns: the query the rows are enumerated by.
      const plan = await executor.run({
        dbPath: db.path,
        sql: `EXPLAIN QUERY PLAN SELECT * FROM ${join.from}`,
        params: [],
        timeoutMs,
      });
      nesting = loopNesting(
        plan.rows.map((row) => String(row[row.length - 1])),
        join.aliases,
      );
      nestingCache.set(key, nesting);
    }
    if (nesting) facts.sourceOrders.set(join.from, nesting);
  }
}

/**
 * The aliases (lower-case) in the order of the plan's SCAN/SEARCH lines (outermost loop
 * first); null when the plan does not name each alias exactly once.
 */
export function loopNesting(details: readonly string[], aliases: readonly string[]): string[] | null {
  const byLength = [...aliases].sort((a, b) => b.length - a.length);
  const order: string[] = [];
  for (const detail of details) {
    const loop = /^(?:SCAN|SEARCH) (.*)$/.exec(detail);
    if (!loop) continue;
    const alias = byLength.find((a) => loop[1] === a || loop[1].startsWith(`${a} `));
    if (!alias) return null;
    order.push(alias.toLowerCase());
  }
  const distinct = new Set(order);
  return distinct.size === aliases.length && order.length === aliases.length ? order : null;
}
