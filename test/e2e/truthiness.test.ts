import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { writeJsonlSource } from '../support/jsonl-source.js';
import { sqliteTruth } from '../../generators/slot/where.js';

/**
 * Values in a boolean position, as SQLite reads them: a text literal is the number its
 * numeric prefix spells ('+-' is 0, false; '12abc' is 12, true), and so is a text value in
 * a column. The data is chosen so that reading them any other way gives another answer.
 */

let dir: string;
let source: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-truth-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'lab',
    `CREATE TABLE sample (id INTEGER PRIMARY KEY, name TEXT NOT NULL, rnp TEXT, flag);
    INSERT INTO sample VALUES (1, 'a', '-', 1), (2, 'b', '+', 0), (3, 'c', '-', '0'), (4, 'd', '++', 'abc'),
      (5, 'e', NULL, '12abc'), (6, 'f', '+-', NULL), (7, 'g', '-', 0.5), (8, 'h', '+', ' 2');`,
    [
      ['text-literal-or', "SELECT name FROM sample WHERE rnp != '-' OR '+-'"],
      ['numeric-literal-and', "SELECT COUNT(id) FROM sample WHERE '1e0' AND rnp = '-'"],
      ['text-column', 'SELECT name FROM sample WHERE flag'],
      ['negated-column', 'SELECT name FROM sample WHERE NOT flag'],
      ['never', "SELECT name FROM sample WHERE 'abc'"],
    ],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each([
  [null, null],
  [0, false],
  [0.5, true],
  ['+-', false],
  ['12abc', true],
  [' -3.5e1x', true],
  ['0.0', false],
  ['.', false],
  ['abc', false],
])("SQLite's truth of %p is %p", (value, truth) => {
  expect(sqliteTruth(value)).toBe(truth);
});

test('literals and text values in a boolean position give the gold answer; a WHERE no row can pass is refused', async () => {
  const out = path.join(dir, 'out');
  const result = await generate({
    config: parseConfig({ source, out, formulations: ['slot', 'sel'], progress: 'none' }),
  });
  for (const formulation of ['slot', 'sel'] as const) {
    expect(result.stats!.formulations[formulation]!.total).toMatchObject({
      input: 5,
      accepted: 4,
      rejectedBy: { 'slot.decompose:unsupported:constant_predicate': 1 },
    });
  }
  const answers = Object.fromEntries(
    readFileSync(path.join(out, 'slot', 'lab.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { sample_id: string; gold_answer: unknown })
      .map((sample) => [sample.sample_id, JSON.stringify(sample.gold_answer)]),
  );
  // SQLite's own answers, which the calls matched.
  expect(answers['text-literal-or']).toContain('"b"');
  expect(answers['text-literal-or']).not.toContain('"a"');
  expect(answers['text-column']).toMatch(/"a".*"e".*"g".*"h"/);
  expect(answers['text-column']).not.toMatch(/"c"|"d"/);
});
