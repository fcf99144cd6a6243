import { createHash } from 'node:crypto';
import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { buildDirectoryOnce, jsonText } from '../pipeline/files.js';

/**
 * Larger BIRD-layout corpora for the scale benchmark (scale.ts), built from a BIRD folder in
 * a cache directory and reused once built:
 *
 * - `clonedCorpus`: every database `copies` times under new ids, with every question per
 *   clone: more questions and more databases, each of the original size. The pipeline caches
 *   by a database file's content hash, so identical clones would share their cached work and
 *   the benchmark would measure one copy: each clone's file gets its own `user_version` (other
 *   bytes, the same data).
 * - `inflatedCorpus`: the same databases and questions, every table's rows `factor` times, as
 *   disjoint copies of the original rows under fresh keys (foreign keys kept consistent within
 *   a copy): larger databases, the same questions.
 *
 * A corpus is built under a temporary name and renamed when complete, so a killed build is
 * never taken for a finished one.
 */

/** Bumped when what a builder writes changes: an older corpus in the cache is then not reused. */
const CORPUS_FORMAT = 1;

export function defaultScaleDir(): string {
  return process.env.NL2API_SCALE_DIR ?? path.join(os.tmpdir(), 'nl2api-scale');
}

/** What a build took, written beside the corpus (`<corpus>.build.json`), not inside it: a stray JSON file would be a question file candidate. */
export interface CorpusBuild {
  source: string;
  kind: 'clones' | 'inflated';
  n: number;
  buildMs: number;
  databases: number;
  questions: number;
  dbBytes: number;
  /** When the build finished (ISO time). */
  builtAt: string;
}

export function buildInfoOf(corpus: string): CorpusBuild | undefined {
  const file = `${corpus}.build.json`;
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CorpusBuild) : undefined;
}

/** One BIRD question as far as this module cares: everything else is carried along unchanged. */
export interface BirdQuestion {
  db_id: string;
  question_id?: number | string;
  [field: string]: unknown;
}

/** One `dev_tables.json` entry: the parts read here; the others are carried along. */
export interface TablesEntry {
  db_id: string;
  table_names_original?: string[];
  column_names_original?: [number, string][];
  foreign_keys?: [number, number][];
  [field: string]: unknown;
}

interface BirdFolder {
  questions: BirdQuestion[];
  tables?: TablesEntry[];
  /** Database ids that have `dev_databases/<id>/<id>.sqlite`, sorted. */
  dbIds: string[];
  /** Top-level files other than the question and tables files (a README stating the license). */
  extraFiles: string[];
}

const QUESTIONS = 'dev.json';
const TABLES = 'dev_tables.json';
const DATABASES = 'dev_databases';
const DESCRIPTIONS = 'database_description';

function readBirdFolder(birdDir: string): BirdFolder {
  const questions = JSON.parse(readFileSync(path.join(birdDir, QUESTIONS), 'utf8')) as BirdQuestion[];
  const tablesFile = path.join(birdDir, TABLES);
  const tables = existsSync(tablesFile) ? (JSON.parse(readFileSync(tablesFile, 'utf8')) as TablesEntry[]) : undefined;
  const dbIds = readdirSync(path.join(birdDir, DATABASES))
    .filter((id) => existsSync(sqliteOf(birdDir, id)))
    .sort();
  const extraFiles = readdirSync(birdDir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== QUESTIONS && entry.name !== TABLES)
    .map((entry) => entry.name);
  return { questions, tables, dbIds, extraFiles };
}

const sqliteOf = (root: string, id: string) => path.join(root, DATABASES, id, `${id}.sqlite`);

export const cloneId = (dbId: string, k: number) => `${dbId}_c${k}`;

/**
 * Every question once per clone, clone after clone, each clone in the original order. A
 * numeric question_id is shifted by k × (largest id + 1), so clone 0 keeps the original ids
 * and an id still tells which question it copies; any other id gets the clone's suffix.
 */
export function cloneQuestions(questions: readonly BirdQuestion[], copies: number): BirdQuestion[] {
  const numericIds = questions.map((q) => q.question_id).filter((id): id is number => typeof id === 'number');
  const span = numericIds.length > 0 ? Math.max(...numericIds) + 1 : 0;
  const clones: BirdQuestion[] = [];
  for (let k = 0; k < copies; k++) {
    for (const q of questions) {
      const clone: BirdQuestion = { ...q, db_id: cloneId(q.db_id, k) };
      if (typeof q.question_id === 'number') clone.question_id = q.question_id + k * span;
      else if (q.question_id !== undefined) clone.question_id = `${q.question_id}_c${k}`;
      clones.push(clone);
    }
  }
  return clones;
}

