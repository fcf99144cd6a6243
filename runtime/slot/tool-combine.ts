import type { CallScope } from './call-scope.js';
import { SET_OPERATIONS } from './catalog.js';
import { allowed } from './errors.js';
import { ascending, inherit, orderBy, type OrderTerm, type Rel, type Shape } from './relation.js';
import { cte, ident, join, raw, sql, type Frag } from './sqlfrag.js';

/**
 * union_data and combine_data: two outputs into one. union_data merges rows of one
 * source by their identity (the OR of two filters); combine_data is SQLite's compound
 * SELECT, which matches rows by their values.
 */

export function union(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'other_data_source']);
  const a = call.source('data_source');
  const b = call.source('other_data_source');
  if (a.kind !== 'table' || b.kind !== 'table') args.fail('wrong_type', 'union_data combines two tables, not lists');
  if (a.origin !== b.origin || a.members?.cte !== b.members?.cte || !sameNames(a.identity, b.identity)) {
    args.fail(
      'bad_value',
      `"$${a.label}$" and "$${b.label}$" do not come from the same source table; union_data combines rows of one source`,
    );
  }
  if (a.keys.length !== b.keys.length || a.keys.some((k) => !b.keys.includes(k))) {
    args.fail(
      'bad_value',
      `"$${a.label}$" and "$${b.label}$" have different keys (${allowed(a.keys)} vs ${allowed(b.keys)})`,
    );
  }
  // Same ordering lineage: keep it; otherwise fall back to source (identity) order.
  const sameOrder = a.orderToken === b.orderToken && sameNames(a.order.map(termText), b.order.map(termText));
  const order = sameOrder ? a.order : ascending(a.identity);
  // Inputs of one layout (the usual: filters of one source) union as `*`, which names no
  // key, so that the starting table can leave out the unused ones.
  const columns = sameNames(a.columns, b.columns)
    ? a.columns
    : [...new Set([...a.keys, ...a.identity, ...order.map((t) => t.column)])];
  const select = sameNames(a.columns, b.columns) ? raw('*') : join(columns.map(ident), ', ');
  // A row of b is new unless a holds the same source row (NULL-safe: a LEFT JOIN's
  // unmatched rowids are NULL).
  const same = join(
    a.identity.map((c) => sql`"__a".${ident(c)} IS "__b".${ident(c)}`),
    ' AND ',
  );
  return {
    kind: 'table',
    ...inherit(a),
    columns,
    order,
    orderToken: sameOrder ? a.orderToken : a.origin,
    sorted: sameOrder && a.sorted,
    body: sql`SELECT ${select} FROM ${cte(a.cte)} UNION ALL SELECT ${select} FROM ${cte(b.cte)} AS "__b" WHERE NOT EXISTS (SELECT 1 FROM ${cte(a.cte)} AS "__a" WHERE ${same})`,
  };
}

/**
 * SQLite's compound SELECT of two lists/tables with the same number of columns, matched
 * by position: all their keys, or those key_name / other_key_name pick (so UNION ALL can
 * keep the duplicate rows of a few columns of whole tables); the output has the first
 * input's (chosen) keys. union / intersect / except keep distinct rows (NULLs equal),
 * ordered by their values (the keys ascending, in order); union_all keeps every row, the
 * first input's in its order, then the second's.
 */
export function combine(call: CallScope): Shape {
  const { args, label } = call;
  args.expectOnly(['data_source', 'other_data_source', 'operation', 'key_name', 'other_key_name']);
  const a = call.source('data_source');
  const b = call.source('other_data_source');
  const operation = args.choice('operation', SET_OPERATIONS, call.paper);
  if (a.members || b.members)
    args.fail('wrong_type', 'combine_data takes lists or plain tables, not grouped tables; project the columns first');
  const keys = args.has('key_name') ? call.keyList(a, 'key_name').keys : a.keys;
  const otherKeys = args.has('other_key_name') ? call.keyList(b, 'other_key_name').keys : b.keys;
  if (keys.length !== otherKeys.length) {
    args.fail(
      'bad_value',
      `"$${a.label}$" gives ${keys.length} column(s) and "$${b.label}$" gives ${otherKeys.length}; combine_data needs the same number`,
    );
  }
  // A table stays a table even with one column: the kind says where the rows came from.
  const kind = a.kind === 'list' && b.kind === 'list' ? 'list' : 'table';
  const select = (chosen: string[]): Frag =>
    join(
      chosen.map((k, i) => sql`${ident(k)} AS ${ident(keys[i])}`),
      ', ',
    );
  const base = { kind, keys, members: undefined, origin: label, orderToken: label, sorted: false } as const;
  if (operation.name === 'union_all') {
    const hidden = ['__side', '__pos'];
    const side = (rel: Rel, chosen: string[], n: number): Frag =>
      sql`SELECT ${select(chosen)}, ${raw(String(n))} AS "__side", ROW_NUMBER() OVER (ORDER BY ${orderBy(rel.order)}) AS "__pos" FROM ${cte(rel.cte)}`;
    return {
      ...base,
      columns: [...keys, ...hidden],
      identity: hidden,
      order: ascending(hidden),
      body: sql`${side(a, keys, 0)} UNION ALL ${side(b, otherKeys, 1)}`,
    };
  }
  const operator = raw(operation.name.toUpperCase());
  const body = sql`SELECT ${select(keys)} FROM ${cte(a.cte)} ${operator} SELECT ${select(otherKeys)} FROM ${cte(b.cte)}`;
  return { ...base, columns: keys, identity: keys, order: ascending(keys), body };
}

function termText(term: OrderTerm): string {
  return `${term.column}${term.descending ? ' DESC' : ''}`;
}

function sameNames(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
