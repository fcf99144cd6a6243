/**
 * What each query decomposes into, and what is rejected, is in the golden files
 * (golden.test.ts, golden/*.txt). Here: what they cannot show, that decomposing twice gives
 * the same bytes and that executed sequences return what the SQL returns.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resultShape } from '../../runtime/sql/result-shape.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import { decompose } from '../../generators/slot/decompose.js';
import type { SlotSequence, ToolOutput } from '../../core/model.js';
import { executeSequence } from '../../runtime/slot/index.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { compareWithGold } from '../../verifiers/compare.js';
import { goldenCases, readGoldenFile } from './golden-fixtures.js';
import { createDatabase, SCHEMA } from './schema.js';

/** The SQL of the golden cases of `files` whose accepted sequence matches `calls`. */
function acceptedGoldenSql(files: string[], calls: RegExp): string[] {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden');
  return files.flatMap((name) =>
    goldenCases(readGoldenFile(path.join(dir, name)))
      .filter((c) => c.pool === 'extended' && !c.expected.startsWith('rejected') && calls.test(c.expected))
      .map((c) => c.sql),
  );
}

function sequence(sql: string): SlotSequence {
  const parsed = parseQuery(sql, SCHEMA);
  if (!parsed.ok) throw new Error(parsed.message);
  const outcome = decompose(parsed.value, SCHEMA, 'extended');
  if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
  return outcome.value;
}

test('decompose: output is deterministic', () => {
  const sql = "SELECT City, AVG(students) FROM school WHERE name LIKE '%e%' OR id > 2 GROUP BY City ORDER BY 2 DESC";
  expect(JSON.stringify(sequence(sql))).toBe(JSON.stringify(sequence(sql)));
});

