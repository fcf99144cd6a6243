import type { CallScope } from './call-scope.js';
import { AGGREGATIONS } from './catalog.js';
import { derivedKey } from './keys.js';
import { ascending, inherit, orderBy, scalarShape, withDerivedColumn, type Rel, type Shape } from './relation.js';
import { cte, ident, join, param, quoteIdent, raw, sql, type Frag } from './sqlfrag.js';

/**
 * group_data_by and aggregate_data. A grouped table's rows are groups; it remembers its
 * member rows (the source CTE and the group keys) so that aggregate_data can compute
 * per-group values at any later point (after HAVING-like filters, sorts, other
 * aggregates), joined on the group keys.
 */

export function group(call: CallScope): Shape {
  call.args.expectOnly(['data_source', 'key_name']);
  const rel = call.source('data_source');
  const { keys } = call.keyList(rel, 'key_name');
  const columns = join(keys.map(ident), ', ');
  // A group is identified by its keys; groups come in key order (NULL first), as
  // SQLite's GROUP BY output does.
  return {
    kind: 'table',
    keys,
    columns: keys,
    identity: keys,
    order: ascending(keys),
    members: { cte: rel.cte, keys: rel.keys, groupKeys: keys, order: rel.order },
    origin: call.label,
    orderToken: call.label,
    sorted: false,
    body: sql`SELECT ${columns} FROM ${cte(rel.cte)} GROUP BY ${columns}`,
  };
}

export function aggregate(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'key_name', 'aggregation_type', 'distinct', 'limit']);
  const rel = call.source('data_source');
  const type = args.choice('aggregation_type', AGGREGATIONS, call.paper);
  const distinct = args.boolean('distinct', false);
  const limit = args.integer('limit') ?? 0;
  const keyName = args.required('key_name');
  const star = keyName === '*';
  if (star && (type.name !== 'count' || distinct)) {
    args.fail('bad_value', 'key_name "*" (all rows) is allowed only with aggregation_type "count" and distinct false');
  }
  const some = raw(distinct ? 'DISTINCT ' : '');
  if (type.name === 'argmin' || type.name === 'argmax') {
    if (rel.members)
      args.fail(
        'bad_value',
        `aggregation_type "${type.name}" works on plain tables, not on the grouped table "$${rel.label}$"`,
      );
    const key = ident(call.key(rel, 'key_name'));
    const direction = raw(type.name === 'argmin' ? 'ASC' : 'DESC');
    return {
      kind: 'table',
      ...inherit(rel),
      body: sql`SELECT * FROM ${firstRows(rel, limit)} WHERE ${key} IS NOT NULL ORDER BY ${key} ${direction}, ${orderBy(rel.order)} LIMIT 1`,
    };
  }
  if (!rel.members) {
    const value = star ? raw('NULL') : ident(call.key(rel, 'key_name'));
    const values = sql`SELECT ${some}${value} AS "__x" FROM ${firstRows(rel, limit)}`;
    return scalarShape(call.label, aggregateSql(type.name, star, values, []));
  }
  const members = rel.members;
  const memberRel: Rel = { ...rel, keys: members.keys, members: undefined };
  const value = star ? raw('NULL') : ident(call.key(memberRel, 'key_name'));
  const groupKeys = members.groupKeys;
  const partition = join(groupKeys.map(ident), ', ');
  const rows =
    limit > 0
      ? sql`(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY ${partition} ORDER BY ${orderBy(members.order)}) AS "__gn" FROM ${cte(members.cte)}) WHERE "__gn" <= ${param(limit)})`
      : cte(members.cte);
  const values = sql`SELECT ${some}${partition}, ${value} AS "__x" FROM ${rows}`;
  const base = `${type.name}${distinct ? '_distinct' : ''}_${star ? 'rows' : (keyName as string)}`;
  const newKey = derivedKey([...rel.keys, ...members.keys], base);
  // Groups are matched on their keys, NULL-safely: NULL is a group.
  const on = join(
    groupKeys.map((k) => sql`a.${ident(k)} IS s.${ident(k)}`),
    ' AND ',
  );
  const description = `${type.description}${distinct ? ' (distinct values)' : ''} of ${star ? 'the rows' : (keyName as string)} in each group`;
  const body = sql`SELECT s.*, a."__v" AS ${ident(newKey)} FROM ${cte(rel.cte)} AS s LEFT JOIN (${aggregateSql(type.name, star, values, groupKeys)}) AS a ON ${on}`;
  return withDerivedColumn(rel, newKey, description, body);
}

/** The first `limit` rows of `rel` in row order (all rows when `limit` <= 0). */
function firstRows(rel: Rel, limit: number): Frag {
  return limit > 0
    ? sql`(SELECT * FROM ${cte(rel.cte)} ORDER BY ${orderBy(rel.order)} LIMIT ${param(limit)})`
    : cte(rel.cte);
}

/**
 * The aggregate of column `__x` of `values`: per group of the `groupKeys` columns when
 * there are any (columns: the group keys, `__v`), else one row `__v` (an aggregate
 * without GROUP BY yields a row even for no input: COUNT 0, SUM NULL). Sample std is
 * two-pass (mean first) for accuracy; one value divides by zero, hence NULL, as pandas
 * gives NaN.
 */
function aggregateSql(type: string, star: boolean, values: Frag, groupKeys: string[]): Frag {
  const keys = groupKeys.map(quoteIdent).join(', ');
  const select = raw(keys ? `${keys}, ` : '');
  const groupBy = raw(keys ? ` GROUP BY ${keys}` : '');
  if (type === 'std') {
    const partition = raw(keys ? `PARTITION BY ${keys}` : '');
    return sql`SELECT ${select}sqrt(SUM(("__x" - "__m") * ("__x" - "__m")) / (COUNT("__x") - 1)) AS "__v" FROM (SELECT *, AVG("__x") OVER (${partition}) AS "__m" FROM (${values}))${groupBy}`;
  }
  const functions: Record<string, string> = { min: 'MIN', max: 'MAX', sum: 'SUM', mean: 'AVG', count: 'COUNT' };
  const expression = star ? 'COUNT(*)' : `${functions[type]}("__x")`;
  return sql`SELECT ${select}${raw(expression)} AS "__v" FROM (${values})${groupBy}`;
}
