import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { DatabaseInfo } from '../../core/model.js';
import { checkScope } from '../../generators/rest/scope.js';
import { removeTempDirs } from '../sql/fixtures.js';
import { schoolsDb } from './fixtures.js';

/** A proposal stays within its question: refused before it runs when it recurses or reads far more tables. */

let db: DatabaseInfo;
beforeAll(() => {
  db = schoolsDb();
});
afterAll(removeTempDirs);

/** A proposal's SQL, its placeholders declared as text parameters. */
function proposal(sql: string) {
  const names = [...sql.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
  return {
    sql,
    parameters: names.map((name) => ({ name, type: 'string' as const, description: name, required: true })),
  };
}

const QUESTION =
  "SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = 'Alameda'";

test("the question's own query, its values as parameters, and a rewrite with a lookup or two more, pass", () => {
  expect(checkScope(proposal(QUESTION.replace("'Alameda'", ':county_name')), QUESTION, db).ok).toBe(true);
  expect(
    checkScope(
      proposal(
        'SELECT name FROM school WHERE county_id IN (SELECT id FROM county WHERE county_name = :c) AND id IN (SELECT id FROM school)',
      ),
      QUESTION,
      db,
    ).ok,
  ).toBe(true);
});

test('a self cross join far past the tables the question reads is refused, saying why', () => {
  const verdict = checkScope(
    proposal('SELECT COUNT(*) FROM school a, school b, school c, school d, school e'),
    QUESTION,
    db,
  );
  expect(verdict).toMatchObject({ ok: false, category: 'format:beyond_question' });
  expect(verdict.message).toMatch(/5 table references, where the question's SQL reads 2 \(at most 4\)/);
});

test('a recursive WITH is refused unless the question recurses too, with or without the keyword', () => {
  const endless = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c';
  expect(checkScope(proposal(endless), QUESTION, db)).toMatchObject({ ok: false, category: 'format:beyond_question' });
  const implicit = 'WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c';
  expect(checkScope(proposal(implicit), QUESTION, db).ok).toBe(false);
  expect(
    checkScope(proposal(endless), endless.replace('SELECT x + 1 FROM c', 'SELECT x + 1 FROM c WHERE x < 5'), db).ok,
  ).toBe(true);
});

test('SQL our parser does not read is not counted (it is the trial run that bounds it)', () => {
  expect(
    checkScope(
      proposal('SELECT name FROM school WINDOW w AS (ORDER BY id) /* our grammar may not read this */'),
      QUESTION,
      db,
    ).ok,
  ).toBe(true);
});