/** The tables file's entries once per clone (same order as the questions: clone after clone). */
export function cloneTables(entries: readonly TablesEntry[], copies: number): TablesEntry[] {
  return Array.from({ length: copies }, (_, k) => entries.map((e) => ({ ...e, db_id: cloneId(e.db_id, k) }))).flat();
}

/** A name in the cache per source folder (its absolute path) and builder format. */
function corpusPath(birdDir: string, cacheDir: string, what: string): string {
  const source = path.resolve(birdDir);
  const tag = createHash('sha256').update(`${CORPUS_FORMAT}\0${source}`).digest('hex').slice(0, 8);
  return path.join(path.resolve(cacheDir), `${path.basename(source)}-${tag}-${what}`);
}

/** A hard link where the filesystem allows one (not across devices, nor to another user's file), else a copy. */
function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) linkTree(path.join(from, entry.name), path.join(to, entry.name));
    else linkOrCopy(path.join(from, entry.name), path.join(to, entry.name));
  }
}

/** A private, writable copy (sources are often read-only, and copyFile keeps the mode). */
function copyWritable(from: string, to: string): void {
  copyFileSync(from, to, constants.COPYFILE_FICLONE);
  chmodSync(to, 0o644);
}

function copyTopLevel(birdDir: string, dir: string, folder: BirdFolder): void {
  for (const name of folder.extraFiles) linkOrCopy(path.join(birdDir, name), path.join(dir, name));
}

function writeBuildInfo(corpus: string, info: Omit<CorpusBuild, 'builtAt'>): void {
  writeFileSync(`${corpus}.build.json`, jsonText({ ...info, builtAt: new Date().toISOString() }));
}

