import type { DatabaseInfo } from '../../core/model.js';
import { children, type Expr, type FromItem, type Query, type SelectQuery } from './ast.js';
import { parseQuery, sameExpr } from './normalize.js';

/**
 * Whether a query's answer, compared as verifiers/compare.ts compares answers, provably does
 * not depend on the order SQLite reads rows in: then running it again with every scan
 * reversed (the `reordered` variant) can only give the same answer, and need not be run.
 * Relational operators — joins, filters, grouping, DISTINCT, set operations — do not look
 * at row order; what does is listed here, and any of it, anywhere in the query, answers no:
 * - ORDER BY (its ties come out in scan order), LIMIT and OFFSET (which rows they keep);
 * - a scalar subquery (SQLite takes its first row), but for an aggregate without GROUP BY
 *   (its one row);
 * - a column neither grouped nor aggregated in an aggregate query (SQLite takes it from
 *   some row of the group);
 * - order-sensitive aggregates (GROUP_CONCAT, JSON group arrays and objects) and window
 *   functions but the rank family (RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST: tied rows
 *   share their value); nondeterministic functions;
 * - values equal but spelled differently, where one stands for its group (DISTINCT,
 *   GROUP BY, MIN/MAX and set operations keep the first seen): a column with a collation
 *   other than BINARY ('Bob' = 'bob' under NOCASE). Numbers equal across INTEGER and REAL
 *   (1 and 1.0) read back as the same number.
 * - a FROM item that is not a table of the schema (a view has SQL of its own).
 * Float sums (SUM, AVG, TOTAL) do depend on the order of addition, in their last bits;
 * SQLite sums with compensation, far inside the comparison's relative tolerance (1e-6).
 * A query that does not parse is not proven anything: the caller runs it.
 *
 * The answer to that is `compared === 'none'` of rowOrderDependence, which also says:
 * `ordering`, the answer depends on row order only through the query's own top-level ORDER
 * BY, LIMIT and OFFSET (rows tied on the sort keys: where a tie probe finds none,
 * generators/sql/ties.ts, the answer is fixed); `anywhere`, or not proven otherwise.
 * `compared` reads the answer as the comparison does (float sums within its tolerance);
 * `exact`, to the last bit, where a sum of anything but integer literals and counts (SUM,
 * AVG, TOTAL) may round otherwise in another order.
 */
export function rowOrderDependence(
  sql: string,
  db: DatabaseInfo,
): { compared: RowOrderDependence; exact: RowOrderDependence } {
  const parsed = parseQuery(sql, db);
  if (!parsed.ok) return { compared: 'anywhere', exact: 'anywhere' };
  const query = parsed.value.query;
  const of = (rules: Rules): RowOrderDependence => {
    if (!rowsIgnoreOrder(query, rules)) return 'anywhere';
    return isOrdering(query) ? 'ordering' : 'none';
  };
  const compared = of({ db, exact: false });
  return { compared, exact: compared === 'anywhere' ? 'anywhere' : of({ db, exact: true }) };
}

/** Where row order can reach an answer (rowOrderDependence). */
export type RowOrderDependence = 'none' | 'ordering' | 'anywhere';

interface Rules {
  db: DatabaseInfo;
  /** Float sums count as order-sensitive (rowOrderDependence's `exact`). */
  exact: boolean;
}

function answerIgnoresRowOrder(query: Query, rules: Rules): boolean {
  return !isOrdering(query) && rowsIgnoreOrder(query, rules);
}

/** The query's rows before its own ORDER BY, LIMIT and OFFSET pick and order them. */
function rowsIgnoreOrder(query: Query, rules: Rules): boolean {
  if (query.kind === 'set')
    return answerIgnoresRowOrder(query.left, rules) && answerIgnoresRowOrder(query.right, rules);
  return selectIgnoresOrder(query, rules);
}

function isOrdering(query: Query): boolean {
  return query.orderBy.length > 0 || query.limit !== null || query.offset !== null;
}

const ORDER_SENSITIVE_FUNCTIONS: ReadonlySet<string> = new Set([
  'GROUP_CONCAT',
  'STRING_AGG',
  'JSON_GROUP_ARRAY',
  'JSON_GROUP_OBJECT',
  'JSONB_GROUP_ARRAY',
  'JSONB_GROUP_OBJECT',
  'RANDOM',
  'RANDOMBLOB',
  'CHANGES',
  'TOTAL_CHANGES',
  'LAST_INSERT_ROWID',
]);