describe('decompose: executed sequences equal the SQL result', () => {
  const { db, cleanup } = createDatabase();
  const executor = createDirectExecutor();
  const sqlite = new Database(db.path, { readonly: true });
  afterAll(async () => {
    sqlite.close();
    await executor.close();
    cleanup();
  });

  test.each([
    "SELECT name FROM school WHERE City = 'Fresno' OR students > 400",
    'SELECT City, COUNT(*) FROM school GROUP BY City HAVING COUNT(*) > 1',
    'SELECT name FROM school ORDER BY City DESC, students LIMIT 3',
    'SELECT CAST(SUM(students) AS REAL) / COUNT(id) FROM school',
    "SELECT SUM(IIF(City = 'Fresno', students, 0)) * 100 / SUM(students) FROM school",
    'SELECT T1.name, T2.avg FROM school AS T1 JOIN score AS T2 ON T1.id = T2.school_id WHERE T2.avg > (SELECT AVG(avg) FROM score)',
    "SELECT name FROM school WHERE id IN (SELECT school_id FROM score WHERE subject = 'read') AND NOT students BETWEEN 100 AND 350",
    'SELECT name, MAX(students) FROM school',
    "SELECT DISTINCT City FROM school WHERE City IS NOT NULL AND substr(founded, 1, 4) > '1989'",
    'SELECT COUNT(t.City) FROM (SELECT City, COUNT(id) AS n FROM school GROUP BY City) AS t WHERE t.n > 1',
    'SELECT name, CASE WHEN students > 250 THEN 1.0 WHEN students > 100 THEN 0.5 ELSE 0 END FROM school',
    'SELECT students / 7, students * 1.0 / 7, 100 - students FROM school',
    "SELECT (SELECT students FROM school WHERE name = 'Cedar') - (SELECT students FROM school WHERE name = 'Elm') AS diff",
    'SELECT (SELECT name FROM school ORDER BY students DESC), (SELECT COUNT(*) FROM score) * 2',
    "SELECT name FROM school WHERE City = 'Fresno' UNION SELECT name FROM school WHERE students > 400",
    'SELECT City FROM school EXCEPT SELECT City FROM school WHERE students < 100',
    'SELECT name, City FROM school INTERSECT SELECT name, City FROM school WHERE students > 100',
    'SELECT name FROM school UNION ALL SELECT subject FROM score ORDER BY 1 DESC LIMIT 4',
    "SELECT City FROM school UNION SELECT subject FROM score EXCEPT SELECT 'math' FROM score ORDER BY 1 LIMIT 2 OFFSET 1",
    "SELECT name FROM school WHERE id IN (SELECT school_id FROM score WHERE subject = 'math' INTERSECT SELECT school_id FROM score WHERE subject = 'read')",
    "SELECT name, date(founded, '+1 month', 'start of month'), strftime('%Y-%m', founded, '-45 days') FROM school",
    "SELECT strftime('%Y', MAX(founded), '+1 year') FROM school",
    'SELECT name FROM school EXCEPT SELECT subject FROM score ORDER BY name DESC',
    'SELECT id, name FROM school UNION SELECT school_id, subject FROM score ORDER BY subject LIMIT 4',
    'SELECT COUNT(T1.name) FROM school AS T1 JOIN (SELECT school_id, COUNT(*) AS n FROM score GROUP BY school_id HAVING n > 1) AS T2 ON T1.id = T2.school_id',
    'SELECT COUNT(DISTINCT T1.City), SUM(T1.students) FROM school AS T1 INNER JOIN (SELECT school_id FROM score GROUP BY school_id ORDER BY SUM(takers) DESC LIMIT 2) AS T2 ON T1.id = T2.school_id',
    'SELECT T1.name FROM school AS T1 JOIN score AS T3 ON T1.id = T3.school_id JOIN (SELECT MAX(avg) AS top FROM score) AS T2 ON T3.avg = T2.top',
    "SELECT instr(name, 1), instr(name, City), instr('Fresno', City) FROM school",
    "SELECT name FROM school WHERE INSTR(name, 'e') > 2 OR instr(founded, '-0')",
    "SELECT SUBSTR(founded, INSTR(founded, '-') + 1), substr(name, 1, LENGTH(name) - 3) FROM school",
    "SELECT substr(name, 3, -2), substr(name, -1, -3), substr(name, 2, '2'), substr(name, 2, NULL) FROM school",
    "SELECT City FROM school GROUP BY substr(founded, 1, instr(founded, '-') - 1), City ORDER BY substr(City, instr(City, 'n'))",
    "SELECT substr(MAX(name), 2), INSTR(MIN(City), 's'), substr(MAX(founded), COUNT(*), -2) FROM school",
    'SELECT s.name FROM school AS s WHERE EXISTS (SELECT 1 FROM score AS t WHERE t.school_id = s.id AND t.avg > 500)',
    'SELECT T1.name, COUNT(T2.subject), SUM(T2.takers) FROM school AS T1 JOIN score AS T2 ON T1.id = T2.school_id WHERE T1.id = 1',
    "SELECT City, COUNT(id) FROM school WHERE City = 'Nowhere'",
    'SELECT name, students, RANK() OVER (ORDER BY students DESC), DENSE_RANK() OVER (PARTITION BY City ORDER BY students) FROM school',
    'SELECT subject, SUM(takers), RANK() OVER (ORDER BY SUM(takers)) FROM score GROUP BY subject',
    // Every case the window and decorrelation passes accept, and the derived joins (golden/).
    ...acceptedGoldenSql(
      ['windows.txt', 'decorrelation.txt', 'from.txt'],
      /join_data|combine_data|operation_type=(row_number|ntile|lag|lead|running)/,
    ),
  ])('%s', async (sql) => {
    const parsed = parseQuery(sql, db);
    if (!parsed.ok) throw new Error(parsed.message);
    const seq = decompose(parsed.value, db, 'extended');
    if (!seq.ok) throw new Error(seq.message);
    const outputs: ToolOutput[] = await executeSequence(seq.value, db, executor, { timeoutMs: 5000, pool: 'extended' });
    const statement = sqlite.prepare(sql);
    const rows = statement.raw().all() as (number | string | null)[][];
    const gold = {
      columns: statement.columns().map((c) => c.name),
      rows,
      executedSql: sql,
      ...resultShape(sql),
    };
    expect(compareWithGold(outputs, gold)).toMatchObject({ ok: true });
  });
});

test('decompose: a bare column equal to a literal under NOCASE is not one value (it may be any case of it)', () => {
  const sql = "SELECT name, SUM(students) FROM school WHERE name = 'birch'";
  const nocase = {
    ...SCHEMA,
    tables: SCHEMA.tables.map((t) => ({
      ...t,
      columns: t.columns.map((c) => (c.name === 'name' ? { ...c, collation: 'NOCASE' } : c)),
    })),
  };
  const outcome = (db: typeof SCHEMA) => {
    const parsed = parseQuery(sql, db);
    if (!parsed.ok) throw new Error(parsed.message);
    const result = decompose(parsed.value, db, 'extended');
    return result.ok ? 'ok' : result.category;
  };
  expect(outcome(SCHEMA)).toBe('ok');
  expect(outcome(nocase)).toBe('unsupported:bare_column');
});
