import type { CallScope } from './call-scope.js';
import { CONDITIONS } from './catalog.js';
import { inherit, orderBy, type Shape } from './relation.js';
import { cte, ident, param, raw, sql, type Frag } from './sqlfrag.js';

/** filter_data and sort_data: the same rows and columns, fewer or reordered. */

export function filter(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'key_name', 'value', 'condition']);
  const rel = call.source('data_source');
  const key = ident(call.key(rel, 'key_name'));
  const condition = args.choice('condition', CONDITIONS, call.paper);
  // Read lazily: is_null and is_not_null ignore the value, which may be absent.
  const value = (): Frag => call.scalarValue(args.required('value'), 'argument "value"');
  const list = (): Frag => call.listValue(args.required('value'), 'argument "value"');
  const predicates: Record<string, () => Frag> = {
    equal_to: () => sql`${key} = ${value()}`,
    not_equal_to: () => sql`${key} <> ${value()}`,
    greater_than: () => sql`${key} > ${value()}`,
    less_than: () => sql`${key} < ${value()}`,
    greater_than_equal_to: () => sql`${key} >= ${value()}`,
    less_than_equal_to: () => sql`${key} <= ${value()}`,
    contains: () => sql`instr(${key}, ${value()}) > 0`,
    not_contains: () => sql`NOT (instr(${key}, ${value()}) > 0)`,
    like: () => sql`${key} LIKE ${value()}`,
    not_like: () => sql`${key} NOT LIKE ${value()}`,
    in: () => sql`${key} IN ${list()}`,
    not_in: () => sql`${key} NOT IN ${list()}`,
    is_null: () => sql`${key} IS NULL`,
    is_not_null: () => sql`${key} IS NOT NULL`,
  };
  const predicate = predicates[condition.name]();
  return { kind: 'table', ...inherit(rel), body: sql`SELECT * FROM ${cte(rel.cte)} WHERE ${predicate}` };
}

export function sort(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'key_name', 'ascending', 'limit', 'offset'], call.paper ? ['limit', 'offset'] : []);
  const rel = call.source('data_source');
  const key = call.key(rel, 'key_name');
  const descending = !args.boolean('ascending', true);
  // Stable: ties keep the previous order. A later term on a column already ordered by
  // decides nothing. SQLite orders NULLs first ascending, last descending, as the contract says.
  const order = [{ column: key, descending }, ...rel.order.filter((t) => t.column !== key)];
  // Extended: only the rows a LIMIT/OFFSET leaves, in the new order (groups of a grouped
  // table: its aggregates join its members on the groups that remain).
  const limit = args.integer('limit') ?? 0;
  const offset = args.integer('offset') ?? 0;
  if (offset < 0) args.fail('bad_value', 'argument "offset" must not be negative');
  const rows =
    limit > 0 || offset > 0
      ? sql` ORDER BY ${orderBy(order)} LIMIT ${param(limit > 0 ? limit : -1)} OFFSET ${param(offset)}`
      : raw('');
  return {
    kind: 'table',
    ...inherit(rel),
    order,
    orderToken: call.label,
    sorted: true,
    body: sql`SELECT * FROM ${cte(rel.cte)}${rows}`,
  };
}
