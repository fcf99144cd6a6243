import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  buildInfoOf,
  clonedCorpus,
  cloneQuestions,
  inflatedCorpus,
  strideFor,
  type BirdQuestion,
  type TablesEntry,
} from '../../bench/scale-corpus.js';

/**
 * The scale benchmark's corpora (bench/scale-corpus.ts) on a tiny BIRD folder: clones are the
 * same data in other bytes under new ids, with every question per clone; an inflated database
 * holds `factor` disjoint copies of every table's rows, each joined only to itself, through
 * declared foreign keys and through those only the tables file lists.
 */

let dir: string;
let bird: string;
let cache: string;
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const sqlite = (root: string, id: string) => path.join(root, 'dev_databases', id, `${id}.sqlite`);

// `owner.team_ref` references team(id) only in the tables file, and holds the key as TEXT
// ('1'): it joins the INTEGER key, so it must be renumbered the same way.
const SCHEMA = `
  CREATE TABLE team (id INTEGER PRIMARY KEY, code TEXT UNIQUE, name TEXT);
  CREATE TABLE player (pid TEXT PRIMARY KEY, team_id INTEGER REFERENCES team(id), team_code TEXT REFERENCES team(code), name TEXT);
  CREATE TABLE owner (name TEXT, team_ref TEXT);
  CREATE INDEX player_name ON player(name);
  INSERT INTO team VALUES (1, 'AA', 'Ants'), (2, 'BB', 'Bees'), (-3, 'CC', 'Cats');
  INSERT INTO player VALUES ('p1', 1, 'AA', 'Ann'), ('p2', 1, 'BB', 'Bob'), ('p3', 2, NULL, 'Cy'), ('p4', NULL, 'CC', 'Di'), ('p5', -3, 'CC', 'Ed'), ('p6', 9, 'ZZ', 'Orphan');
  INSERT INTO owner VALUES ('Olga', '1'), ('Otto', '2'), ('Ona', NULL);
`;

const TABLES: TablesEntry[] = [
  {
    db_id: 'league',
    table_names_original: ['team', 'player', 'owner'],
    column_names_original: [
      [-1, '*'],
      [0, 'id'],
      [0, 'code'],
      [0, 'name'],
      [1, 'pid'],
      [1, 'team_id'],
      [1, 'team_code'],
      [1, 'name'],
      [2, 'name'],
      [2, 'team_ref'],
    ],
    foreign_keys: [[9, 1]],
  },
  { db_id: 'solo', table_names_original: ['t'], column_names_original: [[0, 'x']], foreign_keys: [] },
];

const QUESTIONS: BirdQuestion[] = [
  { question_id: 0, db_id: 'league', question: 'How many players?', SQL: 'SELECT count(*) FROM player' },
  { question_id: 1, db_id: 'solo', question: 'Sum of x?', SQL: 'SELECT sum(x) FROM t' },
  { question_id: 2, db_id: 'league', question: 'Teams?', SQL: 'SELECT name FROM team' },
];

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-scale-corpus-'));
  bird = path.join(dir, 'bird');
  cache = path.join(dir, 'cache');
  for (const [id, schema] of [
    ['league', SCHEMA],
    ['solo', 'CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);'],
  ]) {
    mkdirSync(path.join(bird, 'dev_databases', id, 'database_description'), { recursive: true });
    writeFileSync(path.join(bird, 'dev_databases', id, 'database_description', 't.csv'), 'original_column_name\nx\n');
    const db = new Database(sqlite(bird, id));
    db.pragma('foreign_keys = OFF'); // p6 is an orphan on purpose
    db.exec(schema);
    db.close();
  }
  writeFileSync(path.join(bird, 'dev.json'), JSON.stringify(QUESTIONS));
  writeFileSync(path.join(bird, 'dev_tables.json'), JSON.stringify(TABLES));
  writeFileSync(path.join(bird, 'README.md'), 'A tiny BIRD-like source.\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rows(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).raw(true).all();
  } finally {
    db.close();
  }
}
const count = (file: string, sql: string) => rows(file, sql)[0] as [number];

describe('clonedCorpus', () => {
  test('every database under <id>_c<k>, the same data in other bytes, every question per clone', async () => {
    const corpus = await clonedCorpus(bird, cache, 3);
    const questions = JSON.parse(readFileSync(path.join(corpus, 'dev.json'), 'utf8')) as BirdQuestion[];
    expect(questions).toHaveLength(9);
    expect(questions.map((q) => q.db_id)).toEqual([
      'league_c0',
      'solo_c0',
      'league_c0',
      'league_c1',
      'solo_c1',
      'league_c1',
      'league_c2',
      'solo_c2',
      'league_c2',
    ]);
    expect(new Set(questions.map((q) => q.question_id)).size).toBe(9);
    expect(questions.slice(0, 3).map((q) => q.question_id)).toEqual([0, 1, 2]);
    expect(questions[3]).toMatchObject({ question: QUESTIONS[0].question, SQL: QUESTIONS[0].SQL });

    const tables = JSON.parse(readFileSync(path.join(corpus, 'dev_tables.json'), 'utf8')) as TablesEntry[];
    expect(tables.map((t) => t.db_id).sort()).toEqual(
      ['league_c0', 'league_c1', 'league_c2', 'solo_c0', 'solo_c1', 'solo_c2'].sort(),
    );
    expect(readFileSync(path.join(corpus, 'README.md'), 'utf8')).toContain('tiny');

    const hashes = new Set<string>();
    for (let k = 0; k < 3; k++) {
      const file = sqlite(corpus, `league_c${k}`);
      expect(count(file, 'PRAGMA user_version')[0]).toBe(k + 1);
      expect(rows(file, 'SELECT * FROM player ORDER BY pid')).toEqual(
        rows(sqlite(bird, 'league'), 'SELECT * FROM player ORDER BY pid'),
      );
      expect(
        readFileSync(path.join(corpus, 'dev_databases', `league_c${k}`, 'database_description', 't.csv'), 'utf8'),
      ).toContain('original_column_name');
      hashes.add(sha(file));
    }
    // The pipeline caches by content hash: clones must not share one.
    expect(hashes.size).toBe(3);
    expect(hashes.has(sha(sqlite(bird, 'league')))).toBe(false);
    expect(buildInfoOf(corpus)).toMatchObject({ kind: 'clones', n: 3, databases: 6, questions: 9 });
  });

  test('a built corpus is reused, not rebuilt', async () => {
    const first = await clonedCorpus(bird, cache, 2);
    const mtime = statSync(sqlite(first, 'league_c1')).mtimeMs;
    expect(await clonedCorpus(bird, cache, 2)).toBe(first);
    expect(statSync(sqlite(first, 'league_c1')).mtimeMs).toBe(mtime);
  });
});

