import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseInfo, SqlValue, ToolCall, ToolPool } from '../../core/model.js';
import { mulberry32 } from '../../core/random.js';
import { compileSequence, ToolError } from '../../runtime/slot/index.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';

/** Seeded PRNG: property tests replay exactly. */
export const prng = mulberry32;

export function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)];
}

export function int(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

const WORDS = ['apple', 'Apple', 'banana', 'cherry', 'date', 'fig', 'grape', 'kiwi', '10', '9', '2.5', ''];

/**
 * Schema of the random test database: `item` (integers, reals, texts, numeric-looking
 * texts, a date, NULLs, duplicates) and `tag` (joins to item, not every item tagged).
 */
export const SCHEMA: Record<string, [string, string][]> = {
  item: [
    ['id', 'INTEGER'],
    ['qty', 'INTEGER'],
    ['price', 'REAL'],
    ['name', 'TEXT'],
    ['code', 'TEXT'],
    ['grp', 'INTEGER'],
    ['day', 'TEXT'],
  ],
  tag: [
    ['item_id', 'INTEGER'],
    ['label', 'TEXT'],
    ['weight', 'INTEGER'],
  ],
};

export interface TestDb {
  info: DatabaseInfo;
  executor: SqlExecutor;
  /** A read-write handle for the reference queries. */
  raw: Database.Database;
  cleanup(): Promise<void>;
}

export function randomRows(rand: () => number, n: number): { item: SqlValue[][]; tag: SqlValue[][] } {
  const maybe = <T>(v: T): T | null => (rand() < 0.15 ? null : v);
  const item: SqlValue[][] = [];
  for (let i = 1; i <= n; i++) {
    item.push([
      i,
      maybe(int(rand, -5, 12)),
      maybe(Math.round((rand() * 40 - 10) * 4) / 4),
      maybe(pick(rand, WORDS)),
      maybe(pick(rand, ['1', '2', '10', 'x1', 'X2', 'ab%c', 'a_b'])),
      maybe(int(rand, 1, 4)),
      maybe(`20${int(rand, 10, 24)}-0${int(rand, 1, 9)}-1${int(rand, 0, 9)}`),
    ]);
  }
  const tag: SqlValue[][] = [];
  for (let i = 0; i < n; i++) {
    tag.push([int(rand, 1, n + 2), maybe(pick(rand, ['red', 'blue', 'green'])), maybe(int(rand, 0, 9))]);
  }
  return { item, tag };
}

export function createTestDb(seed: number, n = 20): TestDb {
  const rows = randomRows(prng(seed), n);
  return createDb({ item: { columns: SCHEMA.item, rows: rows.item }, tag: { columns: SCHEMA.tag, rows: rows.tag } });
}

/** A temporary SQLite file with the given tables (dropped by `cleanup`). */
export function createDb(tables: Record<string, { columns: [string, string][]; rows: SqlValue[][] }>): TestDb {
  const dir = mkdtempSync(join(tmpdir(), 'nl2api-slot-'));
  const path = join(dir, 'test.sqlite');
  const raw = new Database(path);
  // One transaction: a row at a time, each insert waited for its own sync to disk, which for
  // a grid of 2,000 rows was 20 s of a loaded machine's time.
  raw.transaction(() => {
    for (const [table, { columns, rows }] of Object.entries(tables)) {
      raw.exec(`CREATE TABLE "${table}" (${columns.map(([c, t]) => `"${c}" ${t}`).join(', ')})`);
      const insert = raw.prepare(`INSERT INTO "${table}" VALUES (${columns.map(() => '?').join(', ')})`);
      for (const row of rows) insert.run(...row);
    }
  })();
  const info: DatabaseInfo = {
    dbId: 'test',
    path,
    fingerprint: path,
    tables: Object.entries(tables).map(([name, { columns }]) => ({
      name,
      columns: columns.map(([c, t]) => ({
        name: c,
        type: t,
        description: `the ${c} of the ${name}`,
        valueDescription: c === 'grp' ? 'group 1..4' : '',
      })),
      primaryKey: [],
      foreignKeys: [],
    })),
  };
  const executor = createDirectExecutor();
  return {
    info,
    executor,
    raw,
    async cleanup() {
      await executor.close();
      raw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The starting table of one table of the test database, aliased T1. */
export function tableInit(table: string): ToolCall {
  return {
    name: 'initialize_active_data',
    label: 'starting_table_var',
    arguments: { database: 'test', tables: [{ alias: 'T1', table }], joins: [] },
  };
}

/** The starting table of two tables, T1 inner-joined with T2 on one equality. */
export function innerJoinInit(left: string, right: string, on: { left: string; right: string }): ToolCall {
  return {
    name: 'initialize_active_data',
    label: 'starting_table_var',
    arguments: {
      database: 'test',
      tables: [
        { alias: 'T1', table: left },
        { alias: 'T2', table: right },
      ],
      joins: [{ type: 'inner', alias: 'T2', on: [on] }],
    },
  };
}

export const INIT_ITEM: ToolCall = tableInit('item');

export const INIT_JOIN: ToolCall = innerJoinInit('item', 'tag', { left: 'T1.id', right: 'T2.item_id' });

let counter = 0;
export function call(name: string, args: Record<string, unknown>, label = `c${++counter}`): ToolCall {
  return { name, arguments: args, label };
}

/** Runs reference SQL directly (integers bound as INTEGER, as the executor does). */
export function reference(db: Database.Database, sql: string, params: unknown[] = []): SqlValue[][] {
  const bind = params.map((p) => (typeof p === 'number' && Number.isInteger(p) ? BigInt(p) : p));
  return db
    .prepare(sql)
    .raw(true)
    .all(...bind) as SqlValue[][];
}

/** Sorts rows for order-insensitive comparison. */
export function bag(rows: SqlValue[][]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

/** The code of the ToolError that compiling `calls` throws; 'ok' when they compile. */
export function toolErrorCode(
  info: DatabaseInfo,
  initialization: ToolCall[],
  calls: ToolCall[],
  pool: ToolPool = 'extended',
): string {
  try {
    compileSequence(info, initialization, calls, pool);
  } catch (error) {
    if (error instanceof ToolError) return error.code;
    throw error;
  }
  return 'ok';
}