/** Window functions whose value is the same for rows tied on the window's order: ties share a rank. */
const TIE_BLIND_WINDOWS: ReadonlySet<string> = new Set(['RANK', 'DENSE_RANK', 'PERCENT_RANK', 'CUME_DIST']);

/** Aggregates that add floats, whose last bits depend on the order of addition. */
const FLOAT_SUMS: ReadonlySet<string> = new Set(['SUM', 'AVG', 'TOTAL']);

function selectIgnoresOrder(select: SelectQuery, rules: Rules): boolean {
  const from = select.from ? [select.from.base, ...select.from.joins.map((j) => j.item)] : [];
  if (!from.every((item) => fromItemIgnoresOrder(item, rules))) return false;
  const expressions = [
    ...select.columns.map((c) => c.expr),
    ...(select.from?.joins.flatMap((j) => (j.on ? [j.on] : [])) ?? []),
    ...(select.where ? [select.where] : []),
    ...select.groupBy,
    ...(select.having ? [select.having] : []),
  ];
  if (!expressions.every((e) => exprIgnoresOrder(e, rules))) return false;
  return !isAggregateQuery(select) || everyColumnGroupedOrAggregated(select);
}

function fromItemIgnoresOrder(item: FromItem, rules: Rules): boolean {
  if (item.kind === 'derived') return answerIgnoresRowOrder(item.query, rules);
  const table = rules.db.tables.find((t) => t.name === item.table);
  return table !== undefined && table.columns.every((c) => c.collation === undefined);
}

function exprIgnoresOrder(expr: Expr, rules: Rules): boolean {
  switch (expr.kind) {
    case 'subquery':
      // SQLite takes the first row: the only row of an aggregate without GROUP BY.
      return isOneRowAggregate(expr.query) && answerIgnoresRowOrder(expr.query, rules);
    case 'window':
      if (!TIE_BLIND_WINDOWS.has(expr.name) || expr.frame !== null) return false;
      break;
    case 'exists':
      return answerIgnoresRowOrder(expr.query, rules);
    case 'in':
      if (expr.subquery && !answerIgnoresRowOrder(expr.subquery, rules)) return false;
      break;
    case 'aggregate':
      if (rules.exact && FLOAT_SUMS.has(expr.name) && !(expr.arg && integerValued(expr.arg))) return false;
      if (ORDER_SENSITIVE_FUNCTIONS.has(expr.name)) return false;
      break;
    case 'function':
      if (ORDER_SENSITIVE_FUNCTIONS.has(expr.name)) return false;
      break;
    default:
      break;
  }
  return children(expr).every((child) => exprIgnoresOrder(child, rules));
}

function isOneRowAggregate(query: Query): boolean {
  return query.kind === 'select' && query.groupBy.length === 0 && query.columns.some((c) => containsAggregate(c.expr));
}

/** Integers whatever the data: integer literals, counts, and CASE, +, -, * of them (SUM(CASE WHEN … THEN 1 ELSE 0 END)). */
function integerValued(expr: Expr): boolean {
  switch (expr.kind) {
    case 'literal':
      return expr.type === 'integer';
    case 'aggregate':
      return expr.name === 'COUNT';
    case 'case':
      return expr.whens.every((w) => integerValued(w.then)) && (expr.else === null || integerValued(expr.else));
    case 'binary':
      return (
        (expr.op === '+' || expr.op === '-' || expr.op === '*') && integerValued(expr.left) && integerValued(expr.right)
      );
    default:
      return false;
  }
}

function isAggregateQuery(select: SelectQuery): boolean {
  return select.groupBy.length > 0 || select.having !== null || select.columns.some((c) => containsAggregate(c.expr));
}

function containsAggregate(expr: Expr): boolean {
  return expr.kind === 'aggregate' || children(expr).some(containsAggregate);
}

/** Every column of this query's own FROM, outside aggregates, is (inside) a GROUP BY term, in its columns and HAVING. */
function everyColumnGroupedOrAggregated(select: SelectQuery): boolean {
  const grouped = (expr: Expr): boolean => {
    if (select.groupBy.some((g) => sameExpr(g, expr))) return true;
    if (expr.kind === 'aggregate') return true;
    if (expr.kind === 'column') return expr.depth > 0;
    // A subquery that reads this query's columns reads them from some row of the group.
    const nested =
      expr.kind === 'subquery' || expr.kind === 'exists' ? expr.query : expr.kind === 'in' ? expr.subquery : null;
    if (nested?.correlated) return false;
    return children(expr).every(grouped);
  };
  return [...select.columns.map((c) => c.expr), ...(select.having ? [select.having] : [])].every(grouped);
}
