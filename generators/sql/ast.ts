/**
 * The normalized SQL AST: what the rest of the pipeline reasons about instead of
 * node-sql-parser's dialect-shaped output. Every name is resolved against the schema:
 * columns carry the FROM item they come from and their name in the schema's original case,
 * aliases are gone from expressions, double-quoted strings are either columns or text
 * literals (as SQLite decides), and literals keep both their SQLite type and raw text.
 * Plain JSON: it is hashed and cached like every stage output.
 */

export type LiteralType = 'integer' | 'real' | 'text' | 'null';

export interface LiteralExpr {
  kind: 'literal';
  type: LiteralType;
  /** Numbers for integer/real, strings for text, null for NULL. */
  value: number | string | null;
  /** The literal as written (`1.0`, `'abc'`), for REAL-ness and rendering. */
  raw: string;
}

export interface ColumnExpr {
  kind: 'column';
  /** The FROM item the column belongs to (its alias, else the table name as written). */
  source: string;
  /** Underlying table in the schema's case; null when the FROM item is a derived table. */
  table: string | null;
  /** The column name in the schema's case (or the derived table's output name). */
  column: string;
  /** 0 = the query's own FROM; n > 0 = the FROM of the n-th enclosing query (correlation). */
  depth: number;
}

export type BinaryOp =
  '+' | '-' | '*' | '/' | '%' | '||' | '=' | '!=' | '<' | '<=' | '>' | '>=' | 'AND' | 'OR' | 'IS' | 'IS NOT';

export interface BinaryExpr {
  kind: 'binary';
  op: BinaryOp;
  left: Expr;
  right: Expr;
}

export interface UnaryExpr {
  kind: 'unary';
  op: '-' | '+' | 'NOT';
  operand: Expr;
}

/** A scalar function call; `name` upper-cased (`SUBSTR`, `STRFTIME`, ...). IIF is a `case`. */
export interface FunctionExpr {
  kind: 'function';
  name: string;
  args: Expr[];
}

export type AggregateName = 'COUNT' | 'SUM' | 'AVG' | 'MIN' | 'MAX' | 'TOTAL' | 'GROUP_CONCAT';

export interface AggregateExpr {
  kind: 'aggregate';
  name: AggregateName;
  distinct: boolean;
  /** `COUNT(*)`: `star` true and no argument. */
  star: boolean;
  arg: Expr | null;
  /** Extra arguments (GROUP_CONCAT's separator). */
  extraArgs: Expr[];
}

/**
 * A window function call (`RANK() OVER (...)`, `SUM(x) OVER (PARTITION BY ...)`), its
 * names resolved like any expression's. A named window (`OVER w ... WINDOW w AS (...)`)
 * is replaced by its definition.
 */
export interface WindowExpr {
  kind: 'window';
  /** Upper-cased (`RANK`, `ROW_NUMBER`, `SUM`, `LAG`, ...). */
  name: string;
  args: Expr[];
  /** `COUNT(*) OVER (...)`. */
  star: boolean;
  distinct: boolean;
  partitionBy: Expr[];
  orderBy: WindowOrderItem[];
  /** The frame as SQLite reads it (`ROWS BETWEEN 2 PRECEDING AND CURRENT ROW`); null: the default frame. */
  frame: string | null;
}

export interface WindowOrderItem {
  expr: Expr;
  direction: 'asc' | 'desc';
  nulls: 'first' | 'last' | null;
}

export interface CaseExpr {
  kind: 'case';
  /** `CASE x WHEN ...` is normalized to `CASE WHEN x = ... `, so there is no operand. */
  whens: { when: Expr; then: Expr }[];
  else: Expr | null;
}

export interface CastExpr {
  kind: 'cast';
  expr: Expr;
  /** Storage class the cast targets by SQLite's affinity rules. */
  to: 'integer' | 'real' | 'text' | 'numeric' | 'blob';
  /** The type name as written (`REAL`, `UNSIGNED`, ...). */
  typeName: string;
}

export interface InExpr {
  kind: 'in';
  expr: Expr;
  not: boolean;
  list: Expr[] | null;
  subquery: Query | null;
}

export interface BetweenExpr {
  kind: 'between';
  expr: Expr;
  not: boolean;
  low: Expr;
  high: Expr;
}

export interface LikeExpr {
  kind: 'like';
  op: 'LIKE' | 'GLOB';
  expr: Expr;
  pattern: Expr;
  not: boolean;
}

export interface IsNullExpr {
  kind: 'isNull';
  expr: Expr;
  not: boolean;
}

export interface ExistsExpr {
  kind: 'exists';
  not: boolean;
  query: Query;
}

export interface SubqueryExpr {
  kind: 'subquery';
  query: Query;
}

