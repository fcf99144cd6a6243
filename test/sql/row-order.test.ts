import Database from 'better-sqlite3';
import path from 'node:path';
import { parseQuery } from '../../generators/sql/normalize.js';
import { rowOrderDependence } from '../../generators/sql/row-order.js';
import { readDatabaseInfo } from '../../pipeline/sources/schema.js';
import type { DatabaseInfo } from '../../core/model.js';
import { createDb, removeTempDirs, tempDir } from './fixtures.js';

// Groups of several rows with different values, so that "some row of the group" and "the
// first row" come out differently when the scans are reversed.
const SCHEMA = `
  CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT);
  CREATE TABLE player (id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES team(id), name TEXT, goals INTEGER, rating REAL);
  CREATE TABLE alias (id INTEGER PRIMARY KEY, nick TEXT COLLATE NOCASE);
  INSERT INTO team VALUES (1, 'Reds'), (2, 'Blues');
  INSERT INTO player VALUES (1, 1, 'Ann', 3, 7.5), (2, 1, 'Bob', 5, 6.25), (3, 2, 'Cid', 5, 8.0), (4, 2, 'Dee', 1, 5.5), (5, 1, 'Eve', 2, 7.5);
  INSERT INTO alias VALUES (1, 'Ace'), (2, 'ACE'), (3, 'ace');
`;

let file: string;
let db: DatabaseInfo;
let sqlite: Database.Database;

beforeAll(async () => {
  file = createDb(path.join(tempDir(), 'league.sqlite'), SCHEMA);
  db = await readDatabaseInfo('league', file, { descriptions: new Map(), naturalNames: new Map() });
  sqlite = new Database(file, { readonly: true });
});
afterAll(() => {
  sqlite.close();
  removeTempDirs();
});

function ignoresOrder(sql: string): boolean {
  expect(parseQuery(sql, db).ok).toBe(true); // proven false for what it is, not for failing to parse
  return rowOrderDependence(sql, db).compared === 'none';
}

/** The answer as a multiset, with scans read forwards or backwards. */
function answer(sql: string, reversed: boolean): string[] {
  sqlite.pragma(`reverse_unordered_selects = ${reversed ? 1 : 0}`);
  return (sqlite.prepare(sql).raw(true).all() as unknown[][]).map((row) => JSON.stringify(row)).sort();
}

describe('answerIgnoresRowOrder: when the reordered run cannot tell anything', () => {
  test.each([
    'SELECT name FROM player WHERE goals > 2',
    'SELECT T2.name, COUNT(*) FROM player AS T1 JOIN team AS T2 ON T1.team_id = T2.id GROUP BY T2.name',
    'SELECT DISTINCT team_id FROM player',
    'SELECT team_id, SUM(goals), AVG(rating), MAX(goals) FROM player GROUP BY team_id HAVING COUNT(*) > 1',
    "SELECT name FROM player WHERE team_id IN (SELECT id FROM team WHERE name = 'Reds') UNION SELECT name FROM team",
    'SELECT name FROM team AS t WHERE EXISTS (SELECT 1 FROM player AS p WHERE p.team_id = t.id AND p.goals = 5)',
    'SELECT COUNT(*) FROM (SELECT team_id FROM player GROUP BY team_id)',
    "SELECT goals * 2 + 1 FROM player WHERE name LIKE '%e%' AND rating BETWEEN 6 AND 8",
    // The one row of an aggregate; a rank that tied rows share.
    'SELECT name FROM player WHERE goals = (SELECT MAX(goals) FROM player)',
    'SELECT name, RANK() OVER (ORDER BY goals DESC), DENSE_RANK() OVER (PARTITION BY team_id ORDER BY goals) FROM player',
  ])('proven: %s — and reversed scans give the same answer', (sql) => {
    expect(ignoresOrder(sql)).toBe(true);
    expect(answer(sql, true)).toEqual(answer(sql, false));
  });

  test.each([
    ['LIMIT without a total order', 'SELECT name FROM player LIMIT 2'],
    ['a scalar subquery (its first row)', 'SELECT (SELECT name FROM player WHERE goals = 5)'],
    ['GROUP_CONCAT', 'SELECT GROUP_CONCAT(name) FROM player'],
    ['a NOCASE column (which spelling stands for the group)', 'SELECT nick FROM alias UNION SELECT nick FROM alias'],
  ])('not proven, and order does change the answer: %s', (_, sql) => {
    expect(ignoresOrder(sql)).toBe(false);
    expect(answer(sql, true)).not.toEqual(answer(sql, false));
  });

  test.each([
    ['ORDER BY (ties come out in scan order)', 'SELECT name FROM player ORDER BY goals'],
    ['a window function', 'SELECT name, ROW_NUMBER() OVER (ORDER BY goals) FROM player'],
    ['OFFSET in a subquery', 'SELECT COUNT(*) FROM player WHERE id IN (SELECT id FROM player LIMIT 2 OFFSET 1)'],
    [
      'a correlated subquery reading a grouped query’s bare column',
      'SELECT team_id, EXISTS (SELECT 1 FROM team WHERE team.id = player.goals) FROM player GROUP BY team_id',
    ],
    // Which row a bare column comes from is SQLite's choice: no promise, whatever this plan does.
    ['a bare column in an aggregate', 'SELECT team_id, name FROM player GROUP BY team_id'],
    ['a bare column beside MAX, tied', 'SELECT name, MAX(goals) FROM player'],
    ['a NOCASE column under DISTINCT', 'SELECT DISTINCT nick FROM alias'],
  ])('not proven: %s', (_, sql) => {
    expect(ignoresOrder(sql)).toBe(false);
  });
});

describe('rowOrderDependence: where the order rows are read in can reach the answer', () => {
  test.each([
    ['SELECT name FROM player WHERE goals > 2', 'none', 'none'],
    ['SELECT name FROM player ORDER BY goals DESC LIMIT 2', 'ordering', 'ordering'],
    ['SELECT name FROM player UNION SELECT name FROM team ORDER BY 1 LIMIT 3 OFFSET 1', 'ordering', 'ordering'],
    ['SELECT team_id, name FROM player GROUP BY team_id ORDER BY team_id', 'anywhere', 'anywhere'],
    ['SELECT name FROM player WHERE id IN (SELECT id FROM player LIMIT 2) ORDER BY name', 'anywhere', 'anywhere'],
    ['SELECT name FROM nowhere ORDER BY', 'anywhere', 'anywhere'],
    // A float sum rounds by the order of addition: equal within the comparison's tolerance, not to the bit.
    ['SELECT team_id, SUM(rating), AVG(goals) FROM player GROUP BY team_id', 'none', 'anywhere'],
    ['SELECT SUM(CASE WHEN goals > 2 THEN 1 ELSE 0 END), TOTAL(2 * 3), COUNT(*) FROM player', 'none', 'none'],
    ['SELECT name FROM player WHERE rating > (SELECT AVG(rating) FROM player) ORDER BY name', 'ordering', 'anywhere'],
  ])('%s: %s, exactly %s', (sql, compared, exact) => {
    expect(rowOrderDependence(sql, db)).toEqual({ compared, exact });
  });
});
