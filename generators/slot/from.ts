import { startingTableKeys, type StartingTableRef } from '../../runtime/slot/keys.js';
import type { ColumnExpr, Expr, FromClause } from '../sql/ast.js';
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

export function fromPass(ctx: PassContext, from: FromClause | null): FromResult {
  if (!from) unsupported('no_from', 'SELECT without FROM');
  if (from.base.kind === 'derived') {
    if (from.joins.length > 0) unsupported('derived_join', 'a derived table joined to other tables');
    return { table: ctx.queries.table(from.base.query, from.base.name), conditions: [] };
  }
  const tables: StartingTableRef[] = [{ alias: from.base.name, table: from.base.table }];
  const joins: { type: 'inner' | 'left'; alias: string; on: { left: string; right: string }[] }[] = [];
  const conditions: Expr[] = [];
  for (const join of from.joins) {
    if (join.item.kind === 'derived') unsupported('derived_join', 'a derived table joined to other tables');
    if (join.type === 'right' || join.type === 'full') unsupported(`${join.type}_join`, `${join.type.toUpperCase()} JOIN`);
    tables.push({ alias: join.item.name, table: join.item.table });
    const on: { left: string; right: string }[] = [];
    for (const conjunct of conjuncts(join.on)) {
      const pair = columnEquality(conjunct);
      if (pair) on.push({ left: qualified(pair[0]), right: qualified(pair[1]) });
      else if (join.type === 'left') unsupported('left_join_on_filter', 'a LEFT JOIN condition that is not a column equality');
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
  return { table: ctx.b.startingTable(label, keys.map((k) => k.key), exprs), conditions };
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
