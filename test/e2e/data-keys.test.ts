import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import type { ResultSet } from '../../core/model.js';
import { generate } from '../../pipeline/generate.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { SqlTimeoutError, type SqlExecutor, type SqlRequest } from '../../runtime/sql/executor.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * Keys the data proves (generators/slot/dependencies.ts `dataKeys`, pipeline/data-keys.ts): a
 * column selected beside GROUP BY that no declared key determines is grouped when a column the
 * group keys determine is unique and non-NULL in the data, and only if it stays so on every
 * variant the sample is verified on; the sample's verification record says where it held.
 * Neither `team.code` nor `club.nick` is a declared key; `code` is unique in the data, `nick`
 * is not.
 */

let dir: string;
let source: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-data-keys-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'league',
    `CREATE TABLE team (team_id INTEGER PRIMARY KEY, code TEXT NOT NULL, city TEXT NOT NULL);
    CREATE TABLE player (player_id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES team(team_id), goals INTEGER);
    CREATE TABLE club (club_id INTEGER PRIMARY KEY, nick TEXT, town TEXT);
    INSERT INTO team VALUES (1, 'ROV', 'Leeds'), (2, 'UTD', 'York'), (3, 'ATH', 'Leeds'), (4, 'CTY', 'Hull');
    INSERT INTO player VALUES (1, 1, 3), (2, 1, 0), (3, 2, 5), (4, 3, 1), (5, 3, 2), (6, 3, 0), (7, 4, 4);
    INSERT INTO club VALUES (1, 'Owls', 'Leeds'), (2, 'Owls', 'Leeds'), (3, 'Rams', 'York');`,
    [
      ['unique', 'SELECT code, city, COUNT(*) FROM team AS t JOIN player AS p ON p.team_id = t.team_id GROUP BY code'],
      // Each nick's clubs share a town here, but 'Owls' repeats: nothing makes town the group's one value.
      ['duplicate', 'SELECT nick, town, COUNT(*) FROM club GROUP BY nick'],
    ],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The count statement of pipeline/data-keys.ts. */
const isKeyCount = (request: SqlRequest) =>
  request.sql.startsWith('SELECT COUNT(*), (SELECT COUNT(*) FROM (SELECT DISTINCT');

/** `inner`, except that key counts for which `where(request)` holds answer `answer(request)` instead. */
function forcing(
  inner: SqlExecutor,
  where: (request: SqlRequest) => boolean,
  answer: (request: SqlRequest, real: () => Promise<ResultSet>) => Promise<ResultSet>,
): SqlExecutor {
  return {
    run: (request) =>
      isKeyCount(request) && where(request) ? answer(request, () => inner.run(request)) : inner.run(request),
    buildVariantTable: (request) => inner.buildVariantTable(request),
    close: () => inner.close(),
  };
}

type Sample = { sample_id: string; verification: Record<string, unknown> };
type Rejection = { id: string; formulation: string; stage: string; category: string; message: string };

async function run(out: string, executor: SqlExecutor) {
  const config = parseConfig({ source, out, formulations: ['slot', 'sel'], progress: 'none' });
  await generate({ config, executor });
  const lines = (file: string) => readFileSync(path.join(out, file), 'utf8').split('\n').filter(Boolean);
  return {
    samples: (formulation: string) => lines(`${formulation}/league.jsonl`).map((line) => JSON.parse(line) as Sample),
    rejections: lines('rejections.jsonl').map((line) => JSON.parse(line) as Rejection),
  };
}

test('a column unique in the data is a key: accepted, its proof in the record; a repeated one is not', async () => {
  const executor = createDirectExecutor();
  const { samples, rejections } = await run(path.join(dir, 'sound'), executor);
  await executor.close();
  for (const formulation of ['slot', 'sel']) {
    const [sample] = samples(formulation);
    expect(sample.sample_id).toBe('unique');
    expect(sample.verification.dependencies).toEqual({
      ok: true,
      category: 'data_keys',
      message: 'team.code unique and never NULL on original, perturbed-1',
      keys: [{ table: 'team', columns: ['code'], holdsOn: ['original', 'perturbed-1'] }],
    });
    expect(sample.verification).toMatchObject({ differential: { ok: true } });
  }
  expect(rejections.map((r) => [r.id, r.formulation, r.stage, r.category])).toEqual([
    ['duplicate', 'slot', 'slot.decompose', 'unsupported:bare_column'],
    ['duplicate', 'sel', 'slot.decompose', 'unsupported:bare_column'],
  ]);
  expect(rejections[0].message).toMatch(/\(no key in the data: club\.nick\)$/);
}, 60_000);

