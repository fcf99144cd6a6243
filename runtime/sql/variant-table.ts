import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { VariantTableRequest, VariantTableResult } from './executor.js';
import { openReadOnly } from './readonly.js';

/**
 * One table of a database with its values perturbed, written to a file of its own: the
 * building block of the value-perturbed variants (differential verification). It keeps
 * what a question's SQL relies on and changes which row holds which value:
 * - the table's own CREATE statement (declared types, affinities, collations, keys) and
 *   its indexes (and ANALYZE statistics), so the same SQL runs with the same plan shapes;
 * - keys unchanged: primary key, unique, and referenced columns, so every reference still
 *   lands; a referencing column is rotated like the others (its values stay references that
 *   exist, the rows they pair change);
 * - every other column rotated across the rows by a seeded offset: the column's values,
 *   NULL rate and domain stay exactly its own (a question's literals still select rows).
 *   Mode `columns`: each column by its own offset, so a row's values are no longer the
 *   row's; mode `rows`: all by one offset, so each row's values, together, move to another
 *   key (a conjunction over one table still selects rows; joins pair other ones).
 * Rows are streamed (one read cursor per rotated column), so a table of any size costs one
 * pass, and the source is only ever opened read-only. Written to a temporary file and
 * renamed: a reader never sees a half-built table, and two builders agree byte for byte.
 */

export function buildVariantTable(request: VariantTableRequest): VariantTableResult {
  const source = openReadOnly(request.dbPath);
  try {
    const table = tableOf(source, request.table);
    if (!table) return 'unsupported';
    mkdirSync(path.dirname(request.file), { recursive: true });
    const temporary = `${request.file}.${process.pid}.${Date.now()}.tmp`;
    try {
      writeVariant(source, table, request, temporary);
      renameSync(temporary, request.file);
    } finally {
      rmSync(temporary, { force: true });
    }
    return 'built';
  } finally {
    source.close();
  }
}

interface TableFacts {
  name: string;
  createSql: string;
  indexSql: string[];
  /** Insertable columns (generated ones are computed, not copied). */
  columns: string[];
  keys: Set<string>;
  /** How to enumerate the rows in one stable order. */
  orderBy: string;
}

