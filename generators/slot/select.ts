import type { Expr, SelectItem, SelectQuery } from '../sql/ast.js';
import { unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { determinedBy } from './dependencies.js';
import { bareColumns, collectAggregates, signature, type ScalarContext } from './expressions.js';

/**
 * SELECT and LIMIT: the calls whose outputs, zipped column-wise, are the answer.
 * Rows (plain or grouped): one retrieve_data per column (DISTINCT over several columns:
 * select_unique_values with the key list). Ungrouped aggregates: scalars (aggregate_data,
 * then calculate for arithmetic over them), or, for columns beside a single MIN/MAX, the
 * row holding the extreme (SQLite's documented bare-column rule) via argmin/argmax.
 */

export interface Page {
  limit: number | null;
  offset: number | null;
}

export function page(q: { limit: Expr | null; offset: Expr | null }): Page {
  const integer = (e: Expr | null): number | null => {
    if (e === null) return null;
    if (e.kind !== 'literal' || e.type !== 'integer')
      unsupported('limit_expression', 'LIMIT/OFFSET that is not an integer');
    return e.value as number;
  };
  return { limit: integer(q.limit), offset: integer(q.offset) };
}

/** Keys of the select items on the returned table. */
export function selectKeys(ctx: PassContext, table: TableRef, q: SelectQuery): [TableRef, string[]] {
  let t = table;
  const keys = q.columns.map((c) => {
    const [t1, key] = ctx.exprs.key(t, c.expr);
    t = t1;
    return key;
  });
  return [t, keys];
}

export function projectRows(ctx: PassContext, table: TableRef, q: SelectQuery): string[] {
  const { limit, offset } = page(q);
  const [t, keys] = selectKeys(ctx, table, q);
  if (q.distinct && keys.length > 1) {
    if (limit !== null || offset !== null) unsupported('distinct_limit', 'DISTINCT over several columns with LIMIT');
    return [ctx.b.unique(t, keys)];
  }
  return keys.map((key) => ctx.b.retrieve(t, key, { distinct: q.distinct, limit, offset }));
}

export function hasAggregates(q: SelectQuery): boolean {
  return q.columns.some((c) => collectAggregates(c.expr).length > 0);
}

/** One label per select item, for an ungrouped aggregate query (one row). */
export function projectScalars(ctx: PassContext, table: TableRef, q: SelectQuery): string[] {
  const { limit, offset } = page(q);
  if (limit === 0 || (offset ?? 0) > 0) unsupported('limit_aggregate', 'LIMIT 0 or OFFSET on a one-row aggregate');
  const columns = constantBareColumnsAsMin(ctx, q);
  if (columns.some((c) => bareColumns(c.expr).length > 0)) return projectBesideExtreme(ctx, table, q);
  const scalar: ScalarContext = { table, memo: new Map() };
  return columns.map((c) => {
    const value = ctx.exprs.scalar(scalar, c.expr);
    if (typeof value !== 'string' || !/^\$.+\$$/.test(value))
      unsupported('constant_select', 'a constant in the SELECT list');
    return value.slice(1, -1);
  });
}

/**
 * `SELECT name, SUM(x) FROM t WHERE name = 'a'`: a bare column that the query's equalities
 * hold constant over all its rows (dependencies.ts, with no group keys) is the one value it
 * takes, which MIN reads, NULL over no rows as SQLite gives it. Other select items as they are.
 */
function constantBareColumnsAsMin(ctx: PassContext, q: SelectQuery): SelectItem[] {
  const constant = determinedBy([], q, ctx.b.db);
  return q.columns.map((c) =>
    c.expr.kind === 'column' && c.expr.depth === 0 && constant(c.expr)
      ? { ...c, expr: { kind: 'aggregate', name: 'MIN', distinct: false, star: false, arg: c.expr, extraArgs: [] } }
      : c,
  );
}

/** `SELECT name, MAX(x) FROM t`: the columns come from the row holding the maximum. */
function projectBesideExtreme(ctx: PassContext, table: TableRef, q: SelectQuery): string[] {
  const [t2, keys] = selectKeys(ctx, extremeRow(ctx, table, q), q);
  return keys.map((k) => ctx.b.retrieve(t2, k, { distinct: false, limit: null, offset: null }));
}

/**
 * The one-row table holding `q`'s single MIN/MAX, whose other columns SQLite takes from that
 * row (argmin/argmax): the rows of `SELECT name, MAX(x) FROM t`. Over no rows it has none,
 * where SQL has one row of NULLs: callers use it where that row could match nothing anyway.
 */
export function extremeRow(ctx: PassContext, table: TableRef, q: SelectQuery): TableRef {
  const aggregates = q.columns.flatMap((c) => collectAggregates(c.expr));
  const sigs = new Set(aggregates.map(signature));
  const agg = aggregates[0];
  if (sigs.size !== 1 || (agg.name !== 'MIN' && agg.name !== 'MAX') || agg.distinct || !agg.arg) {
    unsupported('bare_column', 'a column beside aggregates other than a single MIN/MAX, without GROUP BY');
  }
  const [t1, key] = ctx.exprs.key(table, agg.arg);
  const row = ctx.b.argExtreme(t1, key, agg.name === 'MIN' ? 'argmin' : 'argmax');
  return { ...row, exprs: new Map(row.exprs).set(signature(agg), key) };
}
