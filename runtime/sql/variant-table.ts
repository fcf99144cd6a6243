import { makeDirectory } from '../../core/directories.js';
import { createHash } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
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
 * - a hierarchy kept a forest: a column that references its own table's key (a declared
 *   FOREIGN KEY, `employee.manager_id → employee.employee_id`) rotated freely would close
 *   cycles, and a recursive query walking it would never end. Such a table's values move
 *   only among rows of the same depth in the hierarchy (hierarchyClasses): a row's parent
 *   is still one level up, so the parent relation stays acyclic, while who is under whom
 *   changes. Mode `columns`: the referencing column within its depths (the others as
 *   before); mode `rows`: whole rows within the rows of equal depths.
 * - a table of more than `maxRows` rows sampled down to about that many before its values
 *   move (`sampledRows`): a variant is there to tell queries apart, and every statement a
 *   question makes runs on it, so on large data its cost, not its size, is what matters.
 * A table of up to IN_MEMORY_ROWS rows (every table, unless `maxRows` is raised above it) is
 * read whole and its values moved in memory; a larger one is streamed (one read cursor per
 * rotated column), so a table of any size costs one pass. The source is only ever opened
 * read-only. Written to a temporary file and renamed: a reader never sees a half-built
 * table, and two builders agree byte for byte.
 */

export function buildVariantTable(request: VariantTableRequest): VariantTableResult {
  const source = openReadOnly(request.dbPath);
  try {
    const table = tableOf(source, request.table);
    if (!table) return 'unsupported';
    makeDirectory(path.dirname(request.file));
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
  primaryKey: string[];
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
    primaryKey,
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
      .prepare('SELECT id, "from", "to" FROM pragma_foreign_key_list(?) WHERE "table" = ? COLLATE NOCASE')
      .all(other.name, table) as { id: number; from: string; to: string | null }[];
    for (const reference of references) {
      // A reference without a column names the primary key, which is already kept.
      add(reference.to);
      // A composite reference of the table to itself stays too: moved, it could close a cycle (selfReferences).
      const composite = references.some((r) => r.id === reference.id && r !== reference);
      if (composite && other.name.toLowerCase() === table.toLowerCase()) add(reference.from);
    }
  }
  return keys;
}

function writeVariant(
  source: Database.Database,
  table: TableFacts,
  request: Pick<VariantTableRequest, 'seed' | 'mode' | 'maxRows'>,
  file: string,
): void {
  const { seed, mode } = request;
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
    const offsetFor = (rows: number) =>
      table.columns.map((column) =>
        table.keys.has(column.toLowerCase()) || rows < 2
          ? null
          : offsetOf(seed, table.name, mode === 'rows' ? null : column, rows),
      );
    const sample = count > request.maxRows ? sampledRows(source, table, request, count) : null;
    const hierarchies = selfReferences(source, table);
    const held = sample ?? (hierarchies.length > 0 || count <= IN_MEMORY_ROWS ? allRows(source, table) : null);
    const rows = held
      ? movedRows(held, rowSources(table, held, hierarchies, offsetFor(held.length), request))
      : rotatedTable(source, table, offsetFor(count));
    try {
      target.transaction(() => {
        for (const row of rows) insert.run(...row);
      })();
    } finally {
      // A cursor left open keeps the source connection busy: it could not close.
      rows.return();
    }
    for (const sql of table.indexSql) target.exec(sql);
    copyStatistics(source, target, table.name);
  } finally {
    target.close();
  }
}

/**
 * Read whole in one statement, a table's values move at half the CPU of a cursor per rotated
 * column (the rows end up the same, byte for byte); beyond this, memory matters more.
 */
const IN_MEMORY_ROWS = 50_000;

/** Every row of the table, streamed, each column rotated by its offset (null: kept in place). */
function* rotatedTable(
  source: Database.Database,
  table: TableFacts,
  offsets: (number | null)[],
): Generator<unknown[], void, void> {
  const rows = source
    .prepare(`SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ORDER BY ${table.orderBy}`)
    .raw(true)
    .safeIntegers(true);
  const rotated = table.columns.map((column, i) => {
    const offset = offsets[i];
    return offset === null ? null : rotatedValues(source, table, column, offset);
  });
  try {
    for (const row of rows.iterate() as IterableIterator<unknown[]>) {
      yield row.map((value, i) => (rotated[i] ? rotated[i].next().value : value));
    }
  } finally {
    for (const values of rotated) values?.return();
  }
}

/** Rows held in memory, each column's value taken from the row its source map gives (null: kept in place). */
function* movedRows(rows: unknown[][], sources: (Source | null)[]): Generator<unknown[], void, void> {
  for (const [i, row] of rows.entries()) {
    yield row.map((value, c) => {
      const source = sources[c];
      return source === null ? value : rows[source(i)][c];
    });
  }
}

