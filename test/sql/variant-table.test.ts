import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { createSqlPool } from '../../runtime/sql/pool.js';
import { DatabaseViewError, SqlExecutionError, type SqlExecutor } from '../../runtime/sql/executor.js';

/**
 * Variant tables (runtime/sql/variant-table.ts) and database views: what differential
 * verification relies on. A perturbed table keeps its schema, keys, references, each
 * column's values and NULLs; it moves values between rows; the source is never written.
 */

let dir: string;
let source: string;
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-variant-'));
  source = path.join(dir, 'shop.sqlite');
  const db = new Database(source);
  db.exec(`
    CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, city TEXT, age INT CHECK (age > 0), code TEXT UNIQUE);
    CREATE TABLE orders (oid TEXT PRIMARY KEY, customer_id INT REFERENCES customer(id), amount REAL, note TEXT) WITHOUT ROWID;
    CREATE TABLE note (body TEXT);
    CREATE TABLE visit (id INTEGER PRIMARY KEY, customer_id INT REFERENCES customer(id), day TEXT);
    CREATE INDEX customer_city ON customer(city);
    CREATE VIEW big AS SELECT * FROM orders WHERE amount > 10;
  `);
  const insert = db.prepare('INSERT INTO customer VALUES (?, ?, ?, ?, ?)');
  const order = db.prepare('INSERT INTO orders VALUES (?, ?, ?, ?)');
  // One transaction, not a sync to disk per row.
  db.transaction(() => {
    for (let i = 1; i <= 40; i++)
      insert.run(i, `name${i}`, ['Oslo', 'Rome', null][i % 3], i % 7 === 0 ? null : 20 + i, `c${i}`);
    for (let i = 1; i <= 60; i++) order.run(`o${i}`, 1 + (i % 40), i * 1.5, i % 4 === 0 ? null : `n${i % 5}`);
    const visit = db.prepare('INSERT INTO visit VALUES (?, ?, ?)');
    for (let i = 1; i <= 90; i++) visit.run(i, i % 3 === 0 ? null : 1 + (i % 40), `d${i % 7}`);
  })();
  db.exec("INSERT INTO note VALUES ('only one row'); ANALYZE;");
  db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const columnValues = (file: string, table: string, column: string): unknown[] => {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(`SELECT "${column}" FROM "${table}"`)
      .pluck()
      .all()
      .map((v) => JSON.stringify(v))
      .sort();
  } finally {
    db.close();
  }
};

