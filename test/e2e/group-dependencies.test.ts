import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * A column selected beside GROUP BY without being grouped or aggregated is the group's value
 * only when the schema makes it functionally dependent on the group keys (a primary key, a
 * unique key reached by a join's equality, a literal); otherwise it is `bare_column`, even
 * when this database's rows happen to give the gold answer.
 */

let dir: string;
let source: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-fd-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'league',
    `CREATE TABLE team (id INTEGER PRIMARY KEY, api_id INTEGER UNIQUE, code TEXT UNIQUE, name TEXT NOT NULL);
    CREATE TABLE game (id INTEGER PRIMARY KEY, home INTEGER NOT NULL, season TEXT NOT NULL, goals INTEGER NOT NULL);
    CREATE TABLE badge (id INTEGER PRIMARY KEY, team INTEGER NOT NULL, label TEXT NOT NULL);
    INSERT INTO team VALUES (1, 10, 'A', 'Ajax'), (2, 20, 'B', 'Benfica'), (3, 30, NULL, 'Celtic');
    INSERT INTO game VALUES (1, 10, '2020', 3), (2, 10, '2020', 1), (3, 20, '2020', 2), (4, 30, '2021', 5);
    INSERT INTO badge VALUES (1, 1, 'gold'), (2, 1, 'gold'), (3, 2, 'silver');`,
    [
      [
        'primary-key',
        'SELECT T.name, COUNT(G.id) FROM team AS T INNER JOIN game AS G ON G.home = T.api_id GROUP BY T.id',
      ],
      [
        'unique-by-join',
        'SELECT T.name FROM game AS G INNER JOIN team AS T ON G.home = T.api_id GROUP BY G.home ORDER BY SUM(G.goals) DESC LIMIT 1',
      ],
      ['constant', "SELECT season, home, COUNT(id) FROM game WHERE season = '2020' GROUP BY home"],
      // Each team's badges all say the same here, but nothing in the schema says they must.
      ['not-determined', 'SELECT B.label, COUNT(B.id) FROM badge AS B GROUP BY B.team'],
      ['nullable-unique', 'SELECT name FROM team GROUP BY code'],
    ],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a non-grouped column is grouped only when the group keys determine it', async () => {
  const out = path.join(dir, 'out');
  const result = await generate({ config: parseConfig({ source, out, formulations: ['slot'], progress: 'none' }) });
  expect(result.stats!.formulations.slot!.total).toMatchObject({
    input: 5,
    accepted: 3,
    rejectedBy: { 'slot.decompose:unsupported:bare_column': 2 },
  });
  const rejected = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);
  expect(rejected.sort()).toEqual(['not-determined', 'nullable-unique']);
});
