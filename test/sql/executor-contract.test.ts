import path from 'node:path';
import { SqlExecutionError, type SqlExecutor } from '../../runtime/sql/executor.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { createSqlPool } from '../../runtime/sql/pool.js';
import { createDb, HEROES_SQL, removeTempDirs, tempDir } from './fixtures.js';

/** Both executors: same read-only rules, same result shape. */
describe.each([
  ['pool', () => createSqlPool({ size: 2 })],
  ['pool sending jobs ahead', () => createSqlPool({ size: 2, lookahead: 1 })],
  ['direct', () => createDirectExecutor()],
])('%s executor', (_name, create: () => SqlExecutor) => {
  let executor: SqlExecutor;
  let dbPath: string;
  const run = (sql: string, params: (number | string | null)[] = []) =>
    executor.run({ dbPath, sql, params, timeoutMs: 10_000 });

  beforeAll(() => {
    dbPath = createDb(path.join(tempDir(), 'heroes.sqlite'), HEROES_SQL);
    executor = create();
  });
  afterAll(async () => {
    await executor.close();
    removeTempDirs();
  });

  test('returns column names and raw row arrays; BLOBs as x-hex strings, integers as numbers', async () => {
    const result = await run('SELECT id, hero_name, height_cm, avatar FROM hero WHERE id <= 2 ORDER BY id');
    expect(result).toEqual({
      columns: ['id', 'hero_name', 'height_cm', 'avatar'],
      rows: [
        [1, 'Spider-Man', 178, "x'01ff'"],
        [2, 'Batman', 188, null],
      ],
    });
  });

  test('binds integral numbers as INTEGER (integer division) and others as REAL', async () => {
    const result = await run('SELECT ? / 2, ? / 2, ?, ?', [7, 7.5, 'text', null]);
    expect(result.rows).toEqual([[3, 3.75, 'text', null]]);
  });

  test('an empty result still names its columns', async () => {
    expect(await run("SELECT hero_name AS name FROM hero WHERE hero_name = 'nobody'")).toEqual({
      columns: ['name'],
      rows: [],
    });
  });

  test('read-only queries of every shape are allowed', async () => {
    await expect(run('WITH t AS (SELECT 1 AS x) SELECT x FROM t')).resolves.toEqual({ columns: ['x'], rows: [[1]] });
    await expect(run('PRAGMA table_info(hero)')).resolves.toMatchObject({
      columns: expect.arrayContaining(['name', 'type']),
    });
    await expect(run('SELECT 1;')).resolves.toEqual({ columns: ['1'], rows: [[1]] });
  });

  test.each([
    "INSERT INTO hero (id, hero_name) VALUES (9, 'x')",
    "INSERT INTO hero (id, hero_name) VALUES (9, 'x') RETURNING id",
    "UPDATE hero SET hero_name = 'x'",
    'DELETE FROM hero',
    'DROP TABLE hero',
    'CREATE TABLE t (x)',
    'CREATE TEMP TABLE t (x)',
    "ATTACH DATABASE ':memory:' AS other",
    'PRAGMA user_version = 7',
    'PRAGMA query_only = 0',
    'VACUUM',
    'BEGIN',
  ])('refuses %s', async (sql) => {
    await expect(run(sql)).rejects.toThrow(SqlExecutionError);
    await expect(run(sql)).rejects.toThrow(/not a read-only query|readonly|read-only/i);
    expect((await run('SELECT count(*) FROM hero')).rows).toEqual([[4]]);
  });

  test('refuses more than one statement', async () => {
    await expect(run('SELECT 1; DELETE FROM hero')).rejects.toThrow(SqlExecutionError);
  });

  test('SQLite errors become SqlExecutionError with SQLite’s message', async () => {
    await expect(run('SELECT no_such_column FROM hero')).rejects.toThrow(/no such column: no_such_column/);
    await expect(run('SELEKT 1')).rejects.toThrow(SqlExecutionError);
  });

  test('a missing database file is an execution error, never created', async () => {
    const missing = path.join(path.dirname(dbPath), 'missing.sqlite');
    await expect(executor.run({ dbPath: missing, sql: 'SELECT 1', params: [], timeoutMs: 10_000 })).rejects.toThrow(
      SqlExecutionError,
    );
  });
});