function dbBytesOf(dir: string, dbIds: readonly string[]): number {
  return dbIds.reduce((sum, id) => sum + statSync(sqliteOf(dir, id)).size, 0);
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * `copies` clones of every database of `birdDir` (ids `<id>_c<k>`), each question once per
 * clone. Clone k's file is the original with `PRAGMA user_version = k + 1`.
 */
export async function clonedCorpus(birdDir: string, cacheDir: string, copies: number): Promise<string> {
  if (!Number.isInteger(copies) || copies < 1) throw new Error(`clone count must be a positive integer, got ${copies}`);
  const final = corpusPath(birdDir, cacheDir, `clones${copies}`);
  if (existsSync(final)) return final;
  const folder = readBirdFolder(birdDir);
  const started = performance.now();
  await buildDirectoryOnce(final, async (dir) => {
    log(`building ${copies} clones of ${folder.dbIds.length} databases in ${final}`);
    for (let k = 0; k < copies; k++) {
      for (const id of folder.dbIds) {
        const clone = cloneId(id, k);
        const target = sqliteOf(dir, clone);
        mkdirSync(path.dirname(target), { recursive: true });
        copyWritable(sqliteOf(birdDir, id), target);
        const db = new Database(target);
        try {
          db.pragma(`user_version = ${k + 1}`);
        } finally {
          db.close();
        }
        const descriptions = path.join(birdDir, DATABASES, id, DESCRIPTIONS);
        if (existsSync(descriptions)) linkTree(descriptions, path.join(dir, DATABASES, clone, DESCRIPTIONS));
      }
    }
    writeFileSync(path.join(dir, QUESTIONS), JSON.stringify(cloneQuestions(folder.questions, copies), null, 2));
    if (folder.tables) writeFileSync(path.join(dir, TABLES), JSON.stringify(cloneTables(folder.tables, copies)));
    copyTopLevel(birdDir, dir, folder);
  });
  const dbIds = folder.dbIds.flatMap((id) => Array.from({ length: copies }, (_, k) => cloneId(id, k)));
  writeBuildInfo(final, {
    source: path.resolve(birdDir),
    kind: 'clones',
    n: copies,
    buildMs: Math.round(performance.now() - started),
    databases: dbIds.length,
    questions: folder.questions.length * copies,
    dbBytes: dbBytesOf(final, dbIds),
  });
  return final;
}

/**
 * The databases of `birdDir`, each inflated `factor` times (inflateDatabase), with the same
 * ids and questions.
 */
export async function inflatedCorpus(birdDir: string, cacheDir: string, factor: number): Promise<string> {
  if (!Number.isInteger(factor) || factor < 1)
    throw new Error(`inflation factor must be a positive integer, got ${factor}`);
  const final = corpusPath(birdDir, cacheDir, `x${factor}`);
  if (existsSync(final)) return final;
  const folder = readBirdFolder(birdDir);
  const started = performance.now();
  await buildDirectoryOnce(final, async (dir) => {
    log(`inflating ${folder.dbIds.length} databases ${factor}x in ${final}`);
    for (const id of folder.dbIds) {
      const target = sqliteOf(dir, id);
      mkdirSync(path.dirname(target), { recursive: true });
      const entry = folder.tables?.find((e) => e.db_id === id);
      inflateDatabase(sqliteOf(birdDir, id), target, factor, entry);
      const descriptions = path.join(birdDir, DATABASES, id, DESCRIPTIONS);
      if (existsSync(descriptions)) linkTree(descriptions, path.join(dir, DATABASES, id, DESCRIPTIONS));
    }
    linkOrCopy(path.join(birdDir, QUESTIONS), path.join(dir, QUESTIONS));
    if (folder.tables) linkOrCopy(path.join(birdDir, TABLES), path.join(dir, TABLES));
    copyTopLevel(birdDir, dir, folder);
  });
  writeBuildInfo(final, {
    source: path.resolve(birdDir),
    kind: 'inflated',
    n: factor,
    buildMs: Math.round(performance.now() - started),
    databases: folder.dbIds.length,
    questions: folder.questions.length,
    dbBytes: dbBytesOf(final, folder.dbIds),
  });
  return final;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Lower-cased table name → its lower-cased key columns. */
export type KeyColumns = Map<string, Set<string>>;

/**
 * The columns whose values identify rows or point at them: primary keys, columns of UNIQUE
 * indexes, both sides of every declared foreign key, and both sides of the foreign keys the
 * tables file lists (BIRD declares more there than in the schema). Copies of the rows must
 * get fresh values in exactly these, the same fresh value for the same value, so that every
 * copy is joined only to itself.
 */
export function keyColumns(db: Database.Database, entry?: TablesEntry): KeyColumns {
  const keys: KeyColumns = new Map();
  const add = (table: string, column: string | null) => {
    if (column === null) return; // an expression index: no column to renumber
    const set = keys.get(table.toLowerCase()) ?? new Set<string>();
    set.add(column.toLowerCase());
    keys.set(table.toLowerCase(), set);
  };
  for (const table of userTables(db)) {
    for (const c of db.prepare('SELECT name FROM pragma_table_info(?) WHERE pk > 0').pluck().all(table) as string[]) {
      add(table, c);
    }
    const unique = db
      .prepare('SELECT name FROM pragma_index_list(?) WHERE "unique" = 1')
      .pluck()
      .all(table) as string[];
    for (const index of unique) {
      for (const c of db.prepare('SELECT name FROM pragma_index_info(?)').pluck().all(index) as (string | null)[]) {
        add(table, c);
      }
    }
    const fks = db.prepare('SELECT "table", "from", "to" FROM pragma_foreign_key_list(?)').all(table) as {
      table: string;
      from: string;
      to: string | null;
    }[];
    for (const fk of fks) {
      add(table, fk.from);
      // No "to": the parent's primary key, a key already.
      if (fk.to !== null) add(fk.table, fk.to);
    }
  }
  const tableNames = entry?.table_names_original ?? [];
  const columns = entry?.column_names_original ?? [];
  for (const pair of entry?.foreign_keys ?? []) {
    for (const index of pair) {
      const [tableIndex, column] = columns[index] ?? [-1, ''];
      if (tableIndex >= 0 && tableNames[tableIndex] !== undefined) add(tableNames[tableIndex], column);
    }
  }
  return keys;
}

function userTables(db: Database.Database): string[] {
  return db
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .pluck()
    .all() as string[];
}

/**
 * A key value that is an integer, whatever its storage class: an INTEGER, a REAL without a
 * fraction, a TEXT that reads back as the same integer ('42', not '042' nor '4e1'). A key
 * stored as '42' in a TEXT column and as 42 in the INTEGER column it references joins
 * (SQLite applies numeric affinity), so both must be renumbered the same way.
 */
const integral = (c: string) =>
  `(typeof(${c}) = 'integer' OR (typeof(${c}) = 'real' AND ${c} = CAST(${c} AS INTEGER))` +
  ` OR (typeof(${c}) = 'text' AND CAST(CAST(${c} AS INTEGER) AS TEXT) = ${c}))`;

/**
 * A key column's value in a copy: an integer shifted by the copy's offset (`@offset`, a
 * multiple of the database's stride), anything else suffixed with `#<copy>` (`@suffix`),
 * NULL kept. A function of the value alone: equal values stay equal within a copy, and no
 * value of one copy equals a value of another.
 */
export function copiedKey(column: string): string {
  const c = quote(column);
  return `CASE WHEN ${c} IS NULL THEN NULL WHEN ${integral(c)} THEN CAST(${c} AS INTEGER) + @offset ELSE CAST(${c} AS TEXT) || @suffix END`;
}

/**
 * The power of ten above twice the largest magnitude of an integral key value: copies shifted
 * by multiples of it never overlap (twice: negative keys shift into the range below).
 */
export function strideFor(maxAbs: number | bigint): bigint {
  const bound = 2n * BigInt(maxAbs);
  let stride = 10n;
  while (stride <= bound) stride *= 10n;
  return stride;
}

/** Largest |v| over the integral values of every key column (0 when none). */
function largestIntegralKey(db: Database.Database, keys: KeyColumns, tables: readonly string[]): bigint {
  let max = 0n;
  for (const table of tables) {
    const keySet = keys.get(table.toLowerCase());
    if (!keySet) continue;
    for (const column of insertableColumns(db, table).filter((c) => keySet.has(c.toLowerCase()))) {
      const c = quote(column);
      const value = db
        .prepare(`SELECT max(abs(CAST(${c} AS INTEGER))) FROM ${quote(table)} WHERE ${integral(c)}`)
        .safeIntegers(true)
        .pluck()
        .get() as bigint | null;
      if (value !== null && value > max) max = value;
    }
  }
  return max;
}

/** Columns an INSERT may name (not generated ones). */
function insertableColumns(db: Database.Database, table: string): string[] {
  return db
    .prepare('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid')
    .pluck()
    .all(table) as string[];
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * Writes `target`: the database `source` with every table's rows `factor` times. Copy c
 * (1..factor-1) of each row is the original row with its key columns (keyColumns) renumbered
 * (copiedKey: integers + c × stride, other values + '#c'), so each copy is a disjoint,
 * isomorphic copy of the original data; non-key columns are copied as they are. The file's
 * indexes come with it (it starts as a copy of the source); ANALYZE gives the planner
 * statistics of the new size.
 */
export function inflateDatabase(source: string, target: string, factor: number, entry?: TablesEntry): void {
  copyWritable(source, target);
  if (factor === 1) return;
  const db = new Database(target);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    // A copy's rows reference rows of the same copy, inserted table by table in any order.
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -262144'); // 256 MB: index pages of the growing tables stay in memory
    const tables = userTables(db);
    const keys = keyColumns(db, entry);
    const stride = strideFor(largestIntegralKey(db, keys, tables));
    if (stride * BigInt(factor) > INT64_MAX) throw new Error(`${source}: keys too large to inflate ${factor}x`);
    // The original rows, read from the untouched source (never from the table being filled).
    db.prepare('ATTACH DATABASE ? AS src').run(source);
    const inserts = tables.map((table) => {
      const keySet = keys.get(table.toLowerCase()) ?? new Set<string>();
      const columns = insertableColumns(db, table);
      const values = columns.map((c) => (keySet.has(c.toLowerCase()) ? copiedKey(c) : quote(c)));
      return db.prepare(
        `INSERT INTO main.${quote(table)} (${columns.map(quote).join(', ')}) SELECT ${values.join(', ')} FROM src.${quote(table)}`,
      );
    });
    const copy = db.transaction((c: number) => {
      for (const insert of inserts) insert.run({ offset: BigInt(c) * stride, suffix: `#${c}` });
    });
    const name = path.basename(target);
    let reported = performance.now();
    for (let c = 1; c < factor; c++) {
      copy(c);
      if (performance.now() - reported > 5000 || c === factor - 1) {
        reported = performance.now();
        log(`  ${name}: copy ${c + 1}/${factor}, ${(statSync(target).size / 2 ** 20).toFixed(0)} MB`);
      }
    }
    db.prepare('DETACH DATABASE src').run();
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}
