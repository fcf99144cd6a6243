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
 * - a scalar subquery (SQLite takes its first row);
 * - a column neither grouped nor aggregated in an aggregate query (SQLite takes it from
 *   some row of the group);
 * - order-sensitive aggregates (GROUP_CONCAT, JSON group arrays and objects) and window
 *   functions; nondeterministic functions;
 * - values equal but spelled differently, where one stands for its group (DISTINCT,
 *   GROUP BY, MIN/MAX and set operations keep the first seen): a column with a collation
 *   other than BINARY ('Bob' = 'bob' under NOCASE). Numbers equal across INTEGER and REAL
 *   (1 and 1.0) read back as the same number.
 * - a FROM item that is not a table of the schema (a view has SQL of its own).
 * Float sums (SUM, AVG, TOTAL) do depend on the order of addition, in their last bits;
 * SQLite sums with compensation, far inside the comparison's relative tolerance (1e-6).
 * A query that does not parse is not proven anything: the caller runs it.
 */
export function sqlIgnoresRowOrder(sql: string, db: DatabaseInfo): boolean {
  return rowOrderDependence(sql, db) === 'none';
}

/**
 * Where a query's answer may depend on the order rows are read in: `none` (see above);
 * `ordering`, only through its own top-level ORDER BY, LIMIT and OFFSET (rows tied on the
 * sort keys: where a tie probe finds none, generators/sql/ties.ts, the answer is fixed);
 * `anywhere`, or not proven otherwise.
 */
export function rowOrderDependence(sql: string, db: DatabaseInfo): 'none' | 'ordering' | 'anywhere' {
  const parsed = parseQuery(sql, db);
  if (!parsed.ok) return 'anywhere';
  const query = parsed.value.query;
  const rows =
    query.kind === 'set'
      ? answerIgnoresRowOrder(query.left, db) && answerIgnoresRowOrder(query.right, db)
      : selectIgnoresOrder(query, db);
  if (!rows) return 'anywhere';
  return query.orderBy.length > 0 || query.limit !== null || query.offset !== null ? 'ordering' : 'none';
}

function answerIgnoresRowOrder(query: Query, db: DatabaseInfo): boolean {
  if (query.orderBy.length > 0 || query.limit !== null || query.offset !== null) return false;
  if (query.kind === 'set') return answerIgnoresRowOrder(query.left, db) && answerIgnoresRowOrder(query.right, db);
  return selectIgnoresOrder(query, db);
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

function selectIgnoresOrder(select: SelectQuery, db: DatabaseInfo): boolean {
  const from = select.from ? [select.from.base, ...select.from.joins.map((j) => j.item)] : [];
  if (!from.every((item) => fromItemIgnoresOrder(item, db))) return false;
  const expressions = [
    ...select.columns.map((c) => c.expr),
    ...(select.from?.joins.flatMap((j) => (j.on ? [j.on] : [])) ?? []),
    ...(select.where ? [select.where] : []),
    ...select.groupBy,
    ...(select.having ? [select.having] : []),
  ];
  if (!expressions.every((e) => exprIgnoresOrder(e, db))) return false;
  return !isAggregateQuery(select) || everyColumnGroupedOrAggregated(select);
}

function fromItemIgnoresOrder(item: FromItem, db: DatabaseInfo): boolean {
  if (item.kind === 'derived') return answerIgnoresRowOrder(item.query, db);
  const table = db.tables.find((t) => t.name === item.table);
  return table !== undefined && table.columns.every((c) => c.collation === undefined);
}

function exprIgnoresOrder(expr: Expr, db: DatabaseInfo): boolean {
  switch (expr.kind) {
    case 'subquery':
    case 'window':
      return false;
    case 'exists':
      return answerIgnoresRowOrder(expr.query, db);
    case 'in':
      if (expr.subquery && !answerIgnoresRowOrder(expr.subquery, db)) return false;
      break;
    case 'aggregate':
    case 'function':
      if (ORDER_SENSITIVE_FUNCTIONS.has(expr.name)) return false;
      break;
    default:
      break;
  }
  return children(expr).every((child) => exprIgnoresOrder(child, db));
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
