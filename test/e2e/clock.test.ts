import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { writeJsonlSource } from '../support/jsonl-source.js';
import type { Manifest } from '../../pipeline/manifest.js';

/**
 * Questions about "today": the gold SQL, the SLOT/SEL calls and the REST endpoints all read
 * the run's reference time instead of SQLite's clock, so they become samples (not
 * `unsupported:current_time`), the same on every day, and another reference time gives
 * other answers.
 */

let dir: string;
let source: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-clock-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'club',
    `CREATE TABLE member (id INTEGER PRIMARY KEY, name TEXT NOT NULL, born TEXT NOT NULL, joined TEXT NOT NULL);
    INSERT INTO member VALUES (1, 'Ann', '1990-03-01', '2019-05-01'), (2, 'Bo', '2001-11-20', '2025-12-24'),
      (3, 'Cy', '1985-07-15', '2030-02-01'), (4, 'Di', '2010-01-31', '2026-06-01');`,
    [
      ['joined-before-today', "SELECT name FROM member WHERE date(joined) < date('now') ORDER BY name"],
      ['joined-from-today', 'SELECT COUNT(id) FROM member WHERE joined >= CURRENT_DATE'],
      ['age', "SELECT CAST((julianday('now') - julianday(born)) / 365 AS INTEGER) FROM member WHERE name = 'Ann'"],
      ['plain', "SELECT born FROM member WHERE name = 'now'"],
    ],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(name: string, referenceTime: string) {
  const out = path.join(dir, name);
  const result = await generate({
    config: parseConfig({ source, out, cacheDir: path.join(dir, 'cache'), progress: 'none', referenceTime }),
  });
  const samples = (formulation: string) =>
    readFileSync(path.join(out, formulation, 'club.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
  return { result, out, samples };
}

test('questions that read the clock are samples at the reference time in every formulation, recorded in the manifest', async () => {
  const { result, out, samples } = await run('first', '2026-01-01 00:00:00');
  for (const formulation of ['slot', 'sel', 'rest'] as const)
    expect(result.stats!.formulations[formulation]!.total).toMatchObject({ input: 4, accepted: 4 });
  const answers = samples('slot').map((line) => JSON.parse(line) as { sample_id: string; gold_answer: unknown });
  expect(JSON.stringify(answers)).toContain('Ann');
  const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
  expect(manifest.referenceTimes.filter((r) => r.formulation === 'slot').map((r) => [r.id, r.referenceTime])).toEqual(
    ['joined-before-today', 'joined-from-today', 'age'].map((id) => [id, '2026-01-01 00:00:00']),
  );
  expect(readFileSync(path.join(out, 'README.md'), 'utf8')).toContain("read the run's reference time instead");
});

test('the same reference time gives the same bytes; another gives other answers for the clock questions only', async () => {
  const first = await run('again-1', '2026-01-01 00:00:00');
  const second = await run('again-2', '2026-01-01 00:00:00');
  const later = await run('later', '2031-01-01 00:00:00');
  for (const formulation of ['slot', 'sel', 'rest']) {
    expect(second.samples(formulation)).toEqual(first.samples(formulation));
    const changed = later
      .samples(formulation)
      .filter((line, i) => line !== first.samples(formulation)[i])
      .map((line) => (JSON.parse(line) as { sample_id: string }).sample_id);
    expect(changed.sort()).toEqual(['age', 'joined-before-today', 'joined-from-today']);
  }
});
