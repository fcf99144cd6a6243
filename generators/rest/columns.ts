import type { ColumnInfo, DatabaseInfo, TableInfo } from '../../core/model.js';
import type { Expr, FromItem, Query } from '../sql/ast.js';
import { castAffinity } from '../sql/normalize.js';
import { isWord, unquote, type Token } from '../../runtime/sql/lexer.js';
import type { ColumnRef } from './value-sites.js';

/**
 * The schema column a token-level column reference (`T1.County`) stands for, found through
 * the FROM items of the normalized query (every alias of every nesting level). Aliases may
 * repeat across nesting levels (BIRD reuses T1 in subqueries); the first table of that alias
 * holding the column wins, which is right for naming and typing in every case we have seen.
 */

export interface ResolvedColumn {
  table: TableInfo;
  column: ColumnInfo;
}

export type ColumnResolver = (ref: ColumnRef) => ResolvedColumn | null;

export function columnResolver(query: Query, db: DatabaseInfo): ColumnResolver {
  const byAlias = new Map<string, TableInfo[]>();
  const tables: TableInfo[] = [];
  for (const item of fromItems(query)) {
    if (item.kind !== 'table') continue;
    const table = db.tables.find((t) => t.name.toLowerCase() === item.table.toLowerCase());
    if (!table) continue;
    for (const name of new Set([item.name.toLowerCase(), item.table.toLowerCase()]))
      byAlias.set(name, [...(byAlias.get(name) ?? []), table]);
    if (!tables.includes(table)) tables.push(table);
  }
  return (ref) => {
    const candidates = ref.qualifier === null ? tables : (byAlias.get(ref.qualifier.toLowerCase()) ?? tables);
    for (const table of candidates) {
      const column = table.columns.find((c) => c.name.toLowerCase() === ref.name.toLowerCase());
      if (column) return { table, column };
    }
    return null;
  };
}

/** SQLite's affinity of a declared column type (datatype3.html 3.1); `blob` is "none". */
export function columnAffinity(column: ColumnInfo): ReturnType<typeof castAffinity> {
  return castAffinity(column.type.toUpperCase());
}

/**
 * Every FROM item of the query and of the queries nested in it, outermost first. A recursive
 * SELECT's reference to its own table is one item: its query, the table's initial SELECT, is
 * read where the table is.
 */
export function fromItems(query: Query): FromItem[] {
  if (query.kind === 'set') return [...fromItems(query.left), ...fromItems(query.right)];
  const items: FromItem[] = [];
  if (query.from) {
    for (const item of [query.from.base, ...query.from.joins.map((j) => j.item)]) {
      items.push(item);
      if (item.kind === 'derived' && item.recursive !== 'self') items.push(...fromItems(item.query));
    }
  }
  const exprs: Expr[] = [
    ...query.columns.map((c) => c.expr),
    ...(query.from?.joins.flatMap((j) => (j.on ? [j.on] : [])) ?? []),
    ...(query.where ? [query.where] : []),
    ...(query.having ? [query.having] : []),
  ];
  for (const expr of exprs) for (const sub of subqueries(expr)) items.push(...fromItems(sub));
  return items;
}

/** The queries nested in an expression (subqueries, EXISTS, IN (SELECT …)), outermost first. */
export function subqueries(expr: Expr): Query[] {
  switch (expr.kind) {
    case 'subquery':
    case 'exists':
      return [expr.query];
    case 'in':
      return [
        ...subqueries(expr.expr),
        ...(expr.list ?? []).flatMap(subqueries),
        ...(expr.subquery ? [expr.subquery] : []),
      ];
    case 'binary':
      return [...subqueries(expr.left), ...subqueries(expr.right)];
    case 'unary':
      return subqueries(expr.operand);
    case 'function':
      return expr.args.flatMap(subqueries);
    case 'aggregate':
      return [...(expr.arg ? subqueries(expr.arg) : []), ...expr.extraArgs.flatMap(subqueries)];
    case 'case':
      return [
        ...expr.whens.flatMap((w) => [...subqueries(w.when), ...subqueries(w.then)]),
        ...(expr.else ? subqueries(expr.else) : []),
      ];
    case 'cast':
      return subqueries(expr.expr);
    case 'between':
      return [expr.expr, expr.low, expr.high].flatMap(subqueries);
    case 'like':
      return [...subqueries(expr.expr), ...subqueries(expr.pattern)];
    case 'isNull':
      return subqueries(expr.expr);
    default:
      return [];
  }
}

