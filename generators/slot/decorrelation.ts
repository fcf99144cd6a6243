import { children, type ExistsExpr, type Expr, type InExpr, type SelectQuery, type SubqueryExpr } from '../sql/ast.js';
import { unsupported, type JoinType, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { binaryCollation, comparesByIdentity } from './comparison.js';
import { decorrelate, singleRowPer, type Link } from './correlated.js';
import { collectAggregates, signature } from './expressions.js';
import { hasAggregates, page, selectKeys } from './select.js';

/**
 * Correlated subqueries as joins a model could write (docs/TOOLS.md, join_data):
 * - `[NOT] EXISTS (… WHERE inner = outer …)`: a semi (anti) join with the subquery's rows;
 * - `x IN (… correlated)`: a semi join that also equates x with the selected column;
 * - `x NOT IN (… correlated)`: anti joins that keep SQL's NULL rules (below);
 * - a scalar subquery: its aggregate per value of the links, joined back (left), or the one
 *   row a key picks, looked up (left).
 * Each is exact: the join compares what the subquery's equalities compare, with the same
 * operator and operands.
 */

/** What the query compiler lends: a query's rows after FROM and WHERE, or through GROUP BY. */
export interface RowSource {
  ctx: PassContext;
  whereRows(q: SelectQuery): TableRef;
  rows(q: SelectQuery): TableRef;
}

export function existsJoin(src: RowSource, t: TableRef, e: ExistsExpr): TableRef {
  src.ctx.b.requireExtended('correlated_subquery', 'a correlated subquery');
  const { inner, links } = decorrelate(e.query);
  plainRows(inner, 'EXISTS');
  return linked(src, t, links, src.whereRows(inner), e.not ? 'anti' : 'semi');
}

/**
 * `x [NOT] IN (SELECT y … WHERE inner = outer)`. IN: some correlated row has y = x (SQLite
 * compares `x IN (SELECT y)` as `x = y`). NOT IN is true exactly when no correlated row has a
 * NULL y, and either no row correlates at all or x is not NULL and no correlated row has
 * y = x (an empty set makes it true whatever x is; otherwise a NULL on either side makes it
 * unknown, which a filter drops).
 */
export function inJoin(src: RowSource, t: TableRef, e: InExpr): TableRef {
  const { ctx } = src;
  ctx.b.requireExtended('correlated_subquery', 'a correlated subquery');
  const { inner, links } = decorrelate(e.subquery!);
  plainRows(inner, 'IN');
  if (inner.columns.length !== 1) unsupported('subquery_columns', 'IN (SELECT …) with several columns');
  const member: Link = { outer: e.expr, inner: inner.columns[0].expr };
  const outer = withKeys(ctx, t, [...links.map((l) => l.outer), e.expr]);
  const [rows, y] = ctx.exprs.key(src.whereRows(inner), member.inner);
  if (!e.not) return linked(src, outer, [...links, member], rows, 'semi');
  const noNull = linked(src, outer, links, ctx.b.filter(rows, y, 'is_null'), 'anti');
  const uncorrelated = linked(src, noNull, links, rows, 'anti');
  const x = ctx.exprs.key(noNull, e.expr)[1];
  const notAmong = linked(src, ctx.b.filter(noNull, x, 'is_not_null'), [...links, member], rows, 'anti');
  return ctx.b.union(uncorrelated, notAmong);
}

/**
 * A correlated scalar subquery's value on every row of `t`, as a key. An aggregate over the
 * correlated rows is computed once per value of the links (GROUP BY them) and joined back
 * by a left join: a row that correlates with nothing gets the aggregate of no rows, NULL,
 * or 0 for COUNT. Without an aggregate the subquery's first row is its value: exact only
 * when the links pick at most one row (a key of its one table).
 */
export function scalarJoin(src: RowSource, t: TableRef, expr: SubqueryExpr): [TableRef, string] {
  const { ctx } = src;
  ctx.b.requireExtended('correlated_subquery', 'a correlated subquery');
  if (t.memberKeys) unsupported('correlated_subquery', 'a correlated subquery in a grouped query');
  const { inner, links } = decorrelate(expr.query);
  if (inner.columns.length !== 1) unsupported('subquery_columns', 'a scalar subquery with several columns');
  if (links.some((l) => !comparesByIdentity(ctx.b.db, l.outer, l.inner)))
    unsupported('correlated_subquery', 'a correlation between columns that compare by conversion or collation');
  const { limit, offset } = page(inner);
  if (limit === 0 || (offset ?? 0) > 0 || inner.having || inner.distinct)
    unsupported('correlated_subquery', 'a correlated scalar subquery with HAVING, DISTINCT, LIMIT 0 or OFFSET');
  const value = inner.columns[0].expr;
  const outer = withKeys(
    ctx,
    t,
    links.map((l) => l.outer),
  );
  const outerKeys = links.map((l) => ctx.exprs.key(outer, l.outer)[1]);
  let joined: TableRef;
  let valueKey: string;
  if (inner.groupBy.length === 0 && hasAggregates(inner)) {
    const overNoRows = aggregateOverNoRows(value);
    const perLink: SelectQuery = {
      ...inner,
      columns: [...links.map((l, i) => ({ expr: l.inner, alias: null, name: `__link${i}` })), inner.columns[0]],
      groupBy: links.map((l) => l.inner),
      orderBy: [],
      limit: null,
      offset: null,
    };
    const [groups, keys] = selectKeys(ctx, src.rows(perLink), perLink);
    joined = ctx.b.join(outer, outerKeys, groups, keys.slice(0, links.length), 'left');
    valueKey = joined.keys[outer.keys.length + groups.keys.indexOf(keys[links.length])];
    if (overNoRows === 0) {
      joined = ctx.b.transform(joined, valueKey, 'coalesce', { operand: { value: 0 } }, signature(expr));
      return [joined, joined.keys[joined.keys.length - 1]];
    }
  } else {
    if (
      inner.groupBy.length > 0 ||
      !singleRowPer(
        ctx.b.db,
        inner,
        links.map((l) => l.inner),
      )
    )
      unsupported('correlated_subquery', 'a correlated scalar subquery whose links may pick several rows');
    let rows = src.whereRows(inner);
    const innerKeys = links.map((l) => {
      const [r, key] = ctx.exprs.key(rows, l.inner);
      rows = r;
      return key;
    });
    const [withValue, key] = ctx.exprs.key(rows, value);
    joined = ctx.b.join(outer, outerKeys, withValue, innerKeys, 'left');
    valueKey = joined.keys[outer.keys.length + withValue.keys.indexOf(key)];
  }
  return [{ ...joined, exprs: new Map(joined.exprs).set(signature(expr), valueKey) }, valueKey];
}

/** The keys of `exprs` on `t`, computed before the branches that need them (union_data wants one set of keys). */
export function withKeys(ctx: PassContext, t: TableRef, exprs: Expr[]): TableRef {
  return exprs.reduce((acc, e) => ctx.exprs.key(acc, e)[0], t);
}

/** The links of a correlated `[NOT] EXISTS` / `IN` subquery, found in `e`'s query. */
export function correlatedOuterExprs(e: ExistsExpr | InExpr): Expr[] {
  const query = e.kind === 'exists' ? e.query : e.subquery!;
  const { links } = decorrelate(query);
  return [...links.map((l) => l.outer), ...(e.kind === 'in' ? [e.expr] : [])];
}

function linked(src: RowSource, t: TableRef, links: Link[], rows: TableRef, type: JoinType): TableRef {
  const { ctx } = src;
  let outer = t;
  let inner = rows;
  const outerKeys: string[] = [];
  const innerKeys: string[] = [];
  for (const link of links) {
    if (!binaryCollation(ctx.b.db, link.outer) || !binaryCollation(ctx.b.db, link.inner))
      unsupported('correlated_subquery', 'a correlation on a column with a collation other than BINARY');
    const [o, outerKey] = ctx.exprs.key(outer, link.outer);
    const [i, innerKey] = ctx.exprs.key(inner, link.inner);
    [outer, inner] = [o, i];
    outerKeys.push(outerKey);
    innerKeys.push(innerKey);
  }
  return ctx.b.join(outer, outerKeys, inner, innerKeys, type);
}

/** EXISTS and IN read the correlated rows themselves: no grouping, aggregate or LIMIT between. */
function plainRows(inner: SelectQuery, what: string): void {
  if (inner.groupBy.length > 0 || inner.having || hasAggregates(inner) || inner.limit || inner.offset)
    unsupported('correlated_subquery', `a correlated ${what} over groups, aggregates or a LIMIT`);
}

const NULL_PROPAGATING_FUNCTIONS = ['ABS', 'ROUND', 'UPPER', 'LOWER', 'LENGTH', 'TRIM'];

/**
 * The value of an aggregate expression over no rows, where the left join's NULL can stand
 * for it: NULL for SUM/AVG/MIN/MAX and expressions that stay NULL when they are, 0 for a
 * bare COUNT (coalesced after the join). Anything else (COUNT inside arithmetic, IFNULL,
 * CASE) has another value over no rows: refused.
 */
function aggregateOverNoRows(e: Expr): null | 0 {
  if (e.kind === 'aggregate' && e.name === 'COUNT') return 0;
  const propagates = (x: Expr): boolean => {
    switch (x.kind) {
      case 'aggregate':
        return ['SUM', 'AVG', 'MIN', 'MAX'].includes(x.name);
      case 'literal':
        return true;
      case 'binary':
        return ['+', '-', '*', '/', '%', '||'].includes(x.op) && children(x).every(propagates);
      case 'unary':
        return x.op !== 'NOT' && propagates(x.operand);
      case 'cast':
        return propagates(x.expr);
      case 'function':
        return NULL_PROPAGATING_FUNCTIONS.includes(x.name) && children(x).every(propagates);
      default:
        return false;
    }
  };
  if (!propagates(e) || collectAggregates(e).length === 0)
    unsupported('correlated_subquery', 'a correlated aggregate whose value over no rows a join cannot give');
  return null;
}
