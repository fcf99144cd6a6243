import type { DatabaseInfo } from '../../core/model.js';
import type { ColumnExpr, Expr, Query, SelectQuery } from '../sql/ast.js';
import { subqueries } from './columns.js';
import { words, type JoinRole } from './naming.js';

/**
 * The role a table plays in a query where it is joined through a foreign key: in
 * `superhero AS T1 JOIN colour AS T2 ON T1.eye_colour_id = T2.id` the colour T2 is the
 * superhero's eye colour — the referencing column's words without their key suffix. Two
 * filters on `colour.colour` are then told apart (eye colour, hair colour). A key declared
 * in the schema is trusted; without one, a referencing column named `<role>_id` joined with
 * the referenced table's primary key is taken for one.
 */

/** The role of the FROM item named `alias` (as the query's column references name it), if a join gives it one. */
export function joinRole(alias: string, query: Query, db: DatabaseInfo): JoinRole | null {
  const name = alias.toLowerCase();
  for (const [a, b] of columnEqualities(query)) {
    for (const [own, other] of [
      [a, b],
      [b, a],
    ]) {
      if (own.source.toLowerCase() !== name || other.source.toLowerCase() === name) continue;
      const role = roleWords(own, other, db);
      if (role && other.table) return { kind: 'join', words: role, table: other.table, column: other.column };
    }
  }
  return null;
}

const KEY_SUFFIXES = new Set(['id', 'fk', 'key', 'ref']);
const CONNECTORS = new Set(['link', 'links', 'linked', 'to', 'of', 'the', 'ref', 'fk']);

function roleWords(own: ColumnExpr, other: ColumnExpr, db: DatabaseInfo): string[] | null {
  const table = (name: string | null) => db.tables.find((t) => t.name.toLowerCase() === name?.toLowerCase());
  const ownTable = table(own.table);
  const otherTable = table(other.table);
  if (!ownTable || !otherTable) return null;
  const same = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();
  const referencing = otherTable.foreignKeys.some(
    (fk) => same(fk.column, other.column) && same(fk.refTable, ownTable.name) && same(fk.refColumn, own.column),
  );
  const columnWords = words(other.column);
  const keyNamed = columnWords.length > 1 && KEY_SUFFIXES.has(columnWords[columnWords.length - 1]);
  const primary = ownTable.primaryKey.length
    ? ownTable.primaryKey.some((k) => same(k, own.column))
    : same(own.column, 'id');
  const declared = otherTable.foreignKeys.length > 0;
  if (!(referencing || (!declared && keyNamed && primary))) return null;
  const role = keyNamed ? columnWords.slice(0, -1) : columnWords;
  // A role that only repeats the table's or the key's name (`colour_id`, `link_to_major`) says nothing.
  const plain = [words(ownTable.name), words(ownTable.name.replace(/s$/i, '')), words(own.column)].map((w) =>
    w.join(' '),
  );
  const meaningful = role.filter((w) => !CONNECTORS.has(w)).join(' ');
  return meaningful && !plain.includes(meaningful) ? role : null;
}

/** `a.x = b.y` equalities between columns of two FROM items, in ON and WHERE of the query and the queries nested in it. */
function columnEqualities(query: Query): [ColumnExpr, ColumnExpr][] {
  return selects(query).flatMap((select) =>
    [...(select.from?.joins.map((j) => j.on) ?? []), select.where]
      .flatMap((e) => (e ? conjuncts(e) : []))
      .flatMap((e): [ColumnExpr, ColumnExpr][] =>
        e.kind === 'binary' && e.op === '=' && e.left.kind === 'column' && e.right.kind === 'column'
          ? [[e.left, e.right]]
          : [],
      ),
  );
}

export function conjuncts(expr: Expr): Expr[] {
  return expr.kind === 'binary' && expr.op === 'AND' ? [...conjuncts(expr.left), ...conjuncts(expr.right)] : [expr];
}

/**
 * Every SELECT of a query: set operands, derived tables and subqueries, outermost first (a
 * recursive table's initial SELECT once, not again for its recursive SELECT's reference).
 */
export function selects(query: Query): SelectQuery[] {
  if (query.kind === 'set') return [...selects(query.left), ...selects(query.right)];
  const nested: Query[] = [];
  for (const item of query.from ? [query.from.base, ...query.from.joins.map((j) => j.item)] : [])
    if (item.kind === 'derived' && item.recursive !== 'self') nested.push(item.query);
  const exprs = [
    ...query.columns.map((c) => c.expr),
    ...(query.from?.joins.flatMap((j) => (j.on ? [j.on] : [])) ?? []),
    ...(query.where ? [query.where] : []),
    ...(query.having ? [query.having] : []),
  ];
  for (const expr of exprs) nested.push(...subqueries(expr));
  return [query, ...nested.flatMap(selects)];
}
