import type { Expr, SelectItem } from '../sql/ast.js';
import type { ColumnResolver } from './columns.js';
import { columnLabel, words } from './naming.js';

/**
 * What a select item or an expression is, in words: the words of a name (`itemWords`: an
 * alias, a column, an aggregate of a column) and a phrase for a reader (`itemPhrase`: the
 * column's description, "number of distinct …"). Endpoint names and summaries, and the
 * fields of an endpoint's response, are both made of them.
 */

export function firstColumn(expr: Expr): Extract<Expr, { kind: 'column' }> | null {
  if (expr.kind === 'column') return expr;
  const children: Expr[] =
    expr.kind === 'binary'
      ? [expr.left, expr.right]
      : expr.kind === 'unary'
        ? [expr.operand]
        : expr.kind === 'function'
          ? expr.args
          : expr.kind === 'aggregate'
            ? expr.arg
              ? [expr.arg]
              : []
            : expr.kind === 'cast'
              ? [expr.expr]
              : expr.kind === 'case'
                ? expr.whens.flatMap((w) => [w.then, w.when]).concat(expr.else ? [expr.else] : [])
                : [];
  for (const child of children) {
    const found = firstColumn(child);
    if (found) return found;
  }
  return null;
}

export const AGGREGATE_WORDS: Record<string, string> = {
  COUNT: 'count',
  SUM: 'total',
  TOTAL: 'total',
  AVG: 'average',
  MIN: 'min',
  MAX: 'max',
  GROUP_CONCAT: 'list',
};

export function itemWords(item: SelectItem, baseTable: string | null): string[] {
  const expr = item.expr;
  if (expr.kind === 'column') return words(expr.column).slice(0, 6);
  if (item.alias) return words(item.alias).slice(0, 6);
  const column = firstColumn(expr);
  if (expr.kind === 'aggregate')
    return [AGGREGATE_WORDS[expr.name], ...(column ? words(column.column) : baseTable ? words(baseTable) : ['rows'])];
  return column ? words(column.column).slice(0, 6) : ['value'];
}

export function describe(column: Extract<Expr, { kind: 'column' }>, resolve: ColumnResolver): string {
  const info = resolve({ qualifier: column.source, name: column.column });
  return columnLabel(column.column, info?.column.description ?? '');
}

export function itemPhrase(item: SelectItem, resolve: ColumnResolver): string {
  const expr = item.expr;
  if (expr.kind === 'column') return describe(expr, resolve);
  const column = firstColumn(expr);
  if (expr.kind === 'aggregate') {
    const what = column ? describe(column, resolve) : 'rows';
    return `${expr.name === 'COUNT' ? 'number' : AGGREGATE_WORDS[expr.name]} of ${expr.distinct ? 'distinct ' : ''}${what}`;
  }
  return column ? `a value computed from ${describe(column, resolve)}` : `the value ${item.name}`;
}

export function exprLabel(expr: Expr, resolve: ColumnResolver): string {
  const column = firstColumn(expr);
  if (expr.kind === 'aggregate')
    return `${AGGREGATE_WORDS[expr.name]} of ${column ? describe(column, resolve) : 'rows'}`;
  return column ? describe(column, resolve) : 'a computed value';
}
