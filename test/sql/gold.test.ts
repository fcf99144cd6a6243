import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pinClock, readsClock } from '../../generators/sql/clock.js';
import { runGold } from '../../generators/sql/gold.js';
import { resultShape } from '../../runtime/sql/result-shape.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { createSqlPool } from '../../runtime/sql/pool.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { memoizeExecutor } from '../../pipeline/sql-memo.js';
import { BIRD_DIR, createDb, HEROES_SQL, removeTempDirs, RUNAWAY_SQL, tempDir } from './fixtures.js';

const REFERENCE = '2026-01-01 00:00:00';
let executor: SqlExecutor;
let heroes: DatabaseInfo;

beforeAll(async () => {
  const dir = tempDir();
  createDb(path.join(dir, 'heroes.sqlite'), HEROES_SQL);
  writeFileSync(
    path.join(dir, 'questions.jsonl'),
    JSON.stringify({ id: 'q', db_id: 'heroes', question: 'x?', sql: 'SELECT 1' }),
  );
  heroes = (await loadSource(dir)).databases[0];
  executor = createSqlPool({ size: Math.max(2, os.cpus().length) });
});
afterAll(async () => {
  await executor.close();
  removeTempDirs();
});

const instance = (sql: string): Instance => ({
  id: 't',
  index: 0,
  dbId: 'heroes',
  question: 'q?',
  evidence: '',
  sql,
  difficulty: null,
});

