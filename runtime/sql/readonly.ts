import Database from 'better-sqlite3';
import type { ResultSet, SqlValue } from '../../core/model.js';
import { SqlExecutionError, toBindable, type SqlParam } from './executor.js';

/**
 * Read-only SQL execution on one connection: the rules shared by the pool's worker
 * processes and the in-process executor, so both refuse and convert exactly alike.
 */

/** Opens a SQLite file so that nothing can write to it, whatever the statement. */
export function openReadOnly(dbPath: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new SqlExecutionError(`cannot open database ${dbPath}: ${messageOf(error)}`);
  }
  // Belt and braces: a read-only handle already refuses writes; query_only also refuses
  // the few statements that would write through a read-only handle (e.g. to temp schema).
  db.pragma('query_only = 1');
  return db;
}

/** One connection per database file, opened on first use. */
export class ConnectionCache {
  private readonly connections = new Map<string, Database.Database>();

  get(dbPath: string): Database.Database {
    let db = this.connections.get(dbPath);
    if (!db) {
      db = openReadOnly(dbPath);
      this.connections.set(dbPath, db);
    }
    return db;
  }

  closeAll(): void {
    for (const db of this.connections.values()) db.close();
    this.connections.clear();
  }
}

/**
 * Runs one statement that must be a read-only query: `reader` (it returns rows) and
 * `readonly` (it writes nothing). ATTACH, PRAGMA assignments, INSERT ... RETURNING and
 * every DML/DDL statement fail one of the two and are refused before running.
 */
export function executeReadOnly(db: Database.Database, sql: string, params: readonly SqlParam[]): ResultSet {
  let statement: Database.Statement;
  try {
    statement = db.prepare(sql);
  } catch (error) {
    throw new SqlExecutionError(messageOf(error));
  }
  if (!statement.reader || !statement.readonly) {
    throw new SqlExecutionError(`not a read-only query: ${abbreviateSql(sql)}`);
  }
  try {
    statement.raw(true);
    const columns = statement.columns().map((column) => column.name);
    const rows = (statement.all(...params.map(toBindable)) as unknown[][]).map((row) => row.map(toSqlValue));
    return { columns, rows };
  } catch (error) {
    throw new SqlExecutionError(messageOf(error));
  }
}

/** BLOBs travel as `x'<hex>'` strings (core/model.ts, SqlValue). */
export function toSqlValue(value: unknown): SqlValue {
  if (value === null || typeof value === 'number' || typeof value === 'string') return value;
  if (value instanceof Uint8Array) return `x'${Buffer.from(value).toString('hex')}'`;
  throw new SqlExecutionError(`unexpected SQLite value of type ${typeof value}`);
}

/** One line, at most 120 characters: SQL quoted in messages. */
export function abbreviateSql(sql: string): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