describe('inflatedCorpus', () => {
  const factor = 4;
  let original: string;
  let inflated: string;

  beforeAll(async () => {
    original = sqlite(bird, 'league');
    const corpus = await inflatedCorpus(bird, cache, factor);
    inflated = sqlite(corpus, 'league');
    expect(JSON.parse(readFileSync(path.join(corpus, 'dev.json'), 'utf8'))).toEqual(QUESTIONS);
  });

  test('every table holds factor times its rows, keys unique, the original rows untouched', () => {
    for (const table of ['team', 'player', 'owner']) {
      expect(count(inflated, `SELECT count(*) FROM ${table}`)[0]).toBe(
        factor * count(original, `SELECT count(*) FROM ${table}`)[0],
      );
    }
    expect(count(inflated, 'SELECT count(DISTINCT id) FROM team')[0]).toBe(3 * factor);
    expect(count(inflated, 'SELECT count(DISTINCT code) FROM team')[0]).toBe(3 * factor);
    expect(rows(inflated, 'SELECT * FROM team WHERE id IN (1, 2, -3) ORDER BY id')).toEqual(
      rows(original, 'SELECT * FROM team ORDER BY id'),
    );
    // Non-key columns as they are; keys renumbered: integers by the stride (the largest
    // integral key is player.team_id's 9: 100), text suffixed.
    expect(rows(inflated, "SELECT id, code, name FROM team WHERE name = 'Bees' ORDER BY id")).toEqual([
      [2, 'BB', 'Bees'],
      [102, 'BB#1', 'Bees'],
      [202, 'BB#2', 'Bees'],
      [302, 'BB#3', 'Bees'],
    ]);
    expect(count(inflated, "SELECT count(*) FROM player WHERE name = 'Di' AND team_id IS NULL")[0]).toBe(factor);
  });

  test('every foreign key, declared or only in the tables file, joins each copy to itself alone', () => {
    const joins = [
      'SELECT count(*) FROM player p JOIN team t ON p.team_id = t.id',
      'SELECT count(*) FROM player p JOIN team t ON p.team_code = t.code',
      'SELECT count(*) FROM owner o JOIN team t ON o.team_ref = t.id',
      // Each copy reaches its own parents: as many distinct parents reached as copies of them.
      'SELECT count(DISTINCT t.id) FROM player p JOIN team t ON p.team_id = t.id',
      'SELECT count(DISTINCT t.id) FROM player p JOIN team t ON p.team_code = t.code',
      'SELECT count(DISTINCT t.id) FROM owner o JOIN team t ON o.team_ref = t.id',
      // Both keys of a row point into the same copy (p1 and p5 name one team twice).
      'SELECT count(*) FROM player p JOIN team a ON p.team_id = a.id JOIN team b ON p.team_code = b.code WHERE a.id = b.id',
      // Orphans stay orphans (p6 references team 9, which does not exist).
      'SELECT count(*) FROM player p WHERE p.team_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM team t WHERE t.id = p.team_id)',
    ];
    for (const sql of joins) expect([sql, count(inflated, sql)[0]]).toEqual([sql, factor * count(original, sql)[0]]);
    expect(joins.map((sql) => count(original, sql)[0])).toEqual([4, 4, 2, 3, 3, 2, 2, 1]);
  });

  test('the schema and its indexes are kept, statistics added', () => {
    const schema = (file: string) =>
      rows(file, "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_stat%' ORDER BY name");
    expect(schema(inflated)).toEqual(schema(original));
    expect(count(inflated, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'")[0]).toBe(1);
  });
});

describe('helpers', () => {
  test('the stride is a power of ten above twice the largest key magnitude', () => {
    expect(strideFor(0)).toBe(10n);
    expect(strideFor(3)).toBe(10n);
    expect(strideFor(5)).toBe(100n);
    expect(strideFor(96755)).toBe(1_000_000n);
  });

  test('string question ids get the clone suffix', () => {
    expect(cloneQuestions([{ db_id: 'a', question_id: 'q' }, { db_id: 'a' }], 2)).toEqual([
      { db_id: 'a_c0', question_id: 'q_c0' },
      { db_id: 'a_c0' },
      { db_id: 'a_c1', question_id: 'q_c1' },
      { db_id: 'a_c1' },
    ]);
  });
});
