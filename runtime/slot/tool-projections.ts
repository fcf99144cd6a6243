import type { CallScope } from './call-scope.js';
import { derivedKey } from './keys.js';
import { HIDDEN_PREFIX, orderBy, type OrderTerm, type OutputKind, type Rel, type Shape } from './relation.js';
import { cte, ident, join, param, raw, sql, type Frag } from './sqlfrag.js';

/**
 * retrieve_data and select_unique_values: projections onto some keys. They carry the
 * identity and order columns they drop from the visible keys under hidden names, so that
 * later calls still see the rows' identity and order.
 */

export function retrieve(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'key_name', 'distinct', 'limit', 'offset'], call.paper ? ['offset'] : []);
  const rel = call.source('data_source');
  const key = call.key(rel, 'key_name');
  const rows = args.boolean('distinct', false) ? firstOccurrences(rel, [key]) : cte(rel.cte);
  const limit = args.integer('limit') ?? 0;
  const offset = args.integer('offset') ?? 0;
  if (offset < 0) args.fail('bad_value', 'argument "offset" must not be negative');
  const page =
    limit > 0 || offset > 0
      ? sql` ORDER BY ${orderBy(rel.order)} LIMIT ${param(limit > 0 ? limit : -1)} OFFSET ${param(offset)}`
      : raw('');
  return projectionShape(rel, [key], 'list', rows, page);
}

export function unique(call: CallScope): Shape {
  call.args.expectOnly(['data_source', 'key_name']);
  const rel = call.source('data_source');
  const { keys, many } = call.keyList(rel, 'key_name');
  return projectionShape(rel, keys, many ? 'table' : 'list', firstOccurrences(rel, keys));
}

/** `rows` (rows of `rel`, then `page`) projected onto `keys`, in `rel`'s lineage. */
function projectionShape(rel: Rel, keys: string[], kind: OutputKind, rows: Frag, page: Frag = raw('')): Shape {
  const { select, columns, identity, order } = project(rel, keys);
  return {
    kind,
    keys,
    columns,
    identity,
    order,
    origin: rel.origin,
    orderToken: rel.orderToken,
    sorted: rel.sorted,
    body: sql`SELECT ${select} FROM ${rows}${page}`,
  };
}

/** The rows of `rel` whose `keys` combination occurs first (in row order), with the columns a projection onto `keys` reads. */
function firstOccurrences(rel: Rel, keys: string[]): Frag {
  const partition = join(keys.map(ident), ', ');
  return sql`(SELECT * FROM (SELECT ${projectedColumns(rel, keys)}, ROW_NUMBER() OVER (PARTITION BY ${partition} ORDER BY ${orderBy(rel.order)}) AS "__dn" FROM ${cte(rel.cte)}) WHERE "__dn" = 1)`;
}

/**
 * Projection of `rel` onto `keys`: the column list (the keys, then the identity and
 * order columns that are not keys, renamed to hidden names) and the identity and order
 * in the projected names. The renaming depends on the names only, so two projections
 * onto the same keys agree (union_data relies on it).
 */
function project(
  rel: Rel,
  keys: string[],
): { select: Frag; columns: string[]; identity: string[]; order: OrderTerm[] } {
  const carried = [...new Set([...rel.identity, ...rel.order.map((t) => t.column)])].filter((c) => !keys.includes(c));
  const taken = new Set([...keys, ...carried]);
  const names = new Map<string, string>(keys.map((k) => [k, k]));
  const columns = keys.map(ident);
  for (const column of carried) {
    const name = column.startsWith(HIDDEN_PREFIX) ? column : derivedKey(taken, `${HIDDEN_PREFIX}h_${column}`);
    taken.add(name);
    names.set(column, name);
    columns.push(name === column ? ident(column) : sql`${ident(column)} AS ${ident(name)}`);
  }
  return {
    select: join(columns, ', '),
    columns: [...names.values()],
    identity: rel.identity.map((c) => names.get(c)!),
    order: rel.order.map((t) => ({ ...t, column: names.get(t.column)! })),
  };
}

/** The columns a projection of `rel` onto `keys` reads. */
function projectedColumns(rel: Rel, keys: string[]): Frag {
  return join([...new Set([...keys, ...rel.identity, ...rel.order.map((t) => t.column)])].map(ident), ', ');
}
