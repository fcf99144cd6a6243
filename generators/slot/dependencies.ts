import type { DatabaseInfo } from '../../core/model.js';
import type { ColumnExpr, Expr, SelectQuery } from '../sql/ast.js';
import { conjuncts } from './from.js';

/**
 * Functional dependencies of a query's rows, from the schema: which columns the group keys
 * determine. A column is determined when it is a key, equal to a determined column (an
 * inner join's or the WHERE's equality, both sides non-NULL on every row kept), equal to a
 * literal (under BINARY comparison: a NOCASE column equal to 'a' may hold 'A'), or a column of
 * a table whose whole primary key is determined, or a whole unique key whose columns are
 * equated (a unique column may repeat NULLs; an equality keeps none). A selected column
 * that is neither grouped nor aggregated is only the group's value when it is determined.
 */

const idOf = (source: string, column: string) => `${source}\u0000${column}`.toLowerCase();
const columnId = (c: ColumnExpr) => idOf(c.source, c.column);

/** The columns of `q`'s rows that `keys` determine, as a predicate. */
export function determinedBy(keys: readonly Expr[], q: SelectQuery, db: DatabaseInfo): (column: ColumnExpr) => boolean {
  const known = new Set(keys.flatMap((k) => (isOwnColumn(k) ? [columnId(k)] : [])));
  const equalities: [string, string][] = [];
  // Columns an equality constrains: never NULL on the rows kept.
  const equated = new Set<string>();
  const conditions = [q.where, ...(q.from?.joins ?? []).flatMap((j) => (j.type === 'inner' ? [j.on] : []))];
  // The FROM items that are schema tables, with their schema.
  const tables = (q.from ? [q.from.base, ...q.from.joins.map((j) => j.item)] : []).flatMap((item) => {
    const table = item.kind === 'table' && db.tables.find((t) => t.name.toLowerCase() === item.table.toLowerCase());
    return table ? [{ name: item.name, table }] : [];
  });
  // Under NOCASE (or any collation but BINARY) equal is not identical: 'ann' = 'ANN'.
  const caseless = new Set(
    tables.flatMap(({ name, table }) => table.columns.filter((c) => c.collation).map((c) => idOf(name, c.name))),
  );
  const identityEquality = (e: Expr): e is ColumnExpr => isOwnColumn(e) && !caseless.has(columnId(e));
  for (const conjunct of conditions.flatMap(conjuncts)) {
    if (conjunct.kind !== 'binary' || conjunct.op !== '=') continue;
    const { left, right } = conjunct;
    for (const side of [left, right]) if (isOwnColumn(side)) equated.add(columnId(side));
    if (identityEquality(left) && identityEquality(right)) equalities.push([columnId(left), columnId(right)]);
    else if (identityEquality(left) && right.kind === 'literal' && right.value !== null) known.add(columnId(left));
    else if (identityEquality(right) && left.kind === 'literal' && left.value !== null) known.add(columnId(right));
  }
  const keyed = tables.flatMap(({ name, table }) => {
    const columns = table.columns.map((c) => idOf(name, c.name));
    const unique = (table.uniqueKeys ?? [])
      .map((key) => key.map((c) => idOf(name, c)))
      .filter((key) => key.every((c) => equated.has(c)));
    const primary = table.primaryKey.length > 0 ? [table.primaryKey.map((c) => idOf(name, c))] : [];
    return [...primary, ...unique].map((key) => ({ key, columns }));
  });
  for (let grew = true; grew;) {
    const before = known.size;
    for (const [a, b] of equalities) {
      if (known.has(a)) known.add(b);
      if (known.has(b)) known.add(a);
    }
    for (const { key, columns } of keyed) if (key.every((c) => known.has(c))) columns.forEach((c) => known.add(c));
    grew = known.size > before;
  }
  return (column) => known.has(columnId(column));
}

function isOwnColumn(e: Expr): e is ColumnExpr {
  return e.kind === 'column' && e.depth === 0;
}