/** The row a moved column's value at row `i` comes from. */
type Source = (i: number) => number;

/**
 * Where each column's values come from: rotated by its offset as rotatedTable rotates a
 * whole table, but in a table with hierarchies (selfReferences) within the rows of the same
 * depths: in mode `rows` every moved column (the rows move whole), in mode `columns` each
 * referencing column within its own hierarchy's depths.
 */
function rowSources(
  table: TableFacts,
  rows: unknown[][],
  hierarchies: SelfReference[],
  offsets: (number | null)[],
  { seed, mode }: Pick<VariantTableRequest, 'seed' | 'mode'>,
): (Source | null)[] {
  const rotation = (offset: number | null): Source | null =>
    offset === null ? null : (i) => (i + offset) % rows.length;
  if (hierarchies.length === 0) return offsets.map(rotation);
  const index = (column: string) => table.columns.indexOf(column);
  const depths = hierarchies.map((h) => hierarchyDepths(rows, index(h.from), index(h.to)));
  if (mode === 'rows') {
    const whole = withinClasses(
      rows.map((_, i) => depths.map((d) => d[i]).join(',')),
      (part, size) => offsetOf(seed, table.name, null, size, part),
    );
    return offsets.map((offset) => (offset === null ? null : whole));
  }
  return offsets.map((offset, c) => {
    const h = hierarchies.findIndex((x) => x.from === table.columns[c]);
    if (offset === null || h < 0) return rotation(offset);
    return withinClasses(depths[h].map(String), (part, size) =>
      offsetOf(seed, table.name, table.columns[c], size, part),
    );
  });
}

/**
 * Each row's value from another row of its class, the rows of a class rotated among
 * themselves (in the table's stable order) by the class's offset; a class of one row keeps it.
 */
function withinClasses(classes: string[], offsetFor: (part: string, size: number) => number): Source {
  const members = new Map<string, number[]>();
  classes.forEach((c, i) => members.set(c, [...(members.get(c) ?? []), i]));
  const sources = Int32Array.from(classes, (_, i) => i);
  for (const [part, rows] of members) {
    if (rows.length < 2) continue;
    const offset = offsetFor(part, rows.length);
    rows.forEach((row, k) => (sources[row] = rows[(k + offset) % rows.length]));
  }
  return (i) => sources[i];
}

/** A column of the table that references the table's own key (a parent), and that key. */
interface SelfReference {
  from: string;
  to: string;
}

/**
 * The table's declared references to itself of one column each (a composite one is kept in
 * place, keyColumns), whose referencing column moves (is not a key itself).
 */
function selfReferences(source: Database.Database, table: TableFacts): SelfReference[] {
  const own = (name: string) => table.columns.find((c) => c.toLowerCase() === name.toLowerCase());
  return singleColumnReferences(source, table.name).flatMap((reference) => {
    if (reference.parent.toLowerCase() !== table.name.toLowerCase()) return [];
    const from = own(reference.from);
    const to = own(reference.to ?? table.primaryKey[0] ?? '');
    return from === undefined || to === undefined || table.keys.has(from.toLowerCase()) ? [] : [{ from, to }];
  });
}

/**
 * Each row's depth in the hierarchy its column `from` makes (a row whose value names no
 * row's `to` is a root, of depth 0): the length of its chain of parents. A chain that runs
 * into a cycle of the source's own stops where it would repeat a row.
 */
function hierarchyDepths(rows: unknown[][], from: number, to: number): number[] {
  const byKey = new Map<string, number>();
  rows.forEach((row, i) => {
    if (row[to] !== null) byKey.set(valueText(row[to]), i);
  });
  const parents = rows.map((row) => (row[from] === null ? undefined : byKey.get(valueText(row[from]))));
  const depths: number[] = rows.map(() => -1);
  for (let i = 0; i < rows.length; i++) {
    const chain: number[] = [];
    const seen = new Set<number>();
    let row: number | undefined = i;
    while (row !== undefined && depths[row] < 0 && !seen.has(row)) {
      seen.add(row);
      chain.push(row);
      row = parents[row];
    }
    let depth = row === undefined || seen.has(row) ? -1 : depths[row];
    for (let k = chain.length - 1; k >= 0; k--) depths[chain[k]] = ++depth;
  }
  return depths;
}

/** Every row of the table, in its stable order. */
function allRows(source: Database.Database, table: TableFacts): unknown[][] {
  return source
    .prepare(`SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ORDER BY ${table.orderBy}`)
    .raw(true)
    .safeIntegers(true)
    .all() as unknown[][];
}

