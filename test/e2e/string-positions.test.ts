import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * INSTR and SUBSTR with bounds computed per row, through the whole pipeline: every question
 * must come out as a SLOT and a SEL sample whose calls give SQLite's answer. The rows are
 * chosen so that an off-by-one, a sign rule or a NULL mishandled gives another answer: an
 * '@' at position 1, none, two of them, an empty and a NULL e-mail, names shorter than the
 * 3 characters cut off, and multi-byte characters (SQLite counts characters in TEXT).
 */

const QUESTIONS = [
  ['where-position', "SELECT name FROM users WHERE INSTR(name, 'a') > 2"],
  ['domain', "SELECT id, SUBSTR(email, INSTR(email, '@') + 1) FROM users"],
  ['local-part', "SELECT name, SUBSTR(email, 1, INSTR(email, '@') - 1) FROM users ORDER BY id"],
  ['cut-suffix', 'SELECT id, SUBSTR(name, 1, LENGTH(name) - 3) FROM users'],
  [
    'from-the-end',
    'SELECT id, SUBSTR(name, -3), SUBSTR(name, -3, 2), SUBSTR(name, 3, -2), SUBSTR(name, 0, 2) FROM users',
  ],
  [
    'per-domain',
    "SELECT SUBSTR(email, INSTR(email, '@') + 1) AS domain, COUNT(*) FROM users GROUP BY domain ORDER BY COUNT(*) DESC, domain",
  ],
  ['order-by-position', "SELECT name FROM users ORDER BY INSTR(name, 'e') DESC, id"],
  ['over-aggregates', "SELECT SUBSTR(MAX(email), INSTR(MAX(email), '@')), INSTR(MIN(name), 'a') FROM users"],
  ['position-truth', "SELECT COUNT(*) FROM users WHERE INSTR(email, '@')"],
] as const;

let dir: string;
let source: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-strings-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'club',
    `CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
    INSERT INTO users VALUES
      (1, 'Ada', 'ada@math.org'),
      (2, 'Jürgen', 'jürgen@bücher.de'),
      (3, 'Bo', '@nohost'),
      (4, 'Clara', 'clara.at.home'),
      (5, 'Émile', NULL),
      (6, 'Dana', ''),
      (7, 'Renée', 'r@e@x.fr'),
      (8, 'Ian', 'ian@math.org');`,
    QUESTIONS,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('INSTR and SUBSTR with computed bounds give the gold answer as SLOT and SEL calls', async () => {
  const out = path.join(dir, 'out');
  const result = await generate({
    config: parseConfig({ source, out, formulations: ['slot', 'sel'], progress: 'none' }),
  });
  const rejections = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8');
  expect(rejections).toBe('');
  for (const formulation of ['slot', 'sel'] as const) {
    expect(result.stats!.formulations[formulation]!.total).toMatchObject({
      input: QUESTIONS.length,
      accepted: QUESTIONS.length,
    });
  }
  const samples = readFileSync(path.join(out, 'sel', 'club.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { sample_id: string; output: { name: string }[]; gold_answer: unknown });
  const byId = Object.fromEntries(samples.map((s) => [s.sample_id, s]));
  // SEL binds the new operations like any other.
  expect(byId.domain.output.map((c) => c.name)).toEqual(
    expect.arrayContaining(['transform_data_position', 'transform_data_substr']),
  );
  // SQLite's answers, which the calls matched: no '@' keeps the whole text, '@' first gives
  // an empty local part, NULL stays NULL, characters are counted, not bytes.
  expect(byId.domain.gold_answer).toEqual([
    [1, 'math.org'],
    [2, 'bücher.de'],
    [3, 'nohost'],
    [4, 'clara.at.home'],
    [5, null],
    [6, ''],
    [7, 'e@x.fr'],
    [8, 'math.org'],
  ]);
  expect(byId['local-part'].gold_answer).toEqual([
    ['Ada', 'ada'],
    ['Jürgen', 'jürgen'],
    ['Bo', ''],
    ['Clara', ''],
    ['Émile', null],
    ['Dana', ''],
    ['Renée', 'r'],
    ['Ian', 'ian'],
  ]);
});
