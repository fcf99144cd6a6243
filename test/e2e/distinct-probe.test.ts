import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { goldStage } from '../../pipeline/stages/gold.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * SELECT DISTINCT ordered by a key it does not select: SQLite orders a distinct row by one of
 * its rows' keys, which one unspecified. Here 'z' has the highest cost in its first row and the
 * lowest in another, 1,200 rows further on (on inflated data: the copies of every row before it):
 * whether LIMIT 1 keeps it is open, and the gold must say so whatever the scan order shows.
 */

let dir: string;
let source: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-distinct-probe-'));
  const fillers = Array.from({ length: 1200 }, (_, i) => `(${i + 2}, 'n${i % 300}', ${900 - (i % 300)})`);
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'cards',
    `CREATE TABLE card (id INTEGER PRIMARY KEY, name TEXT NOT NULL, cost INT NOT NULL);
     INSERT INTO card VALUES (1, 'z', 1000), ${fillers.join(', ')}, (1300, 'z', 0);`,
    [
      ['open', 'SELECT DISTINCT name FROM card ORDER BY cost DESC LIMIT 1'],
      ['settled', "SELECT DISTINCT name FROM card WHERE name <> 'z' ORDER BY cost DESC LIMIT 2"],
    ],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a DISTINCT row whose sort key varies past a short probe's reach: the gold is nondeterministic", async () => {
  const loaded = await loadSource(source);
  const config = parseConfig({ source, out: path.join(dir, 'out'), progress: 'none' });
  const executor = createDirectExecutor();
  try {
    const ctx = { config, db: loaded.databases[0], executor };
    const gold = (id: string) => goldStage.run({ instance: loaded.instances.find((i) => i.id === id)! }, ctx);
    expect(await gold('open')).toMatchObject({ ok: false, category: 'nondeterministic' });
    expect(await gold('settled')).toMatchObject({ ok: true });
  } finally {
    await executor.close();
  }
});
