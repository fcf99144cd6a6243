import { children, type ColumnExpr, type ExistsExpr, type Expr, type InExpr, type SelectQuery } from '../sql/ast.js';
import { collectAggregates } from './expressions.js';
import { conjuncts as splitAnd } from './from.js';

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
  const conjuncts = splitAnd(q.where);
  const links = conjuncts.flatMap((c, i) => {
    const link = correlation(c);
    return link ? [{ ...link, index: i }] : [];
  });
  if (links.length !== 1) return null;
  const [{ outer, inner, index }] = links;
  const rest = conjuncts.filter((_, i) => i !== index);
  const joinConditions = q.from.joins.map((j) => j.on);
  if (q.from.base.kind !== 'table' || q.from.joins.some((j) => j.item.kind !== 'table')) return null;
  if ([...rest, ...joinConditions].some((c) => c !== null && refersOutside(c))) return null;
  const subquery: SelectQuery = {
    ...q,
    distinct: false,
    columns: [{ expr: inner, alias: null, name: inner.column }],
    where: joinAnd(rest),
    orderBy: [],
    correlated: false,
  };
  return { kind: 'in', expr: { ...outer, depth: 0 }, not: false, list: null, subquery };
}

/** `outer.c = inner.d` (either way round): an enclosing query's column equated with the inner query's own. */
function correlation(e: Expr): { outer: ColumnExpr; inner: ColumnExpr } | null {
  if (e.kind !== 'binary' || e.op !== '=' || e.left.kind !== 'column' || e.right.kind !== 'column') return null;
  const [a, b] = [e.left, e.right];
  if (a.depth === 1 && b.depth === 0) return { outer: a, inner: b };
  if (b.depth === 1 && a.depth === 0) return { outer: b, inner: a };
  return null;
}

/** A column of an enclosing query, here or in a nested query (conservatively: any correlated one). */
function refersOutside(e: Expr): boolean {
  if (e.kind === 'column') return e.depth > 0;
  if ((e.kind === 'subquery' || e.kind === 'exists') && e.query.correlated) return true;
  if (e.kind === 'in' && e.subquery?.correlated) return true;
  return children(e).some(refersOutside);
}

function joinAnd(parts: Expr[]): Expr | null {
  return parts.reduce<Expr | null>((acc, p) => (acc ? { kind: 'binary', op: 'AND', left: acc, right: p } : p), null);
}
