import type { DatabaseInfo, Verdict } from '../../core/model.js';
import { parseQuery } from '../sql/normalize.js';
import { isWord, tokenize } from '../../runtime/sql/lexer.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { fromItems } from './columns.js';
import { withSampleValues } from './format-check.js';

/**
 * A proposal stays within its question (issue 14): an endpoint is its question's SQL with
 * the values a user would vary made parameters, so it has no reason to recurse where the
 * question's SQL does not, nor to read many more tables. A model proposing a five-way self
 * cross join or an endless recursive WITH is refused here, before anything runs: a runaway
 * trial costs its whole time budget and a SQL process killed and restarted, refusing it costs
 * nothing (the proposal goes back as feedback, then to the template, like any other failure).
 */

/** Table references a proposal may read beyond its question's SQL (a lookup table, a subquery's own). */
export const EXTRA_TABLES = 2;

export function checkScope(
  proposal: Pick<EndpointSpec, 'sql' | 'parameters'>,
  questionSql: string,
  db: DatabaseInfo,
): Verdict {
  const proposed = shapeOf(withSampleValues(proposal), db);
  const question = shapeOf(questionSql, db);
  if (proposed.recursive && !question.recursive)
    return fail('a recursive WITH, where the question is answered without recursion');
  if (proposed.tables !== null && question.tables !== null && proposed.tables > question.tables + EXTRA_TABLES)
    return fail(
      `${proposed.tables} table references, where the question's SQL reads ${question.tables} (at most ${question.tables + EXTRA_TABLES})`,
    );
  return { ok: true, category: 'format:ok', message: 'within the question' };
}

interface SqlShape {
  recursive: boolean;
  /** Table references in every FROM and JOIN, nested queries included; null when the SQL does not parse. */
  tables: number | null;
}

function shapeOf(sql: string, db: DatabaseInfo): SqlShape {
  const parsed = parseQuery(sql, db);
  // SQLite makes a WITH table recursive when its body names it, keyword or not: the normalizer
  // says which are; SQL it does not read recurses if it says RECURSIVE or is refused as recursive.
  const recursive = parsed.ok
    ? parsed.value.recursive !== undefined
    : tokenize(sql).some((token) => isWord(token, 'RECURSIVE')) || /recursive WITH/i.test(parsed.message);
  const tables = parsed.ok ? fromItems(parsed.value.query).filter((item) => item.kind === 'table').length : null;
  return { recursive, tables };
}

const fail = (what: string): Verdict => ({
  ok: false,
  category: 'format:beyond_question',
  message: `the endpoint's SQL has ${what}: write the question's own query, its values as parameters`,
});