export type Expr =
  | LiteralExpr
  | ColumnExpr
  | BinaryExpr
  | UnaryExpr
  | FunctionExpr
  | AggregateExpr
  | WindowExpr
  | CaseExpr
  | CastExpr
  | InExpr
  | BetweenExpr
  | LikeExpr
  | IsNullExpr
  | ExistsExpr
  | SubqueryExpr;

export interface SelectItem {
  expr: Expr;
  /** Alias as written, null when none. */
  alias: string | null;
  /** The result column name SQLite reports (alias, column name, or the expression text). */
  name: string;
}

export interface TableFromItem {
  kind: 'table';
  /** The name expressions use: the alias, else the table name as written. */
  name: string;
  /** Table name in the schema's case. */
  table: string;
}

export interface DerivedFromItem {
  kind: 'derived';
  name: string;
  query: Query;
  /**
   * Absent but for a recursive WITH table (`WITH RECURSIVE t(id) AS (<initial SELECT> UNION
   * [ALL] <recursive SELECT>)`, or a WITH table whose body names itself: SQLite makes it
   * recursive without the keyword):
   * - `'table'`: a reference to the table; `query` is the set query `initial UNION [ALL]
   *   recursive` (op `union` or `union all`, its ORDER BY/LIMIT the table's), and the
   *   table's rows are SQLite's fixpoint of it, not the union of its members as written;
   * - `'self'`: the recursive SELECT's own reference to the table (in its FROM, exactly
   *   once): the rows of the previous round. Its `query` is the initial SELECT, with the
   *   table's column names: the columns and what they hold, not the rows read.
   * A consumer that evaluates or compiles queries must refuse either (the SLOT decomposer:
   * `unsupported:recursive_cte`); one that reads names, columns and values may read
   * `query` as any derived table's.
   */
  recursive?: 'table' | 'self';
}

export type FromItem = TableFromItem | DerivedFromItem;

export type JoinType = 'inner' | 'left' | 'right' | 'full' | 'cross';

export interface Join {
  type: JoinType;
  item: FromItem;
  /** ON condition; USING is normalized to ON equalities; null for a cross/comma join. */
  on: Expr | null;
}

export interface FromClause {
  base: FromItem;
  joins: Join[];
}

export interface OrderItem {
  expr: Expr;
  direction: 'asc' | 'desc';
  /** Index into the SELECT list when the key is an ordinal or a result alias. */
  selectIndex: number | null;
}

export interface SelectQuery {
  kind: 'select';
  distinct: boolean;
  columns: SelectItem[];
  from: FromClause | null;
  where: Expr | null;
  groupBy: Expr[];
  having: Expr | null;
  orderBy: OrderItem[];
  limit: Expr | null;
  offset: Expr | null;
  /** The query (or one nested in it) references a column of an enclosing query. */
  correlated: boolean;
}

export type SetOperator = 'union' | 'union all' | 'intersect' | 'except';

export interface SetQuery {
  kind: 'set';
  op: SetOperator;
  left: Query;
  right: Query;
  orderBy: OrderItem[];
  limit: Expr | null;
  offset: Expr | null;
  correlated: boolean;
}

export type Query = SelectQuery | SetQuery;

/** The parse stage's output. */
export interface NormalizedQuery {
  sql: string;
  /** node-sql-parser dialect that parsed it (`sqlite`, or a faithful fallback). */
  dialect: string;
  query: Query;
  /** The recursive WITH tables the query reads (DerivedFromItem `recursive`), by name; absent when none. */
  recursive?: string[];
}

/** A query's output column names: a compound's are its first member's. */
export function outputNames(query: Query): string[] {
  return query.kind === 'select' ? query.columns.map((c) => c.name) : outputNames(query.left);
}

/** The expressions directly inside `expr`, not those of its subqueries (their columns are their own). */
export function children(expr: Expr): Expr[] {
  switch (expr.kind) {
    case 'binary':
      return [expr.left, expr.right];
    case 'unary':
      return [expr.operand];
    case 'function':
      return expr.args;
    case 'aggregate':
      return expr.arg ? [expr.arg] : [];
    case 'case':
      return [...expr.whens.flatMap((w) => [w.when, w.then]), ...(expr.else ? [expr.else] : [])];
    case 'cast':
      return [expr.expr];
    case 'in':
      return [expr.expr, ...(expr.list ?? [])];
    case 'between':
      return [expr.expr, expr.low, expr.high];
    case 'like':
      return [expr.expr, expr.pattern];
    case 'isNull':
      return [expr.expr];
    case 'window':
      return [...expr.args, ...expr.partitionBy, ...expr.orderBy.map((o) => o.expr)];
    default:
      return [];
  }
}