/** Sampled rows held in memory at most: this many times `maxRows` (a skewed anchor keeps more than its share). */
const SAMPLE_CAP_FACTOR = 4;

/**
 * About `maxRows` of a table's rows, in its stable order: those whose *anchor* value hashes
 * (seeded) below `maxRows / count`. The same value hashes the same in every table, so where
 * a table is anchored on its reference to a sampled parent and the parent on the key
 * referenced, a kept row's parent is kept too, and joins along that reference still find
 * their rows (anchorOf). A row whose anchor is NULL is drawn by its position.
 */
function sampledRows(
  source: Database.Database,
  table: TableFacts,
  { seed, maxRows }: Pick<VariantTableRequest, 'seed' | 'maxRows'>,
  count: number,
): unknown[][] {
  const anchor = anchorOf(source, table, maxRows);
  const share = maxRows / Math.max(count, anchor.parentCount);
  const rows = source
    .prepare(
      `SELECT ${anchor.column === null ? 'NULL' : quote(anchor.column)}, ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ORDER BY ${table.orderBy}`,
    )
    .raw(true)
    .safeIntegers(true);
  const kept: unknown[][] = [];
  let position = 0;
  for (const [value, ...row] of rows.iterate() as IterableIterator<unknown[]>) {
    const drawn = value === null ? `#${position}` : valueText(value);
    position++;
    if (unitHash(seed, drawn) >= share) continue;
    kept.push(row);
    // Leaving the loop closes the cursor.
    if (kept.length >= maxRows * SAMPLE_CAP_FACTOR) break;
  }
  return kept;
}

/**
 * What a sampled table's rows are drawn by: its reference to the largest parent that is
 * sampled too (a kept row's parent is then kept: the parent is drawn by the key referenced,
 * and the child by the parent's, smaller, share); else the column other tables reference
 * most (so their rows can follow); else its rows one by one.
 */
function anchorOf(
  source: Database.Database,
  table: TableFacts,
  maxRows: number,
): { column: string | null; parentCount: number } {
  let best: { column: string; parentCount: number } | null = null;
  for (const reference of singleColumnReferences(source, table.name)) {
    const parentCount = rowCount(source, reference.parent);
    if (parentCount > maxRows && (best === null || parentCount > best.parentCount))
      best = { column: reference.from, parentCount };
  }
  if (best) return best;
  const referenced = new Map<string, number>();
  for (const { name } of source.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as {
    name: string;
  }[]) {
    for (const reference of singleColumnReferences(source, name)) {
      if (reference.parent.toLowerCase() !== table.name.toLowerCase()) continue;
      const column = reference.to ?? table.primaryKey[0];
      if (column) referenced.set(column, (referenced.get(column) ?? 0) + 1);
    }
  }
  const column = [...referenced].sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1))[0]?.[0] ?? null;
  return { column, parentCount: 0 };
}

interface Reference {
  from: string;
  parent: string;
  /** The referenced column; null: the parent's primary key. */
  to: string | null;
}

/** A table's references of one column each (a composite key is no anchor). */
function singleColumnReferences(source: Database.Database, table: string): Reference[] {
  const rows = source.prepare('SELECT id, "from", "table", "to" FROM pragma_foreign_key_list(?)').all(table) as {
    id: number;
    from: string;
    table: string;
    to: string | null;
  }[];
  return rows
    .filter((row) => rows.filter((other) => other.id === row.id).length === 1)
    .map((row) => ({ from: row.from, parent: row.table, to: row.to }));
}

function rowCount(source: Database.Database, table: string): number {
  try {
    return Number(
      source
        .prepare(`SELECT count(*) FROM ${quote(table)}`)
        .pluck()
        .get(),
    );
  } catch {
    return 0; // a reference to a table that does not exist
  }
}

/** A value as text, the same for 5 stored as INTEGER, REAL or TEXT, so that a reference hashes like its key. */
function valueText(value: unknown): string {
  return Buffer.isBuffer(value) ? `x'${value.toString('hex')}'` : String(value);
}

/** A seeded hash of a text in [0, 1). */
function unitHash(seed: number, text: string): number {
  return createHash('sha256').update(`${seed}\0${text}`).digest().readUInt32BE(0) / 2 ** 32;
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

/** In 1..count-1, so that no rotated column stays in place; `part`: of one class of rows (withinClasses). */
function offsetOf(seed: number, table: string, column: string | null, count: number, part?: string): number {
  const key = [seed, table.toLowerCase(), column?.toLowerCase() ?? null];
  const digest = createHash('sha256').update(JSON.stringify(part === undefined ? key : [...key, part]));
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