test('a variant on which the key repeats a value rejects the sample there', async () => {
  const inner = createDirectExecutor();
  // On the perturbed variant (a view with overlays) the table seems to hold a duplicate.
  const executor = forcing(
    inner,
    (request) => (request.view?.overlays.length ?? 0) > 0,
    async (_request, real) => {
      const { columns, rows } = await real();
      return { columns, rows: [[rows[0][0], Number(rows[0][1]) - 1]] };
    },
  );
  const { samples, rejections } = await run(path.join(dir, 'broken'), executor);
  await inner.close();
  expect(samples('slot')).toEqual([]);
  const unique = rejections.filter((r) => r.id === 'unique');
  expect(unique.map((r) => [r.formulation, r.stage, r.category])).toEqual([
    ['slot', 'verify', 'dependencies:perturbed-1'],
    ['sel', 'verify', 'dependencies:perturbed-1'],
  ]);
  expect(unique[0].message).toBe('team.code is no key on perturbed-1: 4 rows, 3 distinct non-NULL values');
}, 60_000);

test('a count that fails is no verdict: nothing is cached, the next run proves the key', async () => {
  const out = path.join(dir, 'timeout');
  const inner = createDirectExecutor();
  const slow = forcing(
    inner,
    (request) => !request.view,
    () => Promise.reject(new SqlTimeoutError('statement timed out')),
  );
  const first = await run(out, slow);
  expect(first.rejections.filter((r) => r.id === 'unique').map((r) => r.category)).toEqual([
    'internal_error',
    'internal_error',
  ]);
  const second = await run(out, inner);
  await inner.close();
  expect(second.samples('slot').map((s) => s.sample_id)).toEqual(['unique']);
}, 60_000);

test('literal equalities the data shows pick one row are a selection key: accepted with its values in the record', async () => {
  const selection = writeJsonlSource(
    path.join(dir, 'selection-source'),
    'league',
    `CREATE TABLE team (team_id INTEGER PRIMARY KEY, code TEXT NOT NULL, city TEXT NOT NULL);
    CREATE TABLE player (player_id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES team(team_id), goals INTEGER);
    INSERT INTO team VALUES (1, 'ROV', 'Leeds'), (2, 'UTD', 'York'), (3, 'ATH', 'Leeds'), (4, 'CTY', 'Hull');
    INSERT INTO player VALUES (1, 1, 3), (2, 1, 0), (3, 2, 5), (4, 3, 1), (5, 3, 2), (6, 3, 0), (7, 4, 4);`,
    [
      // One team is in York: its code is the one value beside the sum.
      [
        'york',
        "SELECT t.code, SUM(p.goals) FROM team AS t JOIN player AS p ON p.team_id = t.team_id WHERE t.city = 'York'",
      ],
      // Two are in Leeds: the code would be whichever row SQLite reads.
      [
        'leeds',
        "SELECT t.code, SUM(p.goals) FROM team AS t JOIN player AS p ON p.team_id = t.team_id WHERE t.city = 'Leeds'",
      ],
    ],
  );
  const out = path.join(dir, 'selection');
  const executor = createDirectExecutor();
  await generate({
    config: parseConfig({ source: selection, out, formulations: ['slot'], progress: 'none' }),
    executor,
  });
  await executor.close();
  const read = (file: string) => readFileSync(path.join(out, file), 'utf8').split('\n').filter(Boolean);
  const [york, ...others] = read('slot/league.jsonl').map((line) => JSON.parse(line) as Sample);
  expect(others).toEqual([]);
  expect(york.sample_id).toBe('york');
  expect(york.verification.dependencies).toMatchObject({
    ok: true,
    message: "team.(city) = ('York') held by at most one row on original, perturbed-1",
    keys: [{ table: 'team', columns: ['city'], values: ['York'], holdsOn: ['original', 'perturbed-1'] }],
  });
  const rejected = read('rejections.jsonl').map((line) => JSON.parse(line) as Rejection);
  // The reordered variant usually shows SQLite's pick (gold:nondeterministic); else the decomposer refuses it.
  expect(rejected.map((r) => r.id)).toEqual(['leeds']);
  expect(rejected[0].category).toMatch(/^(nondeterministic|unsupported:bare_column)$/);
}, 60_000);
