import type { ColumnInfo, DatabaseInfo, ForeignKey, TableInfo } from '../../core/model.js';
import { quoteIdent } from '../../runtime/slot/sqlfrag.js';
import { SqlExecutionError, SqlTimeoutError, type SqlExecutor } from '../../runtime/sql/executor.js';
import { columnAffinity } from '../rest/columns.js';
import { linkedColumns } from './links.js';

/**
 * Foreign keys the schema does not declare but its names suggest and its data proves (issue
 * 36): a column named as another table's single-column key is named (`district_id`,
 * `districtid` or `district_id` for `district.district_id`; `hero_id` for `hero.id`), of the
 * same declared type, whose every value is a value of that key, and that key's values are
 * unique. A suggestion by name alone would link columns that only share a word; the data
 * alone would link any small numbers to any ids. Only a candidate link: every chain made of it
 * is verified on the database and its variants like any other.
 */

export interface ProvenKey extends ForeignKey {
  table: string;
}

/** Pairs to prove: columns named as another table's key, not already joined by declared keys. */
export function keyCandidates(db: DatabaseInfo): ProvenKey[] {
  const linked = linkedColumns(db);
  const keys = db.tables.flatMap((table) => {
    const key = singleKey(table);
    return key ? [{ table, key }] : [];
  });
  return db.tables.flatMap((table) =>
    table.columns.flatMap((column) =>
      keys
        .filter(
          ({ table: target, key }) =>
            target !== table &&
            namedAs(column.name, target.name, key.name) &&
            sameType(column, key) &&
            !linked({ table: table.name, column: column.name }, { table: target.name, column: key.name }),
        )
        .map(({ table: target, key }) => ({
          table: table.name,
          column: column.name,
          refTable: target.name,
          refColumn: key.name,
        })),
    ),
  );
}

/** The candidates the data proves: at least two values, every one a value of the key, the key's values unique. */
export async function provenKeys(db: DatabaseInfo, executor: SqlExecutor, timeoutMs: number): Promise<ProvenKey[]> {
  const proven: ProvenKey[] = [];
  for (const candidate of keyCandidates(db)) {
    const [from, column, to, key] = [candidate.table, candidate.column, candidate.refTable, candidate.refColumn].map(
      quoteIdent,
    );
    const sql = `SELECT (SELECT COUNT(DISTINCT ${column}) FROM ${from}) AS n,
  (SELECT COUNT(DISTINCT ${column}) FROM ${from} WHERE ${column} IS NOT NULL AND ${column} NOT IN (SELECT ${key} FROM ${to} WHERE ${key} IS NOT NULL)) AS missing,
  (SELECT COUNT(${key}) - COUNT(DISTINCT ${key}) FROM ${to}) AS repeated`;
    let counts: number[];
    try {
      counts = (await executor.run({ dbPath: db.path, sql, params: [], timeoutMs })).rows[0] as number[];
    } catch (error) {
      // SQLite's refusal or the timeout proves nothing (a lost worker is thrown: a fault of the run).
      if (error instanceof SqlExecutionError || error instanceof SqlTimeoutError) continue;
      throw error;
    }
    const [n, missing, repeated] = counts;
    if (n >= 2 && missing === 0 && repeated === 0) proven.push(candidate);
  }
  return proven;
}

/** A table's key of one column: its declared primary key, or its one unique key. */
function singleKey(table: TableInfo): ColumnInfo | undefined {
  const columns =
    table.primaryKey.length === 1 ? table.primaryKey : (table.uniqueKeys ?? []).find((k) => k.length === 1);
  const name = columns?.length === 1 ? columns[0].toLowerCase() : undefined;
  return name === undefined ? undefined : table.columns.find((c) => c.name.toLowerCase() === name);
}

const bare = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
const singular = (name: string) => name.replace(/(ies)$/i, 'y').replace(/(s)$/i, '');

/** `column` names `table`'s `key`: the key's own name (not a bare `id`), or the table's name (singular or not) and the key's. */
function namedAs(column: string, table: string, key: string): boolean {
  const c = bare(column);
  if (c === bare(key) && bare(key) !== 'id') return true;
  return [table, singular(table)].some((t) => c === bare(`${t}${key}`) || c === bare(`${t}id`));
}

/** Of one type affinity, as SQLite reads their declared types. */
const sameType = (a: ColumnInfo, b: ColumnInfo) => columnAffinity(a) === columnAffinity(b);
