import Database from 'better-sqlite3';
import type { ResultSet, SqlValue } from '../../core/model.js';
import { jsonKeyPrefix, LruMap } from '../../core/lru.js';
import { DatabaseViewError, SqlExecutionError, toBindable, type DatabaseView, type SqlParam } from './executor.js';

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

/**
 * A database view (executor.ts) as one read-only connection: the overlays first, the
 * original last, so that an unqualified table name finds its overlay (SQLite resolves it in
 * the database attached first). Every file attached to a read-only connection is read-only.
 */
export function openView(dbPath: string, view: DatabaseView): Database.Database {
  const [main, ...attached] = [...view.overlays, dbPath];
  let db: Database.Database;
  try {
    db = openReadOnly(main);
  } catch (error) {
    throw new DatabaseViewError(messageOf(error));
  }
  try {
    attached.forEach((file, i) =>
      db.prepare(`ATTACH DATABASE ? AS ${i === attached.length - 1 ? 'base' : `overlay${i}`}`).run(file),
    );
    if (view.reverseScans) db.pragma('reverse_unordered_selects = 1');
  } catch (error) {
    db.close();
    throw new DatabaseViewError(`cannot open a variant of ${dbPath}: ${messageOf(error)}`);
  }
  return db;
}

/** Views are many (one per set of tables a statement touches): the least used close. */
const viewConnections = () => new LruMap<string, Database.Database>(64, undefined, (db) => db.close());

/**
 * Database files kept open. Each open connection holds its page cache and prepared
 * statements: a process that goes through a corpus of many databases (a run goes database by
 * database) keeps the recent ones, not every one it ever opened. Reopening costs a millisecond.
 */
const OPEN_FILES = 16;
const fileConnections = () => new LruMap<string, Database.Database>(OPEN_FILES, undefined, (db) => db.close());

/** The connection each database file or view runs on, opened on first use. */
export class ConnectionCache {
  private files = fileConnections();
  private views = viewConnections();

  get(dbPath: string, view?: DatabaseView): Database.Database {
    if (view) {
      const key = JSON.stringify([dbPath, view.overlays, view.reverseScans]);
      return this.views.getOrSet(key, () => openView(dbPath, view));
    }
    return this.files.getOrSet(dbPath, () => openReadOnly(dbPath));
  }

  /** Closes the database's connection and those of its views (their prepared statements go with them). */
  forget(dbPath: string): void {
    const ofViews = jsonKeyPrefix(dbPath);
    const close = (db: Database.Database) => db.close();
    this.files.deleteWhere((key) => key === dbPath, close);
    this.views.deleteWhere((key) => key.startsWith(ofViews), close);
  }

  closeAll(): void {
    for (const db of this.files.values()) db.close();
    this.files = fileConnections();
    for (const db of this.views.values()) db.close();
    this.views = viewConnections();
  }
}

/**
 * Runs one statement that must be a read-only query: `reader` (it returns rows) and
 * `readonly` (it writes nothing). ATTACH, PRAGMA assignments, INSERT ... RETURNING and
 * every DML/DDL statement fail one of the two and are refused before running.
 */
export function executeReadOnly(db: Database.Database, sql: string, params: readonly SqlParam[]): ResultSet {
  const { statement, columns } = preparedQuery(db, sql);
  try {
    const rows = (statement.all(...params.map(toBindable)) as unknown[][]).map((row) => row.map(toSqlValue));
    return { columns, rows };
  } catch (error) {
    throw new SqlExecutionError(messageOf(error));
  }
}

interface PreparedQuery {
  statement: Database.Statement;
  columns: string[];
}

/** Statements kept prepared per connection: a served endpoint's SQL is fixed, only its parameters vary. */
const STATEMENTS_PER_CONNECTION = 256;
const prepared = new WeakMap<Database.Database, LruMap<string, PreparedQuery>>();

/**
 * The connection's prepared statement for `sql` (SQLite re-prepares it by itself should the
 * schema change): preparing costs about as much as running a cheap lookup. Only accepted
 * queries are kept; a refused one is refused again each time.
 */
function preparedQuery(db: Database.Database, sql: string): PreparedQuery {
  let statements = prepared.get(db);
  if (!statements) prepared.set(db, (statements = new LruMap(STATEMENTS_PER_CONNECTION)));
  const known = statements.get(sql);
  if (known) return known;
  let statement: Database.Statement;
  try {
    statement = db.prepare(sql);
  } catch (error) {
    throw new SqlExecutionError(messageOf(error));
  }
  if (!statement.reader || !statement.readonly) {
    throw new SqlExecutionError(`not a read-only query: ${abbreviateSql(sql)}`);
  }
  statement.raw(true);
  const query = { statement, columns: statement.columns().map((column) => column.name) };
  statements.set(sql, query);
  return query;
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
