import type { DatabaseInfo } from '../../core/model.js';
import type { Expr, NormalizedQuery } from '../sql/ast.js';
import { parseQuery } from '../sql/normalize.js';
import type { Outcome } from '../../core/outcome.js';
import { sqlString } from '../../runtime/sql/lexer.js';
import { replacePlaceholders } from '../../runtime/rest/placeholders.js';

/**
 * An endpoint's SQL as a normalized query: the parser knows no `:name` placeholders, so
 * each is handed to it as a text literal starting with a mark no real literal starts with,
 * and read back off the tree by `placeholderIn`.
 */

const MARK = '\u0001nl2api-param:';

export function parseEndpointSql(sql: string, db: DatabaseInfo): Outcome<NormalizedQuery> {
  return parseQuery(
    replacePlaceholders(sql, (name) => sqlString(MARK + name)),
    db,
  );
}

/** The placeholder name an expression of such a tree stands for, else null. */
export function placeholderIn(expr: Expr): string | null {
  return expr.kind === 'literal' && typeof expr.value === 'string' && expr.value.startsWith(MARK)
    ? expr.value.slice(MARK.length)
    : null;
}
