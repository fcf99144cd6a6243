/**
 * A recursive WITH table (ast.ts, DerivedFromItem `recursive`) is no query the SLOT tools
 * express: the decomposer refuses it as unsupported, wherever the table is read, and never
 * compiles its members as an ordinary UNION. Today it refuses it as the set query (or the
 * derived table joined) it is; the one refusal it is meant to give is
 * `unsupported:recursive_cte` (a check of `NormalizedQuery.recursive`).
 */
import { decompose } from '../../generators/slot/decompose.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import type { ToolPool } from '../../core/model.js';
import { SCHEMA } from './schema.js';

const TABLE =
  "WITH RECURSIVE n(k) AS (SELECT id FROM school WHERE name = 'Alder' UNION ALL SELECT s.id FROM school AS s JOIN n ON s.students > n.k)";

describe('decompose: a recursive WITH table is unsupported, wherever it is read', () => {
  test.each<[string, ToolPool]>([
    [`${TABLE} SELECT COUNT(*) FROM n`, 'extended'],
    [`${TABLE} SELECT k FROM n ORDER BY k`, 'extended'],
    [`${TABLE} SELECT name FROM school WHERE id IN (SELECT k FROM n)`, 'extended'],
    [`${TABLE} SELECT name FROM school WHERE id IN (SELECT k FROM n)`, 'paper'],
    [`${TABLE} SELECT T1.name FROM school AS T1 JOIN n ON n.k = T1.id`, 'extended'],
    [`${TABLE} SELECT name FROM school WHERE EXISTS (SELECT 1 FROM n WHERE n.k = school.id)`, 'extended'],
    [`${TABLE} SELECT name FROM school WHERE students > (SELECT MAX(k) FROM n)`, 'extended'],
  ])('%s (%s)', (sql, pool) => {
    const parsed = parseQuery(sql, SCHEMA);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(parsed.value.recursive).toEqual(['n']);
    const outcome = decompose(parsed.value, SCHEMA, pool);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.category).toBe('unsupported:recursive_cte');
  });
});