/**
 * Column references resolved through the scope they are written in, as SQLite resolves them:
 * the SELECT that encloses the token (its FROM tables and aliases) first, then the SELECTs
 * around it (a correlated reference), outward. `SELECT name FROM Country WHERE id IN (SELECT
 * country_id FROM League WHERE name = :name)` compares `:name` with League.name, which the
 * scope-blind `columnResolver` took for Country's. Read off the tokens, since the value sites
 * are; a reference the scopes do not hold falls back to `columnResolver`.
 */
export function scopedColumnResolver(
  tokens: readonly Token[],
  query: Query,
  db: DatabaseInfo,
): (ref: ColumnRef, at: number) => ResolvedColumn | null {
  const scopes = tokenScopes(tokens, db);
  const fallback = columnResolver(query, db);
  return (ref, at) => {
    for (let scope: Scope | undefined = scopes.of[at]; scope; scope = scope.parent) {
      const candidates =
        ref.qualifier === null
          ? scope.tables.map((t) => t.table)
          : scope.tables.filter((t) => t.names.has(ref.qualifier!.toLowerCase())).map((t) => t.table);
      for (const table of candidates) {
        const column = table.columns.find((c) => c.name.toLowerCase() === ref.name.toLowerCase());
        if (column) return { table, column };
      }
      // A qualifier names this scope's table, which lacks the column: no outer table of that name is meant.
      if (ref.qualifier !== null && candidates.length > 0) return null;
    }
    return fallback(ref);
  };
}

interface Scope {
  parent: Scope | undefined;
  /** The FROM tables of this SELECT, each with the names it goes by (alias, table name), lower case. */
  tables: { table: TableInfo; names: Set<string> }[];
}

/** Per token index, the innermost SELECT it belongs to (a parenthesis opening with SELECT or WITH starts one). */
function tokenScopes(tokens: readonly Token[], db: DatabaseInfo): { of: Scope[] } {
  const top: Scope = { parent: undefined, tables: [] };
  const of: Scope[] = [];
  const stack: { scope: Scope; opensScope: boolean }[] = [];
  let scope = top;
  const code = tokens.map((t, i) => ({ t, i })).filter(({ t }) => t.kind !== 'space' && t.kind !== 'comment');
  const next = new Map(code.map(({ i }, k) => [i, code[k + 1]?.t]));
  for (const [i, token] of tokens.entries()) {
    if (token.kind === 'punct' && token.text === '(') {
      const opensScope = isWord(next.get(i), 'SELECT', 'WITH');
      stack.push({ scope, opensScope });
      if (opensScope) scope = { parent: scope, tables: [] };
    } else if (token.kind === 'punct' && token.text === ')') {
      scope = stack.pop()?.scope ?? top;
    } else if (isWord(token, 'UNION', 'INTERSECT', 'EXCEPT')) {
      // A compound's next SELECT has FROM tables of its own, beside this one's, under the same parent.
      scope = { parent: scope.parent, tables: [] };
    }
    of[i] = scope;
  }
  // Each scope's FROM items: a table name after FROM, JOIN or a comma of its FROM clause, then its alias.
  const inFrom = new Set<Scope>();
  for (let k = 0; k < code.length; k++) {
    const { t, i } = code[k];
    const here = of[i];
    if (isWord(t, 'WHERE', 'GROUP', 'ORDER', 'LIMIT', 'HAVING', 'UNION', 'EXCEPT', 'INTERSECT', 'WINDOW'))
      inFrom.delete(here);
    const starts = isWord(t, 'FROM', 'JOIN') || (t.kind === 'punct' && t.text === ',' && inFrom.has(here));
    if (!starts) continue;
    if (isWord(t, 'FROM')) inFrom.add(here);
    const name = code[k + 1];
    if (!name || of[name.i] !== here || !['word', 'quoted', 'dquote'].includes(name.t.kind)) continue;
    const table = db.tables.find((x) => x.name.toLowerCase() === unquote(name.t).toLowerCase());
    if (!table) continue;
    const names = new Set([table.name.toLowerCase()]);
    const after = isWord(code[k + 2]?.t, 'AS') ? code[k + 3] : code[k + 2];
    if (after && (after.t.kind === 'word' ? !RESERVED.has(after.t.text.toUpperCase()) : after.t.kind === 'quoted'))
      names.add(unquote(after.t).toLowerCase());
    here.tables.push({ table, names });
  }
  return { of };
}

/** Words after a table name that are not its alias. */
const RESERVED = new Set(
  'WHERE GROUP ORDER LIMIT HAVING UNION EXCEPT INTERSECT JOIN INNER LEFT RIGHT CROSS OUTER NATURAL ON USING WINDOW'.split(
    ' ',
  ),
);
