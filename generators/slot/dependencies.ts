import type { DatabaseInfo, DataKey, TableInfo } from '../../core/model.js';
import { children, type ColumnExpr, type Expr, type Query, type SelectQuery } from '../sql/ast.js';
import { conjuncts } from './from.js';

/**
 * Functional dependencies of a query's rows, from the schema: which columns the group keys
 * determine. A column is determined when it is a key, equal to a determined column (an
 * inner join's or the WHERE's equality, both sides non-NULL on every row kept), equal to a
 * literal (under BINARY comparison: a NOCASE column equal to 'a' may hold 'A'), or a column of
 * a table whose whole primary key is determined, or a whole unique key whose columns are
 * equated (a unique column may repeat NULLs; an equality keeps none), or a whole data key
 * (`TableInfo.dataKeys`: unique and non-NULL on every row of the data, which the pipeline
 * proves and verification proves again on every variant). A selected column that is neither
 * grouped nor aggregated is only the group's value when it is determined.
 */

const idOf = (source: string, column: string) => `${source}\u0000${column}`.toLowerCase();
const columnId = (c: ColumnExpr) => idOf(c.source, c.column);

/** A FROM item that is a schema table, under the name the query gives it. */
interface FromTable {
  name: string;
  table: TableInfo;
}

/** What a query's FROM and conditions say about its rows, before any key is known. */
interface RowFacts {
  tables: FromTable[];
  /** Pairs of columns equal on every row kept (identity: BINARY on both sides). */
  equalities: [string, string][];
  /** Columns an equality constrains: never NULL on the rows kept. */
  equated: Set<string>;
  /** Columns equal to a non-NULL literal: one value on every row kept. */
  constant: Set<string>;
  /** The literal each constant column equals (the first one, if several). */
  literals: Map<string, string | number>;
}

/** The columns of `q`'s rows that `keys` determine, as a predicate. */
export function determinedBy(keys: readonly Expr[], q: SelectQuery, db: DatabaseInfo): (column: ColumnExpr) => boolean {
  const facts = rowFacts(q, db);
  const known = closure(facts, seeds(keys, facts), declaredKeys(facts));
  return (column) => known.has(columnId(column));
}

/**
 * The single columns whose proof as data keys could make a bare column of `query` (or of a
 * query nested in it) determined: in each grouping or aggregating SELECT, the columns its
 * group keys determine (the group keys themselves, columns equated to determined ones or to a
 * literal) in tables not already wholly determined (so none is a key the table has already),
 * and where the query is one SELECT, the columns of a table it equates with literals, as a
 * selection key (at most one row may hold those values). Sorted, each candidate once. A proof may determine more columns, and so make others
 * candidates: a caller asks again with the data keys it proved.
 */
export function dataKeyCandidates(query: Query, db: DatabaseInfo): DataKey[] {
  const found = new Map<string, DataKey>();
  const selects = selectsOf(query);
  for (const q of selects) {
    if (q.groupBy.length === 0 && !aggregates(q)) continue;
    const facts = rowFacts(q, db);
    const known = closure(facts, seeds(q.groupBy, facts), declaredKeys(facts));
    for (const { name, table } of facts.tables) {
      if (columnsOf(name, table).every((c) => known.has(c))) continue;
      for (const column of table.columns) {
        if (known.has(idOf(name, column.name)))
          found.set(idOf(table.name, column.name), { table: table.name, columns: [column.name] });
      }
      // A selection key: the literals this query equates the table's columns with. A data key
      // is a table's, and another SELECT of the query may read the table without them: only
      // where there is one SELECT.
      const equated = table.columns.filter((c) => facts.literals.has(idOf(name, c.name)));
      if (selects.length === 1 && equated.length > 0) {
        const key: DataKey = {
          table: table.name,
          columns: equated.map((c) => c.name),
          values: equated.map((c) => facts.literals.get(idOf(name, c.name))!),
        };
        found.set(JSON.stringify(key).toLowerCase(), key);
      }
    }
  }
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, key]) => key);
}

/** `db` with `keys` as data keys of their tables (the schema as ingested is left as it is). */
export function withDataKeys(db: DatabaseInfo, keys: readonly DataKey[]): DatabaseInfo {
  const of = (table: TableInfo) => keys.filter((k) => k.table.toLowerCase() === table.name.toLowerCase());
  return {
    ...db,
    tables: db.tables.map((table) =>
      of(table).length === 0 ? table : { ...table, dataKeys: of(table).map((k) => k.columns) },
    ),
  };
}