function tableOf(db: Database.Database, requested: string): TableFacts | null {
  const row = db
    .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE")
    .get(requested) as { name: string; sql: string | null } | undefined;
  if (!row?.sql || /^\s*CREATE\s+VIRTUAL\b/i.test(row.sql) || row.name.toLowerCase().startsWith('sqlite_')) return null;
  const name = row.name;
  const info = db.prepare('SELECT name, pk, hidden FROM pragma_table_xinfo(?)').all(name) as {
    name: string;
    pk: number;
    hidden: number;
  }[];
  const columns = info.filter((c) => c.hidden === 0).map((c) => c.name);
  const primaryKey = info
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  const withoutRowid = (db.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').get(name) as { wr: number }).wr;
  const indexSql = (
    db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(name) as {
      sql: string;
    }[]
  ).map((r) => r.sql);
  return {
    name,
    createSql: row.sql,
    indexSql,
    columns,
    keys: keyColumns(db, name, primaryKey),
    orderBy: withoutRowid ? primaryKey.map(quote).join(', ') : 'rowid',
  };
}

/**
 * Columns whose values identify rows: primary and unique keys, and the columns other
 * tables reference. They must not move. A column that references another table moves like
 * any other: its values stay references that exist, but each row now points elsewhere, so
 * joins pair other rows and groups change size.
 */
function keyColumns(db: Database.Database, table: string, primaryKey: string[]): Set<string> {
  const keys = new Set(primaryKey.map((c) => c.toLowerCase()));
  const add = (column: string | null) => column && keys.add(column.toLowerCase());
  const indexes = db.prepare('SELECT name FROM pragma_index_list(?) WHERE "unique" = 1').all(table) as {
    name: string;
  }[];
  for (const index of indexes) {
    for (const c of db.prepare('SELECT name FROM pragma_index_info(?)').all(index.name) as { name: string | null }[])
      add(c.name);
  }
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[];
  for (const other of tables) {
    const references = db
      .prepare('SELECT "to" FROM pragma_foreign_key_list(?) WHERE "table" = ? COLLATE NOCASE')
      .all(other.name, table) as { to: string | null }[];
    // A reference without a column names the primary key, which is already kept.
    for (const reference of references) add(reference.to);
  }
  return keys;
}

function writeVariant(
  source: Database.Database,
  table: TableFacts,
  { seed, mode }: Pick<VariantTableRequest, 'seed' | 'mode'>,
  file: string,
): void {
  const target = new Database(file);
  try {
    // A scratch file renamed into place when complete: no journal is worth its cost.
    target.pragma('journal_mode = OFF');
    target.pragma('synchronous = OFF');
    // Rotated values may break a CHECK that ties columns of one row together.
    target.pragma('ignore_check_constraints = 1');
    // The referenced tables live in other files (better-sqlite3 turns enforcement on).
    target.pragma('foreign_keys = 0');
    target.exec(table.createSql);
    const count = Number(
      (source
        .prepare(`SELECT count(*) FROM ${quote(table.name)}`)
        .pluck()
        .get() as number | bigint) ?? 0,
    );
    const list = table.columns.map(quote).join(', ');
    const insert = target.prepare(
      `INSERT INTO ${quote(table.name)} (${list}) VALUES (${table.columns.map(() => '?').join(', ')})`,
    );
    const rows = source
      .prepare(`SELECT ${list} FROM ${quote(table.name)} ORDER BY ${table.orderBy}`)
      .raw(true)
      .safeIntegers(true);
    const rotated = table.columns.map((column) =>
      table.keys.has(column.toLowerCase()) || count < 2
        ? null
        : rotatedValues(source, table, column, offsetOf(seed, table.name, mode === 'rows' ? null : column, count)),
    );
    try {
      target.transaction(() => {
        for (const row of rows.iterate() as IterableIterator<unknown[]>) {
          insert.run(...row.map((value, i) => (rotated[i] ? rotated[i].next().value : value)));
        }
      })();
    } finally {
      // A cursor left open keeps the source connection busy: it could not close.
      for (const values of rotated) values?.return();
    }
    for (const sql of table.indexSql) target.exec(sql);
    copyStatistics(source, target, table.name);
  } finally {
    target.close();
  }
}

/** A column's values from row `offset` on, then from the first row: the column rotated. */
function* rotatedValues(
  db: Database.Database,
  table: TableFacts,
  column: string,
  offset: number,
): Generator<unknown, void, void> {
  const select = `SELECT ${quote(column)} FROM ${quote(table.name)} ORDER BY ${table.orderBy}`;
  const tail = db.prepare(`${select} LIMIT -1 OFFSET ?`).pluck().safeIntegers(true);
  yield* tail.iterate(offset);
  const head = db.prepare(`${select} LIMIT ?`).pluck().safeIntegers(true);
  yield* head.iterate(offset);
}

/** In 1..count-1, so that no rotated column stays in place. */
function offsetOf(seed: number, table: string, column: string | null, count: number): number {
  const digest = createHash('sha256').update(
    JSON.stringify([seed, table.toLowerCase(), column?.toLowerCase() ?? null]),
  );
  return 1 + (digest.digest().readUInt32BE(0) % (count - 1));
}

/** The planner's statistics of the table, if the source has any (ANALYZE would rescan it). */
function copyStatistics(source: Database.Database, target: Database.Database, table: string): void {
  const hasStats = source.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").get();
  if (!hasStats) return;
  const rows = source.prepare('SELECT tbl, idx, stat FROM sqlite_stat1 WHERE tbl = ?').raw(true).all(table);
  if (rows.length === 0) return;
  // ANALYZE of the (empty) schema table is how SQLite lets one create sqlite_stat1.
  target.exec('ANALYZE sqlite_schema');
  const insert = target.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)');
  for (const row of rows as unknown[][]) insert.run(...row);
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
