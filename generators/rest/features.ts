import type { DatabaseInfo } from '../../core/model.js';
import type { Expr, OrderItem, SelectQuery } from '../sql/ast.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { columnResolver, type ColumnResolver } from './columns.js';
import { parseEndpointSql, placeholderIn } from './endpoint-query.js';
import { words, type JoinRole } from './naming.js';
import { conjuncts, joinRole, selects } from './roles.js';
import { exprPhrase, firstColumn, itemPhrase, itemWords } from './select-items.js';

/**
 * What an endpoint's query does, as features endpoints can be told apart by (disambiguate.ts):
 * its fixed conditions ("where the type is 'Meeting'", "with the highest views"), its order
 * and limit ("the 3 with the highest amount"), the columns its parameters filter on, its
 * grouping and DISTINCT, its select items and its tables — in every SELECT of the query,
 * subqueries included. Each feature has words for a name and a phrase for a reader; the
 * phrase is its identity.
 */

export interface Feature {
  /** Lower first: what a reader most needs to tell two endpoints apart. */
  rank: number;
  name: string[];
  phrase: string;
}

/** The features of an endpoint's query, by rank then position; none when its SQL does not parse. */
export function endpointFeatures(spec: EndpointSpec, db: DatabaseInfo): Feature[] {
  const parsed = parseEndpointSql(spec.sql, db);
  if (!parsed.ok) return [];
  const query = parsed.value.query;
  const resolve = columnResolver(query, db);
  const roleOf = (alias: string) => joinRole(alias, query, db);
  const all = [
    ...(query.kind === 'set'
      ? [
          { rank: 3, name: words(query.op), phrase: `the ${query.op} of two queries` },
          ...orderFeatures(query.orderBy, query.limit, resolve),
        ]
      : []),
    ...selects(query).flatMap((select) => selectFeatures(select, resolve, roleOf)),
  ];
  const seen = new Set<string>();
  return all
    .filter((f) => !seen.has(f.phrase) && seen.add(f.phrase))
    .map((f, i) => [f, i] as const)
    .sort(([a, i], [b, j]) => a.rank - b.rank || i - j)
    .map(([f]) => f);
}

function selectFeatures(
  select: SelectQuery,
  resolve: ColumnResolver,
  roleOf: (alias: string) => JoinRole | null,
): Feature[] {
  const items = select.from ? [select.from.base, ...select.from.joins.map((j) => j.item)] : [];
  const tables = items.flatMap((i) => (i.kind === 'table' ? [i] : []));
  return [
    ...[select.where, select.having]
      .flatMap((e) => (e ? conjuncts(e) : []))
      .map((e) => windowFilterFeature(e, select) ?? filterFeature(e, resolve)),
    // The condition inside a computed column (SUM(CASE WHEN type = 'Meeting' …)).
    ...select.columns
      .flatMap((item) => innerConditions(item.expr))
      .map((e) => ({
        rank: 0,
        name: conditionWords(e).slice(0, 6),
        phrase: `computed where ${exprPhrase(e, resolve)}`,
      })),
    // The role a joined table plays (users as the last editor of posts, not their owner).
    ...tables.flatMap((item) => {
      const role = roleOf(item.name);
      return role
        ? [{ rank: 2, name: [...role.words], phrase: `${item.table} as the ${role.words.join(' ')} of ${role.table}` }]
        : [];
    }),
    ...orderFeatures(select.orderBy, select.limit, resolve),
    ...select.groupBy.map((e) => ({
      rank: 3,
      name: ['per', ...exprWords(e)],
      phrase: `per ${exprPhrase(e, resolve)}`,
    })),
    ...(select.distinct ? [{ rank: 3, name: ['distinct'], phrase: 'distinct rows' }] : []),
    ...select.columns.map((item) => ({
      rank: 4,
      // With the values of its inner conditions, in order: Marvel minus DC is not DC minus Marvel.
      name: [...exprWords(item.expr), ...innerConditions(item.expr).flatMap(conditionValues)].slice(0, 8),
      phrase: `returning ${itemPhrase(item, resolve)}`,
    })),
    ...tables.map(({ table }) => ({ rank: 5, name: ['from', ...words(table)], phrase: `from ${table}` })),
  ];
}