function rowFacts(q: SelectQuery, db: DatabaseInfo): RowFacts {
  const tables = (q.from ? [q.from.base, ...q.from.joins.map((j) => j.item)] : []).flatMap((item) => {
    const table = item.kind === 'table' && db.tables.find((t) => t.name.toLowerCase() === item.table.toLowerCase());
    return table ? [{ name: item.name, table }] : [];
  });
  // Under NOCASE (or any collation but BINARY) equal is not identical: 'ann' = 'ANN'.
  const caseless = new Set(
    tables.flatMap(({ name, table }) => table.columns.filter((c) => c.collation).map((c) => idOf(name, c.name))),
  );
  const identityEquality = (e: Expr): e is ColumnExpr => isOwnColumn(e) && !caseless.has(columnId(e));
  const facts: RowFacts = { tables, equalities: [], equated: new Set(), constant: new Set(), literals: new Map() };
  const literal = (column: ColumnExpr, value: string | number) => {
    facts.constant.add(columnId(column));
    if (!facts.literals.has(columnId(column))) facts.literals.set(columnId(column), value);
  };
  const conditions = [q.where, ...(q.from?.joins ?? []).flatMap((j) => (j.type === 'inner' ? [j.on] : []))];
  for (const conjunct of conditions.flatMap(conjuncts)) {
    if (conjunct.kind !== 'binary' || conjunct.op !== '=') continue;
    const { left, right } = conjunct;
    for (const side of [left, right]) if (isOwnColumn(side)) facts.equated.add(columnId(side));
    if (identityEquality(left) && identityEquality(right)) facts.equalities.push([columnId(left), columnId(right)]);
    else if (identityEquality(left) && right.kind === 'literal' && right.value !== null) literal(left, right.value);
    else if (identityEquality(right) && left.kind === 'literal' && left.value !== null) literal(right, left.value);
  }
  return facts;
}

/** The columns known before any key: the group keys and the columns equal to a literal. */
function seeds(keys: readonly Expr[], facts: RowFacts): Set<string> {
  return new Set([...keys.flatMap((k) => (isOwnColumn(k) ? [columnId(k)] : [])), ...facts.constant]);
}

/** A key of a FROM table: once all of `key` is known, so is every one of `columns`. */
interface Keyed {
  key: string[];
  columns: string[];
}

/** The keys the schema declares (a unique key only where equalities keep its NULLs out), and the data keys. */
function declaredKeys(facts: RowFacts): Keyed[] {
  return facts.tables.flatMap(({ name, table }) => {
    const columns = columnsOf(name, table);
    const ids = (key: string[]) => key.map((c) => idOf(name, c));
    const unique = (table.uniqueKeys ?? []).map(ids).filter((key) => key.every((c) => facts.equated.has(c)));
    const primary = table.primaryKey.length > 0 ? [ids(table.primaryKey)] : [];
    return [...primary, ...unique, ...(table.dataKeys ?? []).map(ids)].map((key) => ({ key, columns }));
  });
}

/** Everything `start` determines through the equalities and the keys. */
function closure(facts: RowFacts, start: ReadonlySet<string>, keyed: readonly Keyed[]): Set<string> {
  const known = new Set(start);
  for (let grew = true; grew;) {
    const before = known.size;
    for (const [a, b] of facts.equalities) {
      if (known.has(a)) known.add(b);
      if (known.has(b)) known.add(a);
    }
    for (const { key, columns } of keyed) if (key.every((c) => known.has(c))) columns.forEach((c) => known.add(c));
    grew = known.size > before;
  }
  return known;
}

function columnsOf(name: string, table: TableInfo): string[] {
  return table.columns.map((c) => idOf(name, c.name));
}

function isOwnColumn(e: Expr): e is ColumnExpr {
  return e.kind === 'column' && e.depth === 0;
}

/** Every SELECT of `query`: its branches, derived tables and subqueries, at any depth. */
function selectsOf(query: Query): SelectQuery[] {
  if (query.kind === 'set') return [...selectsOf(query.left), ...selectsOf(query.right)];
  const items = query.from ? [query.from.base, ...query.from.joins.map((j) => j.item)] : [];
  const exprs = [
    ...query.columns.map((c) => c.expr),
    ...(query.from?.joins ?? []).flatMap((j) => (j.on ? [j.on] : [])),
    ...[query.where, query.having, query.limit, query.offset].filter((e) => e !== null),
    ...query.groupBy,
    ...query.orderBy.map((o) => o.expr),
  ];
  return [
    query,
    ...items.flatMap((item) => (item.kind === 'derived' ? selectsOf(item.query) : [])),
    ...exprs.flatMap(subqueriesOf).flatMap(selectsOf),
  ];
}

/** The queries nested in `expr`, outermost first. */
function subqueriesOf(expr: Expr): Query[] {
  const own =
    expr.kind === 'subquery' || expr.kind === 'exists'
      ? [expr.query]
      : expr.kind === 'in' && expr.subquery
        ? [expr.subquery]
        : [];
  return [...own, ...children(expr).flatMap(subqueriesOf)];
}

/** The SELECT aggregates (its list, HAVING or ORDER BY): a bare column beside them may be read from any row. */
function aggregates(q: SelectQuery): boolean {
  const has = (e: Expr): boolean => e.kind === 'aggregate' || children(e).some(has);
  return [...q.columns.map((c) => c.expr), ...(q.having ? [q.having] : []), ...q.orderBy.map((o) => o.expr)].some(has);
}
