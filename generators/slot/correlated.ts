import type { DatabaseInfo } from '../../core/model.js';
import { children, type ColumnExpr, type Expr, type Query, type SelectQuery } from '../sql/ast.js';
import { same } from '../sql/scope.js';
import { unsupported } from './builder.js';
import { conjuncts } from './from.js';

/**
 * A correlated subquery taken apart for decorrelation: the equalities that tie it to the
 * enclosing query (`inner.d = outer.c`), and the subquery without them, which no longer
 * refers outside. What the enclosing query does with it (a semi or anti join for EXISTS and
 * IN, a lookup joined back for a scalar) is the query compiler's; this module only says
 * what the subquery is and whether that rewriting is exact.
 */

export interface Link {
  /** The enclosing query's expression, its columns as that query sees them (depth 0). */
  outer: Expr;
  /** The subquery's own expression it is equated with. */
  inner: Expr;
}

export interface Correlation {
  inner: SelectQuery;
  links: Link[];
}

/**
 * `q` as its links and its uncorrelated rest, or null. Only equalities in the WHERE of a
 * plain SELECT are links; any other reference to the enclosing query (a comparison other
 * than `=`, one in a join's ON, the select list, GROUP BY, HAVING, or a nested subquery)
 * has no join to stand for it.
 */
export function correlationOf(q: Query): Correlation | null {
  if (q.kind !== 'select' || q.from === null) return null;
  const links: Link[] = [];
  const rest: Expr[] = [];
  for (const part of conjuncts(q.where)) {
    const link = linkOf(part);
    if (link) links.push(link);
    else rest.push(part);
  }
  const elsewhere = [
    ...rest,
    ...q.from.joins.flatMap((j) => (j.on ? [j.on] : [])),
    ...q.columns.map((c) => c.expr),
    ...q.groupBy,
    ...(q.having ? [q.having] : []),
    ...q.orderBy.map((o) => o.expr),
  ];
  const items = [q.from.base, ...q.from.joins.map((j) => j.item)];
  if (links.length === 0 || items.some((i) => i.kind === 'derived' && i.query.correlated)) return null;
  if (elsewhere.some(refersOutside)) return null;
  return { inner: { ...q, where: andOf(rest), correlated: false }, links };
}

/** correlationOf, or the rejection that says why the subquery cannot be decorrelated. */
export function decorrelate(q: Query): Correlation {
  return (
    correlationOf(q) ??
    unsupported(
      'correlated_subquery',
      'a nested SELECT that refers to the enclosing query other than by equalities in its WHERE',
    )
  );
}

/** `inner = outer` (either way round): one side reads only the enclosing query, the other only its own. */
function linkOf(e: Expr): Link | null {
  if (e.kind !== 'binary' || e.op !== '=') return null;
  if (readsOnly(e.left, 1) && readsOnly(e.right, 0)) return { outer: lowered(e.left), inner: e.right };
  if (readsOnly(e.right, 1) && readsOnly(e.left, 0)) return { outer: lowered(e.right), inner: e.left };
  return null;
}

/** Columns all at `depth` (at least one), no nested SELECT, no aggregate or window. */
function readsOnly(e: Expr, depth: number): boolean {
  let columns = 0;
  const walk = (x: Expr): boolean => {
    if (x.kind === 'column') {
      columns++;
      return x.depth === depth;
    }
    if (x.kind === 'subquery' || x.kind === 'exists' || x.kind === 'aggregate' || x.kind === 'window') return false;
    if (x.kind === 'in' && x.subquery) return false;
    return children(x).every(walk);
  };
  return walk(e) && columns > 0;
}

/** An expression of the enclosing query's columns, as that query sees them. */
function lowered(e: Expr): Expr {
  if (e.kind === 'column') return { ...e, depth: 0 };
  return JSON.parse(JSON.stringify(e), (_, v: unknown) =>
    v !== null && typeof v === 'object' && (v as { kind?: string }).kind === 'column'
      ? { ...(v as ColumnExpr), depth: 0 }
      : v,
  ) as Expr;
}

/** A column of an enclosing query, here or in a nested query (conservatively: any correlated one). */
export function refersOutside(e: Expr): boolean {
  if (e.kind === 'column') return e.depth > 0;
  if ((e.kind === 'subquery' || e.kind === 'exists') && e.query.correlated) return true;
  if (e.kind === 'in' && e.subquery?.correlated) return true;
  return children(e).some(refersOutside);
}

export function andOf(parts: Expr[]): Expr | null {
  return parts.reduce<Expr | null>((acc, p) => (acc ? { kind: 'binary', op: 'AND', left: acc, right: p } : p), null);
}

/**
 * Whether at most one row of `q` (one table, no join) has given values of `columns`: they
 * hold its whole primary key or a whole declared unique key (an equality on them keeps no
 * NULL, which a unique key may repeat).
 */
export function singleRowPer(db: DatabaseInfo, q: SelectQuery, columns: Expr[]): boolean {
  if (q.from === null || q.from.joins.length > 0 || q.from.base.kind !== 'table') return false;
  const base = q.from.base;
  const table = db.tables.find((t) => same(t.name, base.table));
  if (!table) return false;
  const named = columns.flatMap((c) => (c.kind === 'column' && same(c.source, base.name) ? [c.column] : []));
  const covered = (key: string[]) => key.length > 0 && key.every((k) => named.some((n) => same(n, k)));
  return covered(table.primaryKey) || (table.uniqueKeys ?? []).some(covered);
}
