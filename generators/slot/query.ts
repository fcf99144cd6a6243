import type { Query, SelectQuery } from '../sql/ast.js';
import { SequenceBuilder, unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { ExpressionCompiler, collectAggregates, signature } from './expressions.js';
import { fromPass } from './from.js';
import { groupPass } from './group.js';
import { sortPass } from './order.js';
import { hasAggregates, page, projectRows, projectScalars, selectKeys } from './select.js';
import { filterPass } from './where.js';

/**
 * One SELECT through the clause passes, in the paper's order: FROM (initialize) → WHERE
 * (filters) → GROUP BY + aggregates → HAVING → ORDER BY (sorts) → SELECT + LIMIT
 * (retrieves). Nested SELECTs run through the same passes as sub-sequences, compiled once
 * each, whose outputs the outer calls reference as `$LABEL$`.
 */
export class QueryCompiler {
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
    return this.compile(query, 'answer');
  }

  value(query: Query): string {
    return this.memo(this.values, query, () => this.single(this.compile(this.nested(query), 'value')));
  }

  list(query: Query): string {
    return this.memo(this.lists, query, () => this.single(this.compile(this.nested(query), 'list')));
  }

  table(query: Query, name: string): TableRef {
    const select = this.plain(this.nested(query));
    if (select.groupBy.length === 0 && hasAggregates(select)) unsupported('derived_aggregate', 'a derived table that is one aggregate row');
    if (select.limit !== null || select.offset !== null) unsupported('derived_limit', 'LIMIT in a derived table');
    const t = this.rows(select);
    const [t1, keys] = selectKeys(this.ctx, t, select);
    const exprs = new Map<string, string>();
    select.columns.forEach((c, i) => {
      exprs.set(signature({ kind: 'column', source: name, table: null, column: c.name, depth: 0 }), keys[i]);
    });
    if (!select.distinct && !t1.memberKeys) return { ...t1, exprs };
    // A grouped table would aggregate per group: outer queries need its rows as a plain
    // table. One row per group: the distinct combinations of the outputs and group keys.
    const groupKeys = t1.memberKeys ? select.groupBy.map((e) => this.ctx.exprs.key(t1, e)[1]) : [];
    const uniqueKeys = [...new Set([...keys, ...groupKeys])];
    const label = this.b.unique(t1, uniqueKeys);
    return { label, keys: uniqueKeys, memberKeys: null, exprs };
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

  private plain(query: Query): SelectQuery {
    if (query.kind === 'set') unsupported(query.op.replace(' ', '_'), `${query.op.toUpperCase()} of SELECTs`);
    return query;
  }

  private compile(query: Query, _mode: 'answer' | 'value' | 'list'): string[] {
    const q = this.plain(query);
    const grouped = q.groupBy.length > 0;
    if (!grouped && q.having) unsupported('having_without_group', 'HAVING without GROUP BY');
    if (!grouped && hasAggregates(q)) {
      const { table } = this.whereRows(q);
      return projectScalars(this.ctx, table, q);
    }
    return projectRows(this.ctx, this.rows(q), q);
  }

  /** FROM + WHERE. */
  private whereRows(q: SelectQuery): { table: TableRef } {
    const { table, conditions } = fromPass(this.ctx, q.from);
    let t = table;
    for (const condition of conditions) t = filterPass(this.ctx, t, condition);
    return { table: filterPass(this.ctx, t, q.where) };
  }

  /** The rows a non-aggregate (or grouped) query projects from: through ORDER BY. */
  private rows(q: SelectQuery): TableRef {
    let t = this.whereRows(q).table;
    if (q.groupBy.length > 0) t = groupPass(this.ctx, t, q);
    else if (q.orderBy.some((o) => collectAggregates(o.expr).length > 0)) {
      unsupported('aggregate_order_without_group', 'ORDER BY an aggregate without GROUP BY');
    }
    page(q);
    return sortPass(this.ctx, t, q.orderBy);
  }
}
