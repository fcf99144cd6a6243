import type { DatabaseInfo } from '../../core/model.js';
import { startingTableKeys, type StartingTableRef } from '../../runtime/slot/keys.js';
import type { ColumnExpr, Expr, Join, SelectQuery } from '../sql/ast.js';
import { sameExpr } from '../sql/normalize.js';
import { same } from '../sql/scope.js';
import { unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { affinityClass, binaryCollation } from './comparison.js';
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
    if (from.joins.length > 0) return joinedFrom(ctx, q);
    return { table: ctx.queries.table(from.base.query, from.base.name), conditions: [] };
  }
  const semiJoins = from.joins.map((join) => (join.item.kind === 'derived' ? semiJoin(ctx, q, join) : []));
  if (semiJoins.some((s) => s === null)) return joinedFrom(ctx, q);
  const tables: StartingTableRef[] = [{ alias: from.base.name, table: from.base.table }];
  const joins: { type: 'inner' | 'left'; alias: string; on: { left: string; right: string }[] }[] = [];
  const conditions: Expr[] = [];
  for (const [i, join] of from.joins.entries()) {
    if (join.item.kind === 'derived') {
      conditions.push(...semiJoins[i]!);
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
  return { table: startingTable(ctx, tables, joins), conditions };
}

type StartingJoin = { type: 'inner' | 'left'; alias: string; on: { left: string; right: string }[] };

function startingTable(ctx: PassContext, tables: StartingTableRef[], joins: StartingJoin[]): TableRef {
  const label = ctx.b.initialize({ tables, joins });
  const keys = startingTableKeys(ctx.b.db, tables);
  const exprs = new Map<string, string>();
  for (const k of keys) {
    const column: ColumnExpr = { kind: 'column', source: k.alias, table: k.table, column: k.column, depth: 0 };
    exprs.set(signature(column), k.key);
  }
  return ctx.b.startingTable(
    label,
    keys.map((k) => k.key),
    exprs,
  );
}

/**
 * A FROM with derived tables joined to other items, as join_data: the tables' own joins make
 * one starting table (as without derived tables), then each derived table is joined to what
 * precedes it by the column equalities that tie it there (its ON, or a later table's ON for
 * a derived table first in FROM), inner or left as written. Exact because joins reorder
 * freely here: an inner join commutes with the others, and a LEFT JOIN's ON names only
 * items before it, which are all joined when it is. Other inner-join conditions become
 * filters; anything a LEFT JOIN's ON says besides equalities, or a RIGHT/FULL/cross join,
 * is refused.
 */
function joinedFrom(ctx: PassContext, q: SelectQuery): FromResult {
  const from = q.from!;
  const refuse = (what: string): never => unsupported('derived_join', what);
  const items = [from.base, ...from.joins.map((j) => j.item)];
  const derivedNames = items.flatMap((i) => (i.kind === 'derived' ? [i.name] : []));
  const isDerived = (c: ColumnExpr) => derivedNames.some((n) => same(n, c.source));
  const tables: StartingTableRef[] = [];
  const joins: StartingJoin[] = [];
  const conditions: Expr[] = [];
  /** Conjuncts that tie a derived table to other items, with the join they came with. */
  const ties: { conjunct: Expr; type: 'inner' | 'left' }[] = [];
  if (from.base.kind === 'table') tables.push({ alias: from.base.name, table: from.base.table });
  for (const join of from.joins) {
    if (join.type !== 'inner' && join.type !== 'left')
      refuse(`a ${join.type.toUpperCase()} JOIN beside a derived table`);
    if (join.type === 'left' && from.base.kind === 'derived') refuse('a LEFT JOIN after a derived table first in FROM');
    const type = join.type === 'left' ? 'left' : 'inner';
    if (join.item.kind === 'derived') {
      for (const c of conjuncts(join.on)) ties.push({ conjunct: c, type });
      continue;
    }
    const on: { left: string; right: string }[] = [];
    for (const conjunct of conjuncts(join.on)) {
      const pair = columnEquality(conjunct);
      if (refersToAny(conjunct, derivedNames)) {
        if (type === 'left') refuse('a LEFT JOIN whose ON names a derived table');
        ties.push({ conjunct, type: 'inner' });
      } else if (pair) on.push({ left: qualified(pair[0]), right: qualified(pair[1]) });
      else if (type === 'left')
        unsupported('left_join_on_filter', 'a LEFT JOIN condition that is not a column equality');
      else conditions.push(conjunct);
    }
    if (tables.length === 0) {
      if (on.length > 0) refuse('a join condition between tables that follow a derived table');
      tables.push({ alias: join.item.name, table: join.item.table });
    } else {
      tables.push({ alias: join.item.name, table: join.item.table });
      joins.push({ type, alias: join.item.name, on });
    }
  }
  let acc = tables.length > 0 ? startingTable(ctx, tables, joins) : null;
  for (const item of items) {
    if (item.kind !== 'derived') continue;
    const derived = ctx.queries.table(item.query, item.name, true);
    if (acc === null) {
      acc = derived;
      continue;
    }
    const mine = ties.filter((t) => refersToAny(t.conjunct, [item.name]));
    const type = mine.some((t) => t.type === 'left') ? 'left' : 'inner';
    const pairs = mine.flatMap(({ conjunct }) => {
      const pair = columnEquality(conjunct);
      if (!pair || pair.filter((c) => same(c.source, item.name)).length !== 1) return [];
      const [inner, outer] = same(pair[0].source, item.name) ? pair : [pair[1], pair[0]];
      return isDerived(outer) && !acc!.exprs.has(signature(outer)) ? [] : [{ conjunct, inner, outer }];
    });
    if (pairs.length === 0) refuse('a derived table joined without a column equality');
    for (const { conjunct } of mine) {
      if (pairs.some((p) => p.conjunct === conjunct)) continue;
      if (type === 'left') unsupported('left_join_on_filter', 'a LEFT JOIN condition that is not a column equality');
      conditions.push(conjunct);
    }
    for (const { inner, outer } of pairs) {
      if (!binaryCollation(ctx.b.db, inner) || !binaryCollation(ctx.b.db, outer))
        refuse('a join on a column with a collation other than BINARY');
    }
    const outerKeys = pairs.map((p) => ctx.exprs.key(acc!, p.outer)[1]);
    const innerKeys = pairs.map((p) => ctx.exprs.key(derived, p.inner)[1]);
    acc = ctx.b.join(acc, outerKeys, derived, innerKeys, type);
    ties.splice(0, ties.length, ...ties.filter((t) => !mine.includes(t)));
  }
  // Ties between two derived tables both joined by then, or left unused: filters of an inner join.
  conditions.push(...ties.map((t) => t.conjunct));
  return { table: acc!, conditions };
}

function refersToAny(e: Expr, names: string[]): boolean {
  return names.some((n) => refersTo(e, n));
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
function semiJoin(ctx: PassContext, q: SelectQuery, join: Join): Expr[] | null {
  const reject = (): null => null;
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
  if (!unique || keyExpr.kind !== 'column' || !sameAffinityClass(ctx.b.db, outer, keyExpr)) return reject();
  return [...others, { kind: 'in', expr: outer, not: false, list: null, subquery: projected }];
}

/** Both columns of tables, both text or both numeric affinity (no conversion in `=`). */
function sameAffinityClass(db: DatabaseInfo, a: ColumnExpr, b: ColumnExpr): boolean {
  const x = affinityClass(db, a);
  return x !== null && x !== 'none' && x === affinityClass(db, b);
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