/** The conditions of CASE WHEN and of counted comparisons (SUM(x = 'M')) in an expression, outside subqueries. */
function innerConditions(expr: Expr): Expr[] {
  const found: Expr[] = [];
  JSON.stringify(expr, (key, value: unknown) => {
    const node = value as Expr | null;
    if (node && typeof node === 'object' && node.kind === 'case') found.push(...node.whens.map((w) => w.when));
    if (node && typeof node === 'object' && node.kind === 'aggregate' && node.arg && isComparison(node.arg))
      found.push(node.arg);
    return key === 'query' ? undefined : value;
  });
  return found;
}

function isComparison(expr: Expr): boolean {
  return expr.kind === 'binary' && expr.op in OPERATOR_WORDS;
}

/** An expression's name words; a one-word column (`id`, `name`) with its table: whose id? */
function exprWords(expr: Expr): string[] {
  const column = firstColumn(expr);
  const own = itemWords({ expr, alias: null, name: '' }, null);
  return column?.table && words(column.column).length === 1 ? [...own, 'of', ...words(column.table)] : own;
}

function conditionValues(condition: Expr): string[] {
  return condition.kind === 'binary' ? valueWords(condition.right) : [];
}

const OPERATOR_WORDS: Record<string, string[]> = {
  '=': [],
  IS: [],
  '!=': ['not'],
  'IS NOT': ['not'],
  '<': ['below'],
  '<=': ['at', 'most'],
  '>': ['above'],
  '>=': ['at', 'least'],
};

/** One conjunct of WHERE or HAVING. */
function filterFeature(condition: Expr, resolve: ColumnResolver): Feature {
  const columns = columnsOf(condition);
  if (hasPlaceholder(condition) && columns.length) {
    const { table, column } = columns[0];
    const operator =
      condition.kind === 'binary'
        ? (OPERATOR_WORDS[condition.op] ?? [])
        : condition.kind === 'in'
          ? ['in', 'list']
          : [];
    return {
      rank: 2,
      name: ['by', ...words(table ?? ''), ...words(column), ...operator],
      phrase: `where ${exprPhrase(condition, resolve)} (${columns.map((c) => (c.table ? `${c.table}.${c.column}` : c.column)).join(', ')})`,
    };
  }
  const extreme = extremeOf(condition);
  if (extreme) {
    const direction = extreme.max ? 'highest' : 'lowest';
    return {
      rank: 0,
      name: [direction, ...exprWords(extreme.of)],
      phrase: `with the ${direction} ${unarticled(exprPhrase(extreme.of, resolve))}`,
    };
  }
  return { rank: 0, name: conditionWords(condition).slice(0, 6), phrase: `where ${exprPhrase(condition, resolve)}` };
}

/**
 * `rn <= 2` over a derived table's `ROW_NUMBER() OVER (PARTITION BY c ORDER BY x DESC) AS rn`:
 * the top rows per group, worded by what the window ranks by ("top 2 by price per
 * category"), never by the window's own alias and number, which mean nothing to a caller.
 */
function windowFilterFeature(condition: Expr, select: SelectQuery): Feature | null {
  if (condition.kind !== 'binary' || !['=', '<=', '<'].includes(condition.op)) return null;
  const { left, right } = condition;
  if (left.kind !== 'column' || right.kind !== 'literal' || right.type !== 'integer') return null;
  const item = [select.from?.base, ...(select.from?.joins.map((j) => j.item) ?? [])].find(
    (i) => i?.kind === 'derived' && i.name === left.source,
  );
  const derived = item?.kind === 'derived' && item.query.kind === 'select' ? item.query : null;
  const window = derived?.columns.find((c) => c.name === left.column)?.expr;
  if (window?.kind !== 'window' || window.orderBy.length === 0) return null;
  const n = Number(right.value) - (condition.op === '<' ? 1 : 0);
  const by = window.orderBy[0];
  const per = window.partitionBy.length > 0 ? ['per', ...exprWords(window.partitionBy[0])] : [];
  const direction = by.direction === 'desc' ? 'highest' : 'lowest';
  // Ties share a RANK (top 1 may be several rows), not a ROW_NUMBER.
  const kind: Record<string, string[]> = {
    ROW_NUMBER: [condition.op === '=' && n !== 1 ? 'number' : 'top'],
    RANK: ['rank'],
    DENSE_RANK: ['dense', 'rank'],
    NTILE: ['tile'],
  };
  const name = [...(kind[window.name] ?? words(window.name)), String(n), 'by', ...exprWords(by.expr), ...per];
  const phrase = `${name.join(' ')} (${window.name} ordered by the ${direction} first)`;
  return { rank: 0, name, phrase };
}

