import { startingTableKeys, type StartingTableRef } from '../../runtime/slot/keys.js';
import type { ColumnExpr, Expr, Join, SelectQuery } from '../sql/ast.js';
import { castAffinity, sameExpr } from '../sql/normalize.js';
import { same } from '../sql/scope.js';
import { unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { signature } from './expressions.js';

/**
 * FROM: the joined starting table (`initialize_active_data`), or a derived table's rows.
 * ON conjuncts that are not column equalities become WHERE conditions (same meaning for
 * an inner join); on a LEFT JOIN they would change the result, so they are refused.
 */

export interface FromResult {
  table: TableRef;
  /** Conditions to apply as filters (moved out of inner-join ON clauses). */
  conditions: Expr[];
}

export function fromPass(ctx: PassContext, q: SelectQuery): FromResult {
  const from = q.from;
  if (!from) unsupported('no_from', 'SELECT without FROM');
  if (from.base.kind === 'derived') {
    if (from.joins.length > 0) unsupported('derived_join', 'a derived table joined to other tables');
    return { table: ctx.queries.table(from.base.query, from.base.name), conditions: [] };
  }
  const tables: StartingTableRef[] = [{ alias: from.base.name, table: from.base.table }];
  const joins: { type: 'inner' | 'left'; alias: string; on: { left: string; right: string }[] }[] = [];
  const conditions: Expr[] = [];
  for (const join of from.joins) {
    if (join.item.kind === 'derived') {
      conditions.push(...semiJoin(ctx, q, join));
      continue;
    }
    if (join.type === 'right' || join.type === 'full')
      unsupported(`${join.type}_join`, `${join.type.toUpperCase()} JOIN`);
    tables.push({ alias: join.item.name, table: join.item.table });
    const on: { left: string; right: string }[] = [];
    for (const conjunct of conjuncts(join.on)) {
      const pair = columnEquality(conjunct);
      if (pair) on.push({ left: qualified(pair[0]), right: qualified(pair[1]) });
      else if (join.type === 'left')
        unsupported('left_join_on_filter', 'a LEFT JOIN condition that is not a column equality');
      else conditions.push(conjunct);
    }
    joins.push({ type: join.type === 'left' ? 'left' : 'inner', alias: join.item.name, on });
  }
  const label = ctx.b.initialize({ tables, joins });
  const keys = startingTableKeys(ctx.b.db, tables);
  const exprs = new Map<string, string>();
  for (const k of keys) {
    const column: ColumnExpr = { kind: 'column', source: k.alias, table: k.table, column: k.column, depth: 0 };
    exprs.set(signature(column), k.key);
  }
  return {
    table: ctx.b.startingTable(
      label,
      keys.map((k) => k.key),
      exprs,
    ),
    conditions,
  };
}

/**
 * `A JOIN (SELECT ...) AS T ON A.x = T.k` where the outer query reads nothing else of T
 * and each A row matches at most one T row is a semijoin: the filter `A.x = (SELECT k ...)`
 * when T is one aggregate row, else `A.x IN (SELECT k ...)` when T holds each k at most once
 * (grouped by k, or DISTINCT k) and A.x and k compare without affinity conversion (both text
 * or both numeric, so distinct k values never equal the same A.x). The outer query must not
 * depend on row positions (no ORDER BY / LIMIT): SQLite may enumerate such a join in
 * another order than the starting table's source order.
 */
function semiJoin(ctx: PassContext, q: SelectQuery, join: Join): Expr[] {
  const reject = (): never => unsupported('derived_join', 'a derived table joined to other tables');
  if (join.item.kind !== 'derived' || join.type !== 'inner' || join.item.query.kind !== 'select') return reject();
  if (q.orderBy.length > 0 || q.limit !== null || q.offset !== null) return reject();
  const name = join.item.name;
  const derived = join.item.query;
  const parts = conjuncts(join.on);
  const keyIndex = parts.findIndex((p) => {
    const pair = columnEquality(p);
    return pair !== null && pair.filter((c) => same(c.source, name)).length === 1;
  });
  if (keyIndex < 0) return reject();
  const [l, r] = columnEquality(parts[keyIndex])!;
  const [outer, inner] = same(l.source, name) ? [r, l] : [l, r];
  const others = parts.filter((_, i) => i !== keyIndex);
  // Nothing but the key equality reads T (the derived query itself is not searched).
  const rest = { ...q, from: { ...q.from!, joins: q.from!.joins.filter((j) => j !== join) } };
  if (refersTo([rest, others], name)) return reject();
  const index = derived.columns.findIndex((c) => same(c.name, inner.column));
  if (index < 0) return reject();
  const projected: SelectQuery = {
    ...derived,
    columns: [derived.columns[index]],
    orderBy: derived.orderBy.map((o) => ({ ...o, selectIndex: o.selectIndex === index ? 0 : null })),
  };
  const aggregateRow = derived.groupBy.length === 0 && derived.having === null && hasAggregate(derived);
  if (aggregateRow)
    return [...others, { kind: 'binary', op: '=', left: outer, right: { kind: 'subquery', query: projected } }];
  const keyExpr = derived.columns[index].expr;
  const unique =
    (derived.groupBy.length === 1 && sameExpr(derived.groupBy[0], keyExpr)) ||
    (derived.distinct && derived.columns.length === 1);
  if (!unique || keyExpr.kind !== 'column' || !sameAffinityClass(ctx, outer, keyExpr)) return reject();
  return [...others, { kind: 'in', expr: outer, not: false, list: null, subquery: projected }];
}

function hasAggregate(q: SelectQuery): boolean {
  return q.columns.some((c) => JSON.stringify(c.expr).includes('"kind":"aggregate"'));
}

/** Whether any column reference in `node` names the FROM item `name`. */
function refersTo(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((n) => refersTo(n, name));
  if (node === null || typeof node !== 'object') return false;
  const o = node as Record<string, unknown>;
  if (o.kind === 'column' && typeof o.source === 'string' && same(o.source, name)) return true;
  return Object.values(o).some((v) => refersTo(v, name));
}

/** Both columns of tables, both text or both numeric affinity (no conversion in `=`). */
function sameAffinityClass(ctx: PassContext, a: ColumnExpr, b: ColumnExpr): boolean {
  const affinity = (c: ColumnExpr): string | null => {
    if (c.table === null || c.depth > 0) return null;
    const info = ctx.b.db.tables.find((t) => same(t.name, c.table!));
    const column = info?.columns.find((x) => same(x.name, c.column));
    if (!column) return null;
    const to = castAffinity(column.type.toUpperCase());
    return to === 'text' ? 'text' : to === 'blob' ? null : 'numeric';
  };
  const x = affinity(a);
  return x !== null && x === affinity(b);
}

export function conjuncts(expr: Expr | null): Expr[] {
  if (!expr) return [];
  if (expr.kind === 'binary' && expr.op === 'AND') return [...conjuncts(expr.left), ...conjuncts(expr.right)];
  return [expr];
}

function columnEquality(expr: Expr): [ColumnExpr, ColumnExpr] | null {
  if (expr.kind !== 'binary' || expr.op !== '=') return null;
  const { left, right } = expr;
  if (left.kind !== 'column' || right.kind !== 'column' || left.depth > 0 || right.depth > 0) return null;
  return [left, right];
}

function qualified(column: ColumnExpr): string {
  return `${column.source}.${column.column}`;
}