describe.each([
  ['in-process', () => createDirectExecutor()],
  ['process pool', () => createSqlPool({ size: 1 })],
])('%s executor', (_name, create: () => SqlExecutor) => {
  let executor: SqlExecutor;
  beforeAll(() => {
    executor = create();
  });
  afterAll(() => executor.close());

  const build = (
    table: string,
    seed: number,
    mode: 'columns' | 'rows',
    file = path.join(dir, `${_name}-${table}-${seed}-${mode}.sqlite`),
    maxRows = 1000,
  ) =>
    executor
      .buildVariantTable({ dbPath: source, table, seed, mode, maxRows, file, timeoutMs: 60_000 })
      .then((r) => ({ r, file }));

  test('a perturbed table keeps keys, references, every column’s values and NULLs, and moves values between rows', async () => {
    const before = sha(source);
    const { r, file } = await build('customer', 1, 'columns');
    expect(r).toBe('built');
    expect(sha(source)).toBe(before);
    for (const column of ['id', 'name', 'city', 'age', 'code']) {
      expect(columnValues(file, 'customer', column)).toEqual(columnValues(source, 'customer', column));
    }
    const rows = (f: string) =>
      new Database(f, { readonly: true })
        .prepare('SELECT id, name, city, age, code FROM customer ORDER BY id')
        .raw()
        .all() as unknown[][];
    const [original, perturbed] = [rows(source), rows(file)];
    // Keys (primary, unique) stay with their row; other columns moved.
    expect(perturbed.map((r) => [r[0], r[4]])).toEqual(original.map((r) => [r[0], r[4]]));
    expect(perturbed.filter((r, i) => r[1] !== original[i][1]).length).toBeGreaterThan(30);
    // Declared types, collation and indexes come along.
    const copy = new Database(file, { readonly: true });
    expect(copy.prepare("SELECT count(*) FROM customer WHERE name = 'NAME3'").pluck().get()).toBe(1);
    expect(
      copy.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name = 'customer_city'").pluck().get(),
    ).toBe('customer_city');
    expect(copy.prepare('SELECT typeof(age) FROM customer WHERE age IS NOT NULL LIMIT 1').pluck().get()).toBe(
      'integer',
    );
    copy.close();
  });

  test('the same seed builds the same table; another seed or mode another one', async () => {
    const dump = (f: string) =>
      JSON.stringify(new Database(f, { readonly: true }).prepare('SELECT * FROM customer ORDER BY id').raw().all());
    const a = await build('customer', 7, 'columns', path.join(dir, `${_name}-a.sqlite`));
    const b = await build('customer', 7, 'columns', path.join(dir, `${_name}-b.sqlite`));
    const c = await build('customer', 8, 'columns', path.join(dir, `${_name}-c.sqlite`));
    const d = await build('customer', 7, 'rows', path.join(dir, `${_name}-d.sqlite`));
    expect(dump(a.file)).toBe(dump(b.file));
    expect(dump(c.file)).not.toBe(dump(a.file));
    expect(dump(d.file)).not.toBe(dump(a.file));
  });

  test('mode rows moves whole rows onto other keys: a row’s values stay together', async () => {
    const { file } = await build('customer', 3, 'rows');
    const tuples = (f: string) =>
      (new Database(f, { readonly: true }).prepare('SELECT name, city, age FROM customer').raw().all() as unknown[][])
        .map((r) => JSON.stringify(r))
        .sort();
    expect(tuples(file)).toEqual(tuples(source));
  });

  test('a referencing column moves among existing references; a WITHOUT ROWID table is copied by its key', async () => {
    const { r, file } = await build('orders', 1, 'columns');
    expect(r).toBe('built');
    expect(columnValues(file, 'orders', 'customer_id')).toEqual(columnValues(source, 'orders', 'customer_id'));
    expect(columnValues(file, 'orders', 'oid')).toEqual(columnValues(source, 'orders', 'oid'));
  });

  test('a table past maxRows keeps some of its rows whole (keys and all), and their values move among them', async () => {
    const { file } = await build('customer', 1, 'columns', path.join(dir, `${_name}-sampled.sqlite`), 20);
    const kept = new Database(file, { readonly: true });
    const ids = kept.prepare('SELECT id FROM customer ORDER BY id').pluck().all() as number[];
    expect(ids.length).toBeGreaterThan(5);
    expect(ids.length).toBeLessThan(35);
    const original = new Database(source, { readonly: true });
    const codeOf = (db: Database.Database, id: number) =>
      db.prepare('SELECT code FROM customer WHERE id = ?').pluck().get(id);
    // A unique key stays with its row; a non-key column's values are those of the kept rows, moved.
    expect(ids.map((id) => codeOf(kept, id))).toEqual(ids.map((id) => codeOf(original, id)));
    const names = (db: Database.Database) =>
      ids.map((id) => db.prepare('SELECT name FROM customer WHERE id = ?').pluck().get(id));
    expect([...names(kept)].sort()).toEqual([...names(original)].sort());
    expect(names(kept)).not.toEqual(names(original));
    kept.close();
    original.close();
  });

  test('sampled parent and child tables keep a kept row’s parent: joins along the reference still land', async () => {
    const customers = await build('customer', 5, 'columns', path.join(dir, `${_name}-parent.sqlite`), 20);
    const orders = await build('orders', 5, 'columns', path.join(dir, `${_name}-child.sqlite`), 20);
    const view = { overlays: [customers.file, orders.file], reverseScans: false };
    const run = async (sql: string) =>
      (await executor.run({ dbPath: source, sql, params: [], timeoutMs: 10_000, view })).rows[0][0];
    const kept = (await run('SELECT count(*) FROM orders')) as number;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(60);
    expect(await run('SELECT count(*) FROM orders JOIN customer ON customer.id = orders.customer_id')).toBe(kept);
    // Another seed draws other rows.
    const other = await build('customer', 6, 'columns', path.join(dir, `${_name}-parent-6.sqlite`), 20);
    const idsOf = (f: string) =>
      JSON.stringify(new Database(f, { readonly: true }).prepare('SELECT id FROM customer ORDER BY id').pluck().all());
    expect(idsOf(other.file)).not.toBe(idsOf(customers.file));
  });

  test('rows whose reference is NULL are drawn one by one, the others with their parent', async () => {
    const customers = await build('customer', 9, 'columns', path.join(dir, `${_name}-visit-parent.sqlite`), 20);
    const visits = await build('visit', 9, 'columns', path.join(dir, `${_name}-visit.sqlite`), 20);
    const view = { overlays: [customers.file, visits.file], reverseScans: false };
    const count = async (sql: string) =>
      (await executor.run({ dbPath: source, sql, params: [], timeoutMs: 10_000, view })).rows[0][0] as number;
    const withParent = await count('SELECT count(*) FROM visit WHERE customer_id IS NOT NULL');
    expect(await count('SELECT count(*) FROM visit WHERE customer_id IS NULL')).toBeGreaterThan(0);
    expect(withParent).toBeGreaterThan(0);
    expect(await count('SELECT count(*) FROM visit JOIN customer ON customer.id = visit.customer_id')).toBe(withParent);
  });

  test('a view or an unknown table is unsupported; a one-row table is copied as it is', async () => {
    expect((await build('big', 1, 'columns')).r).toBe('unsupported');
    expect((await build('nope', 1, 'columns')).r).toBe('unsupported');
    const { file } = await build('note', 1, 'columns');
    expect(columnValues(file, 'note', 'body')).toEqual([JSON.stringify('only one row')]);
  });

  test('a view reads overlays first and the original for the rest, read-only; reverse scans reverse an unordered scan', async () => {
    const { file } = await build('customer', 1, 'columns');
    const view = { overlays: [file], reverseScans: false };
    const run = (sql: string, v = view) =>
      executor.run({ dbPath: source, sql, params: [], timeoutMs: 10_000, view: v });
    const perturbed = await run('SELECT age FROM customer ORDER BY id');
    const plain = await executor.run({
      dbPath: source,
      sql: 'SELECT age FROM customer ORDER BY id',
      params: [],
      timeoutMs: 10_000,
    });
    expect(perturbed.rows).not.toEqual(plain.rows);
    // Untouched tables come from the original; joins across both land.
    const joined = await run('SELECT count(*) FROM orders JOIN customer ON customer.id = orders.customer_id');
    expect(joined.rows).toEqual([[60]]);
    await expect(run('DELETE FROM customer')).rejects.toThrow(SqlExecutionError);
    const forward = await executor.run({
      dbPath: source,
      sql: 'SELECT id FROM customer',
      params: [],
      timeoutMs: 10_000,
    });
    const backward = await run('SELECT id FROM customer', { overlays: [], reverseScans: true });
    expect(backward.rows).toEqual([...forward.rows].reverse());
  });

  test('a view whose overlay is missing is a fault of ours, not a verdict about the statement', async () => {
    const view = { overlays: [path.join(dir, 'missing.sqlite')], reverseScans: false };
    await expect(
      executor.run({ dbPath: source, sql: 'SELECT 1', params: [], timeoutMs: 10_000, view }),
    ).rejects.toThrow(DatabaseViewError);
  });
});

