import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * Recursive WITH over self-referencing tables, end to end (issue 34's shop): REST verifies
 * both questions, on every variant (the perturbed ones keep the hierarchies acyclic, so the
 * recursion ends there too); SLOT and SEL refuse them as unsupported, not as unparseable.
 */

let dir: string;
let source: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-recursive-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'shop',
    `CREATE TABLE category (category_id INTEGER PRIMARY KEY, name TEXT NOT NULL, parent_id INTEGER REFERENCES category(category_id));
    CREATE TABLE employee (employee_id INTEGER PRIMARY KEY, name TEXT NOT NULL, manager_id INTEGER REFERENCES employee(employee_id), salary INTEGER NOT NULL);
    INSERT INTO category VALUES (1, 'Toys', NULL), (2, 'Books', NULL), (3, 'Board games', 1), (4, 'Puzzles', 3), (5, 'Garden', NULL), (6, 'Comics', 2);
    INSERT INTO employee VALUES (1, 'Ines', NULL, 5200), (2, 'Jon', 1, 3900), (3, 'Kim', 1, 4100), (4, 'Lea', 3, 3900),
      (5, 'Max', 1, 4600), (6, 'Nia', 5, 3300), (7, 'Oli', 5, 3300);`,
    [
      [
        'subcategories',
        "WITH RECURSIVE sub(id) AS (SELECT category_id FROM category WHERE name = 'Toys' UNION ALL SELECT c.category_id FROM category AS c JOIN sub ON c.parent_id = sub.id) SELECT name FROM category WHERE category_id IN (SELECT id FROM sub) AND name <> 'Toys'",
      ],
      [
        'team',
        'WITH RECURSIVE team(id) AS (SELECT employee_id FROM employee WHERE manager_id = 1 UNION ALL SELECT e.employee_id FROM employee AS e JOIN team ON e.manager_id = team.id) SELECT COUNT(*) FROM team',
      ],
    ],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Line {
  sample_id: string;
  gold_answer: unknown;
  output: { arguments: Record<string, unknown> }[];
  verification: { differential: { ok: boolean } };
}

test('REST verifies both recursive questions on every variant; SLOT and SEL refuse them as unsupported', async () => {
  const out = path.join(dir, 'out');
  const result = await generate({
    config: parseConfig({
      source,
      out,
      formulations: ['slot', 'sel', 'rest'],
      progress: 'none',
      // A recursion that never ends on a variant would cost this, then be gold_timeout.
      goldTimeoutMs: 10_000,
    }),
  });
  expect(result.stats!.formulations.rest!.total).toMatchObject({ input: 2, accepted: 2 });
  const samples = readFileSync(path.join(out, 'rest', 'shop.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
  const byId = new Map(samples.map((s) => [s.sample_id, s]));
  expect(byId.get('subcategories')?.gold_answer).toEqual([['Board games'], ['Puzzles']]);
  expect(byId.get('team')?.gold_answer).toEqual([[6]]);
  // Where each recursion starts is the call's argument.
  expect(Object.values(byId.get('subcategories')!.output[0].arguments)).toContain('Toys');
  expect(Object.values(byId.get('team')!.output[0].arguments)).toEqual([1]);
  for (const sample of samples) expect(sample.verification.differential.ok).toBe(true);
  const rejections = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; formulation: string; stage: string; category: string });
  expect(rejections.filter((r) => r.formulation === 'rest')).toEqual([]);
  for (const formulation of ['slot', 'sel'])
    for (const id of ['subcategories', 'team'])
      expect(rejections.find((r) => r.id === id && r.formulation === formulation)).toMatchObject({
        stage: 'slot.decompose',
        category: 'unsupported:recursive_cte',
      });
});
