import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import type { Rejection } from '../../core/model.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

/**
 * BIRD's mini-dev MySQL file quotes names in backticks. Statements the sqlite grammar
 * refuses (a window function, `Count` as a column name, EXCEPT after GROUP BY) fall back to
 * the mysql grammar, which hands qualifiers over as `{ type: 'backticks_quote_string' }`
 * nodes, not strings: parse and rest.synthesize ended in `internal_error: TypeError:
 * b.toLowerCase is not a function`. They must end verified or in a categorized rejection.
 */

const QUESTIONS = [
  // Window function: only the mysql grammar reads it; SLOT has no tool for it, REST does.
  'SELECT `T1`.`name`, RANK() OVER (ORDER BY `T1`.`price` DESC) AS `rank` FROM item AS `T1` WHERE `T1`.`price` > 2',
  // `Count` as a column name.
  'SELECT COUNT(`T1`.`item_id`) FROM item AS `T1` WHERE `T1`.`Count` BETWEEN 1 AND 7',
  // EXCEPT after GROUP BY ... HAVING.
  'SELECT `T1`.`name` FROM item AS `T1` INNER JOIN sale AS `T2` ON `T1`.`item_id` = `T2`.`item_id` GROUP BY `T1`.`item_id` HAVING COUNT(`T2`.`sale_id`) > 1 ' +
    'EXCEPT SELECT `T1`.`name` FROM item AS `T1` WHERE `T1`.`price` > 4',
  // A backtick-qualified star.
  'SELECT `T1`.* FROM item AS `T1` ORDER BY `T1`.`Count` DESC LIMIT 1',
];

afterAll(removeTempDirs);

test('backtick-quoted MySQL-style SQL in a BIRD mini-dev folder: no internal error in any stage', async () => {
  const root = tempDir();
  createDb(
    path.join(root, 'dev_databases', 'shop', 'shop.sqlite'),
    `
    CREATE TABLE item (item_id INTEGER PRIMARY KEY, name TEXT, price REAL, Count INTEGER);
    CREATE TABLE sale (sale_id INTEGER PRIMARY KEY, item_id INTEGER REFERENCES item);
    INSERT INTO item VALUES (1, 'pen', 1.5, 3), (2, 'ink', 4.5, 9), (3, 'pad', 3.0, 5);
    INSERT INTO sale VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3);
  `,
  );
  const records = QUESTIONS.map((SQL, i) => ({
    question_id: i,
    db_id: 'shop',
    question: `question ${i}?`,
    evidence: '',
    SQL,
    difficulty: 'simple',
  }));
  const questionFile = path.join(root, 'mini_dev_mysql.json');
  writeFileSync(questionFile, JSON.stringify(records));
  const out = path.join(root, 'out');

  await generate({
    config: parseConfig({ source: questionFile, out, progress: 'none', rest: { synthesizer: 'template' } }),
  });

  const rejections = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rejection);
  expect(rejections.filter((r) => r.category === 'internal_error')).toEqual([]);
  // Every statement parses now: what SLOT cannot express is a decomposer verdict, not a parse failure.
  expect(rejections.filter((r) => r.stage === 'parse')).toEqual([]);
  expect(rejections.filter((r) => r.formulation === 'rest')).toEqual([]);
  const slot = readFileSync(path.join(out, 'slot', 'shop.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  expect(slot.length).toBeGreaterThanOrEqual(2);
});
