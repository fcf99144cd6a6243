import type { Expr, SelectQuery } from '../sql/ast.js';
import { unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { aggregationType, bareColumns, collectAggregates, signature } from './expressions.js';
import { determinedBy } from './dependencies.js';
import { filterPass } from './where.js';

/**
 * GROUP BY, its aggregates and HAVING: group_data_by on the group keys (computed first when
 * they are expressions), then one aggregate_data per distinct aggregate used by SELECT,
 * HAVING or ORDER BY (its argument computed per row before grouping), then HAVING as
 * filters on the grouped table.
 *
 * A column selected without being grouped or aggregated (SQLite takes it from some row of
 * the group) is added to the group keys when the schema says the group keys determine it
 * (dependencies.ts): then it is the same in every row of the group and grouping by it
 * changes nothing. Otherwise the answer depends on which row SQLite picks: `bare_column`.
 */
export function groupPass(ctx: PassContext, table: TableRef, q: SelectQuery): TableRef {
  const { exprs, b } = ctx;
  let t = table;
  const groupExprs: Expr[] = [...q.groupBy];
  const groupSigs = new Set(groupExprs.map(signature));
  const outputs = [...q.columns.map((c) => c.expr), ...q.orderBy.map((o) => o.expr)];
  const determined = determinedBy(q.groupBy, q, b.db);
  for (const expr of outputs) {
    if (groupSigs.has(signature(expr))) continue;
    for (const column of bareColumns(expr)) {
      const sig = signature(column);
      if (groupSigs.has(sig)) continue;
      if (column.kind === 'column' && column.depth > 0)
        unsupported('correlated_subquery', 'a column of an enclosing query');
      if (column.kind !== 'column' || !determined(column))
        unsupported('bare_column', 'a column neither grouped, aggregated, nor determined by the group keys');
      groupSigs.add(sig);
      groupExprs.push(column);
    }
  }
  const keys: string[] = [];
  for (const expr of groupExprs) {
    const [t1, key] = exprs.key(t, expr);
    t = t1;
    if (!keys.includes(key)) keys.push(key);
  }
  const aggregates = [...outputs, q.having].flatMap((e) => collectAggregates(e));
  const argKeys = new Map<string, string>();
  for (const agg of aggregates) {
    aggregationType(agg);
    if (agg.star || !agg.arg) continue;
    const [t1, key] = exprs.key(t, agg.arg);
    t = t1;
    argKeys.set(signature(agg), key);
  }
  if (keys.length === 0) unsupported('group_by_constant', 'GROUP BY without a column');
  let grouped = b.group(t, keys, groupKeyExprs(groupExprs, t));
  for (const agg of aggregates) {
    const sig = signature(agg);
    if (grouped.exprs.has(sig)) continue;
    grouped = b.aggregateGrouped(grouped, argKeys.get(sig) ?? '*', aggregationType(agg), agg.distinct, sig);
  }
  return filterPass(ctx, grouped, q.having);
}

/** Each group expression's key (several expressions may share one key). */
function groupKeyExprs(groupExprs: Expr[], rows: TableRef): Map<string, string> {
  const map = new Map<string, string>();
  for (const expr of groupExprs) {
    const sig = signature(expr);
    const key = rows.exprs.get(sig);
    if (key !== undefined) map.set(sig, key);
  }
  return map;
}
