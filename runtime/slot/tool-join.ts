import type { CallScope } from './call-scope.js';
import { JOIN_TYPES } from './catalog.js';
import { derivedKey, joinedKeys } from './keys.js';
import { HIDDEN_PREFIX, inherit, type Rel, type Shape } from './relation.js';
import { cte, ident, join, raw, sql, type Frag } from './sqlfrag.js';

/**
 * join_data: the rows of data_source matched with the rows of other_data_source where every
 * pair of keys is equal under SQL `=`, so SQLite's comparison rules decide (the columns'
 * affinity and collation as the CTEs carry them; NULL matches nothing). semi / anti only
 * filter data_source's rows (EXISTS / NOT EXISTS), so the output keeps its identity and
 * lineage; inner / left pair rows of both (a JOIN) into a new table.
 */
export function joinData(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'other_data_source', 'key_name', 'other_key_name', 'type']);
  const a = call.source('data_source');
  const b = call.source('other_data_source');
  for (const rel of [a, b]) {
    if (rel.kind !== 'table')
      args.fail('wrong_type', `join_data joins tables; "$${rel.label}$" is a list of one column's values`);
  }
  const type = args.choice('type', JOIN_TYPES, call.paper);
  const filters = type.name === 'semi' || type.name === 'anti';
  if (!filters && a.members) {
    args.fail(
      'wrong_type',
      `a ${type.name} join needs a plain data_source, not the grouped table "$${a.label}$" (semi and anti joins filter its groups)`,
    );
  }
  const keys = call.keyList(a, 'key_name').keys;
  const otherKeys = call.keyList(b, 'other_key_name').keys;
  if (keys.length !== otherKeys.length) {
    args.fail(
      'bad_value',
      `key_name names ${keys.length} key(s) and other_key_name ${otherKeys.length}; they are matched in pairs, so they need as many`,
    );
  }
  const on = join(
    keys.map((k, i) => sql`"__a".${ident(k)} = "__b".${ident(otherKeys[i])}`),
    ' AND ',
  );
  if (filters) {
    const not = raw(type.name === 'anti' ? 'NOT ' : '');
    return {
      kind: 'table',
      ...inherit(a),
      body: sql`SELECT * FROM ${cte(a.cte)} AS "__a" WHERE ${not}EXISTS (SELECT 1 FROM ${cte(b.cte)} AS "__b" WHERE ${on})`,
    };
  }
  return pairs(call.label, a, b, on, type.name === 'left');
}

/**
 * inner / left: a's columns, then b's keys (renamed where a key is taken: `derivedKey`) and
 * b's hidden identity and order columns (renamed clear of a's). Rows come in a's order, the
 * rows one a row matches in b's order; the identity is both (b's NULL on a left join's
 * unmatched rows, which union_data compares with IS).
 */
function pairs(label: string, a: Rel, b: Rel, on: Frag, left: boolean): Shape {
  const { keys, renamed } = joinedKeys(a.keys, b.keys);
  const derived = [...renamed]
    .filter(([key, name]) => name !== key)
    .map(([key, name]) => ({ key: name, description: `${key} of the rows joined from "$${b.label}$"` }));
  const taken = new Set([...a.columns, ...keys]);
  for (const column of new Set([...b.identity, ...b.order.map((t) => t.column)])) {
    if (renamed.has(column)) continue;
    const name = derivedKey(taken, column.startsWith(HIDDEN_PREFIX) ? column : `${HIDDEN_PREFIX}${column}`);
    taken.add(name);
    renamed.set(column, name);
  }
  const fromB = [...renamed].map(([column, name]) => sql`"__b".${ident(column)} AS ${ident(name)}`);
  const joined = raw(left ? 'LEFT JOIN' : 'JOIN');
  return {
    kind: 'table',
    keys,
    columns: [...a.columns, ...renamed.values()],
    identity: [...a.identity, ...b.identity.map((c) => renamed.get(c)!)],
    order: [...a.order, ...b.order.map((t) => ({ ...t, column: renamed.get(t.column)! }))],
    members: undefined,
    origin: label,
    orderToken: label,
    sorted: a.sorted,
    body: sql`SELECT "__a".*, ${join(fromB, ', ')} FROM ${cte(a.cte)} AS "__a" ${joined} ${cte(b.cte)} AS "__b" ON ${on}`,
    ...(derived.length > 0 ? { derived } : {}),
  };
}