describe('runGold', () => {
  test('executes the gold SQL and reports ordering and distinctness', async () => {
    const outcome = await runGold(
      instance('SELECT DISTINCT publisher_id FROM hero ORDER BY publisher_id DESC'),
      heroes,
      executor,
      5000,
      REFERENCE,
    );
    expect(outcome).toEqual({
      ok: true,
      value: {
        columns: ['publisher_id'],
        rows: [[2], [1]],
        executedSql: 'SELECT DISTINCT publisher_id FROM hero ORDER BY publisher_id DESC',
        ordered: true,
        distinct: true,
        // How long it ran: the measure of a REST proposal's trial run.
        elapsedMs: expect.any(Number),
      },
    });
    expect(outcome.ok && outcome.value.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  test("its time is the statement's running time, not its wait for a SQL worker", async () => {
    // A pool with one worker, busy with a long statement: the gold waits for it, then runs fast.
    const pool = createSqlPool({ size: 1 });
    try {
      const busy = pool.run({ dbPath: heroes.path, sql: RUNAWAY_SQL, params: [], timeoutMs: 700 }).catch(() => null);
      const started = performance.now();
      const outcome = await runGold(
        instance('SELECT hero_name FROM hero'),
        heroes,
        memoizeExecutor(pool),
        5000,
        REFERENCE,
      );
      const waited = performance.now() - started;
      await busy;
      expect(waited).toBeGreaterThanOrEqual(600);
      expect(outcome.ok && outcome.value.elapsedMs).toBeLessThan(waited / 2);
    } finally {
      await pool.close();
    }
  });

  test('SQL that reads the clock runs at the reference time, and records it', async () => {
    const run = (time: string) =>
      runGold(
        instance(
          "SELECT STRFTIME('%Y', 'now') - 2000, date(CURRENT_TIMESTAMP), hero_name FROM hero WHERE hero_name = 'Batman'",
        ),
        heroes,
        executor,
        5000,
        time,
      );
    expect(await run('2031-06-30 23:59:59')).toMatchObject({
      ok: true,
      value: { referenceTime: '2031-06-30 23:59:59', rows: [[31, '2031-06-30', 'Batman']] },
    });
    expect(await run('2040-01-01 00:00:00')).toMatchObject({
      ok: true,
      value: { rows: [[40, '2040-01-01', 'Batman']] },
    });
    // SQL that does not read the clock records no reference time.
    const plain = await runGold(instance('SELECT hero_name FROM hero'), heroes, executor, 5000, REFERENCE);
    expect(plain.ok && 'referenceTime' in plain.value).toBe(false);
  });

  test.each([
    ["SELECT JULIANDAY('now') - JULIANDAY(x) FROM t", "SELECT JULIANDAY('2030-01-02 03:04:05') - JULIANDAY(x) FROM t"],
    ["SELECT datetime(CURRENT_TIMESTAMP, 'localtime')", "SELECT datetime('2030-01-02 03:04:05', 'localtime')"],
    ['SELECT current_date, CURRENT_TIME', "SELECT '2030-01-02', '03:04:05'"],
    [
      'SELECT DATETIME() - born, date( /* now */ ) FROM t',
      "SELECT DATETIME('2030-01-02 03:04:05') - born, date('2030-01-02 03:04:05' /* now */ ) FROM t",
    ],
    ["SELECT strftime('%Y', (('NOW')))", "SELECT strftime('%Y', (('2030-01-02 03:04:05')))"],
  ])('pins the clock: %s', (sql, pinned) => {
    expect(pinClock(sql, '2030-01-02 03:04:05')).toBe(pinned);
  });

  test.each([
    ["SELECT JULIANDAY('now') - JULIANDAY(x) FROM t", true],
    ["SELECT datetime(CURRENT_TIMESTAMP, 'localtime')", true],
    ['SELECT current_date', true],
    ["SELECT date('NOW')", true],
    ["SELECT name FROM t WHERE status = 'now playing'", false],
    ["SELECT name FROM t WHERE status = 'now' OR upper('now') = 'NOW'", false],
    ['SELECT "now" FROM t -- now', false],
    ['SELECT `CURRENT_TIMESTAMP` FROM t', false],
  ])('reads the clock: %s → %s', (sql, expected) => {
    expect(readsClock(sql)).toBe(expected);
  });

  test('resolves double-quoted string literals the way SQLite’s fallback does', async () => {
    const outcome = await runGold(
      instance('SELECT "hero_name" FROM hero WHERE hero_name = "Batman"'),
      heroes,
      executor,
      5000,
      REFERENCE,
    );
    expect(outcome).toMatchObject({
      ok: true,
      value: { executedSql: `SELECT "hero_name" FROM hero WHERE hero_name = 'Batman'`, rows: [['Batman']] },
    });
  });

  test.each([
    ['DELETE FROM hero', /not a read-only SELECT/],
    ["UPDATE hero SET hero_name = 'x'", /not a read-only SELECT/],
    ["ATTACH ':memory:' AS x", /not a read-only SELECT/],
    ['WITH x AS (SELECT 1) DELETE FROM hero', /not a read-only query/],
    ['SELECT nope FROM hero', /no such column: nope/],
    ['SELECT * FROM villain', /no such table: villain/],
    ['SELECT FROM', /syntax error/],
  ])('%s → gold_error', async (sql, message) => {
    const outcome = await runGold(instance(sql), heroes, executor, 5000, REFERENCE);
    expect(outcome).toMatchObject({ ok: false, category: 'gold_error', message: expect.stringMatching(message) });
  });

  test('a runaway gold SQL → gold_timeout, and the next one still runs', async () => {
    const outcome = await runGold(instance(RUNAWAY_SQL), heroes, executor, 300, REFERENCE);
    expect(outcome).toMatchObject({ ok: false, category: 'gold_timeout' });
    expect(await runGold(instance('SELECT count(*) FROM hero'), heroes, executor, 5000, REFERENCE)).toMatchObject({
      ok: true,
      value: { rows: [[4]] },
    });
  });
});

describe('resultShape', () => {
  test.each([
    ['SELECT a FROM t', false, false],
    ['SELECT DISTINCT a FROM t ORDER BY a LIMIT 3', true, true],
    ['SELECT a FROM (SELECT DISTINCT a FROM t ORDER BY a)', false, false],
    ['SELECT a, RANK() OVER (ORDER BY b) FROM t', false, false],
    ['WITH x AS (SELECT a FROM t ORDER BY a) SELECT DISTINCT a FROM x', false, true],
    ['SELECT a FROM t UNION SELECT b FROM u ORDER BY 1', true, true],
    ['SELECT DISTINCT a FROM t UNION ALL SELECT b FROM u', false, false],
    ['SELECT a FROM t WHERE a IN (SELECT b FROM u ORDER BY b) ORDER BY a', true, false],
  ])('%s → ordered %s, distinct %s', (sql, ordered, distinct) => {
    expect(resultShape(sql)).toEqual({ ordered, distinct });
  });

  test('reads only the top level, also of SQL no parser knows', () => {
    const sql =
      "SELECT DISTINCT x FROM t WHERE y = 'ORDER BY' AND z IN (SELECT z FROM u ORDER BY z) ORDER BY x GLOB_UNKNOWN_SYNTAX(((";
    expect(resultShape(sql)).toEqual({ ordered: true, distinct: true });
    expect(resultShape("SELECT a FROM t -- ORDER BY a\nWHERE b = 'DISTINCT'")).toEqual({
      ordered: false,
      distinct: false,
    });
    expect(resultShape('SELECT a FROM t EXCEPT SELECT b FROM u UNION ALL SELECT c FROM v')).toEqual({
      ordered: false,
      distinct: false,
    });
    expect(resultShape('SELECT DISTINCT a FROM t ORDER BY a COLLATE NOCASE ???')).toEqual({
      ordered: true,
      distinct: true,
    });
  });
});

(existsSync(BIRD_DIR) ? describe : describe.skip)('BIRD dev gold SQL (NL2API_BIRD_DIR)', () => {
  test('all 1052 gold SQL execute through the pool without error', async () => {
    const source = await loadSource(BIRD_DIR);
    const databases = new Map(source.databases.map((db) => [db.dbId, db]));
    // The time limit only catches a hang: how fast BIRD's gold SQL runs is `npm run bench`'s (a).
    const outcomes = await Promise.all(
      source.instances.map((item) => runGold(item, databases.get(item.dbId)!, executor, 120_000, REFERENCE)),
    );
    const failures = outcomes.flatMap((outcome, i) =>
      outcome.ok ? [] : [`${source.instances[i].id}: ${outcome.message}`],
    );
    expect(failures).toEqual([]);
    expect(outcomes).toHaveLength(1052);
    const nonEmpty = outcomes.filter((outcome) => outcome.ok && outcome.value.rows.length > 0).length;
    expect(nonEmpty).toBe(1050); // README: q173 and q388 are empty on the twin
  });
});
