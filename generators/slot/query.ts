import {
  outputNames,
  type ExistsExpr,
  type InExpr,
  type Query,
  type SelectQuery,
  type SetQuery,
  type SubqueryExpr,
} from '../sql/ast.js';
import { existsJoin, inJoin, scalarJoin, type RowSource } from './decorrelation.js';
import { SequenceBuilder, unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { ExpressionCompiler, collectAggregates, containsWindow, signature, type ScalarContext } from './expressions.js';
import { fromPass } from './from.js';
import { groupPass } from './group.js';
import { sortPass } from './order.js';
import { extremeRow, hasAggregates, page, projectRows, projectScalars, selectKeys } from './select.js';
import { filterPass } from './where.js';

/** A query's first row: a nested SELECT used as a value means that (SQL scalar subquery). */
function firstRow(query: Query): Query {
  if (query.kind === 'set' || query.offset !== null) return query;
  const one = { kind: 'literal', type: 'integer', value: 1, raw: '1' } as const;
  if (
    query.limit === null ||
    (query.limit.kind === 'literal' && query.limit.type === 'integer' && (query.limit.value as number) > 1)
  ) {
    return { ...query, limit: one };
  }
  return query;
}

/**
 * One SELECT through the clause passes, in the paper's order: FROM (initialize) → WHERE
 * (filters) → GROUP BY + aggregates → HAVING → ORDER BY (sorts) → SELECT + LIMIT
 * (retrieves). Nested SELECTs run through the same passes as sub-sequences, compiled once
 * each, whose outputs the outer calls reference as `$LABEL$`.
 */
export class QueryCompiler implements RowSource {
  readonly ctx: PassContext;
  private readonly values = new Map<string, string>();
  private readonly lists = new Map<string, string>();

  constructor(readonly b: SequenceBuilder) {
    this.ctx = {
      b,
      exprs: new ExpressionCompiler(b, this),
      queries: this,
    };
  }

  /** The answer labels of the top-level query. */
  answer(query: Query): string[] {
    return this.compile(query);
  }

  value(query: Query): string {
    return this.memo(this.values, query, () => this.single(this.compile(this.nested(query))));
  }

  list(query: Query): string {
    return this.memo(this.lists, query, () => this.single(this.compile(this.nested(query))));
  }

  table(query: Query, name: string, joined = false): TableRef {
    const nested = this.nested(query);
    const { table, keys } = nested.kind === 'set' ? this.compoundTable(nested) : this.selectTable(nested, joined);
    const exprs = new Map<string, string>();
    outputNames(nested).forEach((column, i) => {
      exprs.set(signature({ kind: 'column', source: name, table: null, column, depth: 0 }), keys[i]);
    });
    return { ...table, exprs };
  }

  /**
   * A SELECT's rows as a plain table, and the keys of its output columns. One aggregate row
   * is a table only as the row a MIN/MAX picks, and only joined by an equality (`joined`),
   * which the NULL row SQL gives over no rows could not match either.
   */
  private selectTable(select: SelectQuery, joined = false): { table: TableRef; keys: string[] } {
    if (select.groupBy.length === 0 && hasAggregates(select)) {
      if (!joined || select.having || select.limit || select.offset || select.distinct)
        unsupported('derived_aggregate', 'a derived table that is one aggregate row');
      const [row, keys] = selectKeys(this.ctx, extremeRow(this.ctx, this.whereRows(select), select), select);
      return { table: row, keys };
    }
    const t = this.rows(select, derivedRows(select));
    const [t1, keys] = selectKeys(this.ctx, t, select);
    if (!select.distinct && !t1.memberKeys) return { table: t1, keys };
    // A grouped table would aggregate per group: outer queries need its rows as a plain
    // table. One row per group: the distinct combinations of the outputs and group keys.
    const groupKeys = t1.memberKeys ? select.groupBy.map((e) => this.ctx.exprs.key(t1, e)[1]) : [];
    const uniqueKeys = [...new Set([...keys, ...groupKeys])];
    // Joined, it must be a table even with one key (join_data joins tables, not lists).
    const label = this.b.unique(t1, uniqueKeys, joined);
    return { table: { label, keys: uniqueKeys, memberKeys: null, exprs: new Map() }, keys };
  }

  /**
   * A compound SELECT as a derived table: each member's rows as a table (selectTable),
   * compounded on the members' output columns (combine_data's key lists), so that UNION
   * ALL keeps every row, however many columns.
   */
  private compoundTable(q: SetQuery): { table: TableRef; keys: string[] } {
    this.b.requireExtended(q.op.replace(' ', '_'), `${q.op.toUpperCase()} of SELECTs`);
    if (q.orderBy.length > 0 || q.limit !== null || q.offset !== null)
      unsupported('compound_order', 'ORDER BY or LIMIT of a compound SELECT in a derived table');
    const side = (m: Query) => (m.kind === 'set' ? this.compoundTable(m) : this.selectTable(m));
    const left = side(q.left);
    const right = side(q.right);
    if (left.keys.length !== right.keys.length)
      unsupported('compound_columns', 'compound SELECT members with different column counts');
    const table = this.b.combine(left.table, right.table, q.op.replace(' ', '_'), { a: left.keys, b: right.keys });
    return { table, keys: table.keys };
  }

  exists(t: TableRef, e: ExistsExpr): TableRef {
    return existsJoin(this, t, e);
  }

  inSubquery(t: TableRef, e: InExpr): TableRef {
    return inJoin(this, t, e);
  }

  correlatedValue(t: TableRef, expr: SubqueryExpr): [TableRef, string] {
    return scalarJoin(this, t, expr);
  }

  private memo(cache: Map<string, string>, query: Query, make: () => string): string {
    const sig = JSON.stringify(query);
    let label = cache.get(sig);
    if (label === undefined) {
      label = make();
      cache.set(sig, label);
    }
    return label;
  }

  private nested(query: Query): Query {
    this.b.requireExtended('subquery', 'a nested SELECT');
    if (query.correlated) unsupported('correlated_subquery', 'a nested SELECT that refers to the enclosing query');
    return query;
  }

  private single(labels: string[]): string {
    if (labels.length !== 1) unsupported('subquery_columns', `a nested SELECT with ${labels.length} columns`);
    return labels[0];
  }

  private compile(query: Query): string[] {
    if (query.kind === 'set') return this.compound(query);
    const q = query;
    if (q.from === null) return this.withoutFrom(q);
    const grouped = q.groupBy.length > 0;
    if (!grouped && q.having) unsupported('having_without_group', 'HAVING without GROUP BY');
    if (!grouped && hasAggregates(q)) {
      return projectScalars(this.ctx, this.whereRows(q), q);
    }
    return projectRows(this.ctx, this.rows(q), q);
  }

  /**
   * `SELECT (SELECT ...) - (SELECT ...)`: one row of values computed from nested SELECTs
   * (calculate over their outputs). A nested SELECT used as a whole column is its first row.
   */
  private withoutFrom(q: SelectQuery): string[] {
    if (q.where || q.groupBy.length > 0 || q.having || q.orderBy.length > 0 || q.limit || q.offset) {
      unsupported('no_from', 'a SELECT without FROM with clauses besides its columns');
    }
    const scalar: ScalarContext = { table: null, memo: new Map() };
    return q.columns.map((c) => {
      if (c.expr.kind === 'subquery') return this.value(firstRow(c.expr.query));
      const value = this.ctx.exprs.scalar(scalar, c.expr);
      if (typeof value !== 'string' || !/^\$.+\$$/.test(value))
        unsupported('constant_select', 'a constant in the SELECT list');
      return value.slice(1, -1);
    });
  }

  /**
   * UNION / UNION ALL / INTERSECT / EXCEPT: each member SELECT's rows projected onto its
   * columns (a list, or for several columns the table of their distinct combinations, which
   * a duplicate-removing operator does not tell apart), combined left to right by
   * combine_data; the compound's ORDER BY / LIMIT then sort and page the combined rows.
   */
  private compound(q: SetQuery): string[] {
    // UNION ALL keeps duplicate rows, which one list per column cannot carry past a second
    // column: those compound the members' rows instead (compoundTable).
    const combined = keepsRowsOfSeveralColumns(q)
      ? this.compoundTable({ ...q, orderBy: [], limit: null, offset: null }).table
      : this.combined(q);
    const { limit, offset } = page(q);
    if (q.orderBy.length === 0 && limit === null && offset === null) return [combined.label];
    let t = combined;
    for (let i = q.orderBy.length - 1; i >= 0; i--) {
      const index = q.orderBy[i].selectIndex;
      if (index === null) unsupported('compound_order', 'ORDER BY of a compound SELECT that is not one of its columns');
      t = this.b.sort(t, combined.keys[index], q.orderBy[i].direction === 'asc');
    }
    return t.keys.map((key) => this.b.retrieve(t, key, { distinct: false, limit, offset }));
  }

  private combined(q: SetQuery): TableRef {
    this.b.requireExtended(q.op.replace(' ', '_'), `${q.op.toUpperCase()} of SELECTs`);
    const member = (m: Query): TableRef => (m.kind === 'set' ? this.combined(m) : this.member(m));
    const left = member(q.left);
    const right = member(q.right);
    if (left.keys.length !== right.keys.length)
      unsupported('compound_columns', 'compound SELECT members with different column counts');
    return this.b.combine(left, right, q.op.replace(' ', '_'));
  }

  /**
   * One member of a compound SELECT as a list (one column) or the table of its distinct rows
   * (several: a compound that removes duplicates does not tell them apart).
   */
  private member(q: SelectQuery): TableRef {
    if (q.groupBy.length === 0 && hasAggregates(q))
      unsupported('compound_aggregate', 'an aggregate SELECT in a compound SELECT');
    const [t, keys] = selectKeys(this.ctx, this.rows(q), q);
    if (new Set(keys).size !== keys.length)
      unsupported('compound_columns', 'a compound SELECT member with a repeated column');
    if (keys.length === 1) {
      const label = this.b.retrieve(t, keys[0], { distinct: q.distinct, limit: null, offset: null });
      return { label, keys, memberKeys: null, exprs: new Map() };
    }
    return { label: this.b.unique(t, keys), keys, memberKeys: null, exprs: new Map() };
  }

  /** FROM + WHERE. */
  whereRows(q: SelectQuery): TableRef {
    const { table, conditions } = fromPass(this.ctx, q);
    let t = table;
    for (const condition of conditions) t = filterPass(this.ctx, t, condition);
    return filterPass(this.ctx, t, q.where);
  }

  /** The rows a non-aggregate (or grouped) query projects from: through ORDER BY (and a derived table's LIMIT). */
  rows(q: SelectQuery, limited?: { limit: number | null; offset: number }): TableRef {
    // Windows see the rows before LIMIT; the select list is computed after sortPass applied it.
    const windowed = q.columns.some((c) => containsWindow(c.expr));
    if (limited && windowed) unsupported('window_function', 'a window function beside LIMIT in a derived table');
    // Without ORDER BY, SQLite returns a window's rows in the window's own order, which the
    // query does not name: the rows a LIMIT keeps are that order's, no table order's.
    if (windowed && q.orderBy.length === 0 && (q.limit !== null || q.offset !== null))
      unsupported('window_function', 'LIMIT over the rows of a window function without ORDER BY');
    let t = this.whereRows(q);
    if (q.groupBy.length > 0) t = groupPass(this.ctx, t, q);
    else if (q.orderBy.some((o) => collectAggregates(o.expr).length > 0)) {
      unsupported('aggregate_order_without_group', 'ORDER BY an aggregate without GROUP BY');
    }
    page(q);
    return sortPass(this.ctx, t, q.orderBy, limited);
  }
}

function keepsRowsOfSeveralColumns(q: Query): boolean {
  if (q.kind === 'select') return false;
  const several = outputNames(q).length > 1;
  return (q.op === 'union all' && several) || keepsRowsOfSeveralColumns(q.left) || keepsRowsOfSeveralColumns(q.right);
}

/**
 * The rows a derived table's LIMIT/OFFSET keeps, for the sort of its ORDER BY (undefined:
 * all). Without ORDER BY the rows would be the first in SQLite's scan order, which the
 * query does not determine: refused. After DISTINCT (not GROUP BY, whose groups are the
 * sorted rows) the limit counts distinct rows, which a sort of the rows cannot: refused.
 * LIMIT 0 keeps no row, which sort_data's limit (0 = all) cannot say; a negative LIMIT
 * is no limit and a negative OFFSET none, as in SQLite.
 */
function derivedRows(q: SelectQuery): { limit: number | null; offset: number } | undefined {
  const { limit, offset } = page(q);
  const rows = { limit: limit !== null && limit >= 0 ? limit : null, offset: Math.max(offset ?? 0, 0) };
  if (rows.limit === null && rows.offset === 0) return undefined;
  if (q.orderBy.length === 0)
    unsupported('derived_limit', 'LIMIT in a derived table without ORDER BY (rows in scan order)');
  if (q.distinct && q.groupBy.length === 0) unsupported('derived_limit', 'LIMIT after DISTINCT in a derived table');
  if (rows.limit === 0) unsupported('derived_limit', 'LIMIT 0 in a derived table');
  return rows;
}
