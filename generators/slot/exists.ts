import type { ExistsExpr, InExpr, SelectQuery } from '../sql/ast.js';
import { correlationOf } from './correlated.js';
import { collectAggregates } from './expressions.js';

/**
 * `EXISTS (SELECT … FROM … WHERE p AND outer.c = inner.d)` as the semi-join it is:
 * `outer.c IN (SELECT inner.d FROM … WHERE p)`. Exact where a filter reads it (a positive
 * EXISTS in WHERE): both are true exactly when some row of the inner query passes `p` with
 * `inner.d = outer.c`, under the same comparison rules (SQLite handles `x IN (SELECT y …)` as
 * `x = y`), and a NULL on either side matches nothing in both. NOT EXISTS is left alone: NOT
 * IN differs from it as soon as the inner column holds a NULL.
 *
 * Only the plain shape is rewritten: one equality ties the inner query to the enclosing
 * one, nothing else in it refers outside, and it has no grouping, aggregate or LIMIT (an
 * aggregate query without GROUP BY has a row even over no rows; a LIMIT 0 has none).
 */
export function existsAsIn(e: ExistsExpr): InExpr | null {
  const q = e.query;
  if (e.not || q.kind !== 'select' || !q.from) return null;
  if (q.groupBy.length > 0 || q.having || q.limit || q.offset) return null;
  if (q.columns.some((c) => collectAggregates(c.expr).length > 0)) return null;
  if (q.from.base.kind !== 'table' || q.from.joins.some((j) => j.item.kind !== 'table')) return null;
  const correlation = correlationOf(q);
  if (correlation === null || correlation.links.length !== 1) return null;
  const [{ outer, inner }] = correlation.links;
  if (outer.kind !== 'column' || inner.kind !== 'column') return null;
  const subquery: SelectQuery = {
    ...correlation.inner,
    distinct: false,
    columns: [{ expr: inner, alias: null, name: inner.column }],
    orderBy: [],
  };
  return { kind: 'in', expr: outer, not: false, list: null, subquery };
}