/** `x = (SELECT MAX(…) …)`: rows holding the extreme value. */
function extremeOf(condition: Expr): { of: Expr; max: boolean } | null {
  if (condition.kind !== 'binary' || condition.op !== '=') return null;
  for (const [of, other] of [
    [condition.left, condition.right],
    [condition.right, condition.left],
  ]) {
    const sub = other.kind === 'subquery' && other.query.kind === 'select' ? other.query : null;
    const item = sub?.columns.length === 1 ? sub.columns[0].expr : null;
    if (item?.kind === 'aggregate' && (item.name === 'MAX' || item.name === 'MIN'))
      return { of, max: item.name === 'MAX' };
  }
  return null;
}

function conditionWords(condition: Expr): string[] {
  switch (condition.kind) {
    case 'binary':
      if (condition.op in OPERATOR_WORDS)
        return [...exprWords(condition.left), ...OPERATOR_WORDS[condition.op], ...valueWords(condition.right)];
      break;
    case 'isNull':
      return [condition.not ? 'with' : 'without', ...exprWords(condition.expr)];
    case 'like':
      return [
        ...exprWords(condition.expr),
        ...(condition.not ? ['not'] : []),
        'like',
        ...valueWords(condition.pattern),
      ];
    case 'in':
      return [
        ...exprWords(condition.expr),
        condition.not ? 'not' : 'in',
        ...(condition.list ?? []).flatMap(valueWords),
      ];
    case 'between':
      return [...exprWords(condition.expr), 'between', ...valueWords(condition.low), ...valueWords(condition.high)];
    case 'exists':
      return [condition.not ? 'without' : 'with', ...selects(condition.query).flatMap(tablesWords)];
    default:
      break;
  }
  return ['where', ...(columnsOf(condition)[0] ? words(columnsOf(condition)[0].column) : [])];
}

function valueWords(expr: Expr): string[] {
  if (expr.kind === 'literal') return words(String(expr.value ?? 'null'));
  if (expr.kind === 'subquery' && expr.query.kind === 'select' && expr.query.columns.length === 1)
    return exprWords(expr.query.columns[0].expr);
  return exprWords(expr);
}

function tablesWords(select: SelectQuery): string[] {
  return select.from?.base.kind === 'table' ? words(select.from.base.table) : [];
}

function orderFeatures(orderBy: OrderItem[], limit: Expr | null, resolve: ColumnResolver): Feature[] {
  const count = limit?.kind === 'literal' ? String(limit.value) : null;
  if (!orderBy.length) return count ? [{ rank: 1, name: ['first', count], phrase: `at most ${count} rows` }] : [];
  const first = orderBy[0];
  const what = unarticled(exprPhrase(first.expr, resolve));
  const which = exprWords(first.expr);
  const direction = first.direction === 'desc' ? 'highest' : 'lowest';
  if (count === '1') return [{ rank: 1, name: [direction, ...which], phrase: `the one with the ${direction} ${what}` }];
  if (count !== null)
    return [
      {
        rank: 1,
        name: [first.direction === 'desc' ? 'top' : 'bottom', count, 'by', ...which],
        phrase: `the ${count} with the ${direction} ${what}`,
      },
    ];
  return [
    { rank: 1, name: ['sorted', 'by', ...which, first.direction], phrase: `ordered by ${what}, ${direction} first` },
  ];
}

/** `the number of views` → number of views, to follow "the highest". */
function unarticled(phrase: string): string {
  return phrase.replace(/^the /i, '');
}

function columnsOf(expr: Expr): { table: string | null; column: string }[] {
  const found: { table: string | null; column: string }[] = [];
  JSON.stringify(expr, (key, value: unknown) => {
    const node = value as Partial<Extract<Expr, { kind: 'column' }>> | null;
    if (node && typeof node === 'object' && node.kind === 'column' && typeof node.column === 'string')
      found.push({ table: node.table ?? null, column: node.column });
    return key === 'query' ? undefined : value;
  });
  return found;
}

function hasPlaceholder(expr: Expr): boolean {
  let found = false;
  JSON.stringify(expr, (key, value: unknown) => {
    if (value && typeof value === 'object' && placeholderIn(value as Expr) !== null) found = true;
    return key === 'query' ? undefined : value;
  });
  return found;
}
