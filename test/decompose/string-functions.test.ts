/**
 * SUBSTR and INSTR decomposed and executed against SQLite running the same SQL, over every
 * constant (start, length) in a range (the slice mapping of `substring`, and `substr` for a
 * negative length) and over bounds computed per row, on texts where an off-by-one, a sign
 * rule or a NULL mishandled changes the answer.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DatabaseInfo, SqlValue, ToolOutput } from '../../core/model.js';
import { decompose } from '../../generators/slot/decompose.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import { executeSequence } from '../../runtime/slot/index.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';

const WORDS: SqlValue[] = [
  '',
  'a',
  'ab',
  'abcdef',
  'a b c',
  'héllo wörld',
  '日本語のテキスト',
  null,
  'x@y.org',
  '@lead',
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nl2api-strings-'));
const file = path.join(dir, 'strings.sqlite');
const DB: DatabaseInfo = {
  dbId: 'strings',
  path: file,
  fingerprint: 'strings',
  tables: [
    {
      name: 'word',
      columns: [
        { name: 'id', type: 'INTEGER', description: 'id', valueDescription: '' },
        { name: 's', type: 'TEXT', description: 's', valueDescription: '' },
        { name: 'k', type: 'INTEGER', description: 'k', valueDescription: '' },
      ],
      primaryKey: ['id'],
      foreignKeys: [],
    },
  ],
};

const executor = createDirectExecutor();
let sqlite: Database.Database;
beforeAll(() => {
  const raw = new Database(file);
  raw.exec('CREATE TABLE word (id INTEGER PRIMARY KEY, s TEXT, k INTEGER)');
  const insert = raw.prepare('INSERT INTO word VALUES (?, ?, ?)');
  WORDS.forEach((s, i) => insert.run(i + 1, s, i % 2 === 0 ? i - 4 : null));
  raw.close();
  sqlite = new Database(file, { readonly: true });
});
afterAll(async () => {
  sqlite.close();
  await executor.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The values of the query's columns, row by row, through the SLOT tools. */
async function viaTools(sql: string): Promise<SqlValue[][]> {
  const parsed = parseQuery(sql, DB);
  if (!parsed.ok) throw new Error(parsed.message);
  const seq = decompose(parsed.value, DB, 'extended');
  if (!seq.ok) throw new Error(`${seq.category}: ${seq.message}`);
  const outputs: ToolOutput[] = await executeSequence(seq.value, DB, executor, { timeoutMs: 5000, pool: 'extended' });
  const lists = outputs.map((o) => (o.kind === 'list' ? o.values : o.kind === 'scalar' ? [o.value] : []));
  return lists[0].map((_, row) => lists.map((l) => l[row]));
}

function viaSqlite(sql: string): SqlValue[][] {
  return sqlite.prepare(sql).raw().all() as SqlValue[][];
}

const STARTS = Array.from({ length: 19 }, (_, i) => i - 9);

test.each(STARTS.map((start) => [start]))('SUBSTR(s, %i, length) for every length in -9..9 and none', async (start) => {
  const columns = [`substr(s, ${start})`, ...STARTS.map((length) => `substr(s, ${start}, ${length})`)];
  const sql = `SELECT ${columns.join(', ')} FROM word ORDER BY id`;
  expect(await viaTools(sql)).toEqual(viaSqlite(sql));
});

test.each([
  "SELECT substr(s, instr(s, '@') + 1), substr(s, 1, instr(s, '@') - 1) FROM word ORDER BY id",
  'SELECT substr(s, 1, length(s) - 3), substr(s, -length(s)), substr(s, 0, length(s)) FROM word ORDER BY id',
  'SELECT substr(s, k), substr(s, 2, k), substr(s, k, k), substring(s, -2, k) FROM word ORDER BY id',
  "SELECT instr(s, 'b'), instr(s, ''), instr(s, 'ö'), instr(s, '語'), instr(s, NULL), instr(s, k) FROM word ORDER BY id",
  "SELECT id FROM word WHERE instr(s, 'b') > 1 OR instr(s, '@') = 1 ORDER BY id",
  "SELECT id FROM word WHERE instr(s, 'a') ORDER BY id",
  "SELECT id FROM word WHERE NOT instr(s, 'a') ORDER BY id",
  "SELECT substr(MAX(s), COUNT(*) - 12, -2), instr(MIN(s), 'a'), substr(MIN(s), 0) FROM word",
])('%s', async (sql) => {
  expect(await viaTools(sql)).toEqual(viaSqlite(sql));
});
