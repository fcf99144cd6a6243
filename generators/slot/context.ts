import type { ExistsExpr, InExpr, Query } from '../sql/ast.js';
import type { SequenceBuilder, TableRef } from './builder.js';
import type { ExpressionCompiler, Subqueries } from './expressions.js';

/** What every clause pass works with. */
export interface PassContext {
  b: SequenceBuilder;
  exprs: ExpressionCompiler;
  queries: Subqueries & {
    /**
     * A derived table: its rows, with its output columns keyed as `<name>.<column>` columns;
     * `joined`: it is joined by an equality (so one aggregate row may be the row a MIN/MAX picks).
     */
    table(query: Query, name: string, joined?: boolean): TableRef;
    /** `t`'s rows that pass a correlated `[NOT] EXISTS` / `[NOT] IN` (decorrelation.ts). */
    exists(t: TableRef, e: ExistsExpr): TableRef;
    inSubquery(t: TableRef, e: InExpr): TableRef;
  };
}
