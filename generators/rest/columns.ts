import type { ColumnInfo, DatabaseInfo, TableInfo } from '../../core/model.js';
import type { Expr, FromItem, Query } from '../sql/ast.js';
import { castAffinity } from '../sql/normalize.js';
import type { ColumnRef } from './value-sites.js';

/**
 * The schema column a token-level column reference (`T1.County`) stands for, found through
 * the FROM items of the normalized query (every alias of every nesting level). Aliases may
 * repeat across nesting levels (BIRD reuses T1 in subqueries); the first table of that alias
 * holding the column wins, which is right for naming and typing in every case we have seen.
 */

export interface ResolvedColumn {
  table: TableInfo;
  column: ColumnInfo;
}

export type ColumnResolver = (ref: ColumnRef) => ResolvedColumn | null;

export function columnResolver(query: Query, db: DatabaseInfo): ColumnResolver {
  const byAlias = new Map<string, TableInfo[]>();
  const tables: TableInfo[] = [];
  for (const item of fromItems(query)) {
    if (item.kind !== 'table') continue;
    const table = db.tables.find((t) => t.name.toLowerCase() === item.table.toLowerCase());
    if (!table) continue;
    for (const name of new Set([item.name.toLowerCase(), item.table.toLowerCase()]))
      byAlias.set(name, [...(byAlias.get(name) ?? []), table]);
    if (!tables.includes(table)) tables.push(table);
  }
  return (ref) => {
    const candidates = ref.qualifier === null ? tables : (byAlias.get(ref.qualifier.toLowerCase()) ?? tables);
    for (const table of candidates) {
      const column = table.columns.find((c) => c.name.toLowerCase() === ref.name.toLowerCase());
      if (column) return { table, column };
    }
    return null;
  };
}

/** SQLite's affinity of a declared column type (datatype3.html 3.1); `blob` is "none". */
export function columnAffinity(column: ColumnInfo): ReturnType<typeof castAffinity> {
  return castAffinity(column.type.toUpperCase());
}

/** Every FROM item of the query and of the queries nested in it, outermost first. */
export function fromItems(query: Query): FromItem[] {
  if (query.kind === 'set') return [...fromItems(query.left), ...fromItems(query.right)];
  const items: FromItem[] = [];
  if (query.from) {
    for (const item of [query.from.base, ...query.from.joins.map((j) => j.item)]) {
      items.push(item);
      if (item.kind === 'derived') items.push(...fromItems(item.query));
    }
  }
  const exprs: Expr[] = [
    ...query.columns.map((c) => c.expr),
    ...(query.from?.joins.flatMap((j) => (j.on ? [j.on] : [])) ?? []),
    ...(query.where ? [query.where] : []),
    ...(query.having ? [query.having] : []),
  ];
  for (const expr of exprs) for (const sub of subqueries(expr)) items.push(...fromItems(sub));
  return items;
}

/** The queries nested in an expression (subqueries, EXISTS, IN (SELECT …)), outermost first. */
export function subqueries(expr: Expr): Query[] {
  switch (expr.kind) {
    case 'subquery':
    case 'exists':
      return [expr.query];
    case 'in':
      return [
        ...subqueries(expr.expr),
        ...(expr.list ?? []).flatMap(subqueries),
        ...(expr.subquery ? [expr.subquery] : []),
      ];
    case 'binary':
      return [...subqueries(expr.left), ...subqueries(expr.right)];
    case 'unary':
      return subqueries(expr.operand);
    case 'function':
      return expr.args.flatMap(subqueries);
    case 'aggregate':
      return [...(expr.arg ? subqueries(expr.arg) : []), ...expr.extraArgs.flatMap(subqueries)];
    case 'case':
      return [
        ...expr.whens.flatMap((w) => [...subqueries(w.when), ...subqueries(w.then)]),
        ...(expr.else ? subqueries(expr.else) : []),
      ];
    case 'cast':
      return subqueries(expr.expr);
    case 'between':
      return [expr.expr, expr.low, expr.high].flatMap(subqueries);
    case 'like':
      return [...subqueries(expr.expr), ...subqueries(expr.pattern)];
    case 'isNull':
      return subqueries(expr.expr);
    default:
      return [];
  }
}