test('a table too large to be read whole is streamed: each column rotated by one offset of its own, keys in place', async () => {
  const large = path.join(dir, 'large.sqlite');
  const db = new Database(large);
  db.exec(`
    CREATE TABLE reading (id INTEGER PRIMARY KEY, sensor TEXT, value REAL);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50001)
    INSERT INTO reading SELECT i, 's' || i, i * 0.5 FROM n;
  `);
  db.close();
  const executor = createDirectExecutor();
  const rows = (file: string) =>
    new Database(file, { readonly: true }).prepare('SELECT id, sensor, value FROM reading ORDER BY id').raw().all() as [
      number,
      string,
      number,
    ][];
  const offsetOf = (original: unknown[], moved: unknown[]) => {
    const offset = original.indexOf(moved[0]);
    return moved.every((value, i) => value === original[(i + offset) % original.length]) ? offset : -1;
  };
  try {
    for (const mode of ['columns', 'rows'] as const) {
      const file = path.join(dir, `large-${mode}.sqlite`);
      const request = { dbPath: large, table: 'reading', seed: 1, mode, maxRows: 100_000, file, timeoutMs: 60_000 };
      expect(await executor.buildVariantTable(request)).toBe('built');
      const [original, moved] = [rows(large), rows(file)];
      expect(moved.map((r) => r[0])).toEqual(original.map((r) => r[0]));
      const offsets = [1, 2].map((c) =>
        offsetOf(
          original.map((r) => r[c]),
          moved.map((r) => r[c]),
        ),
      );
      for (const offset of offsets) expect(offset).toBeGreaterThan(0);
      if (mode === 'rows') expect(offsets[0]).toBe(offsets[1]);
      else expect(offsets[0]).not.toBe(offsets[1]);
    }
  } finally {
    await executor.close();
  }
});
