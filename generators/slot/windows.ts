import type { Expr, WindowExpr, WindowOrderItem } from '../sql/ast.js';
import { unsupported, type Operand, type TableRef } from './builder.js';

/**
 * A window function as transform_data's window operations (docs/TOOLS.md): which operation,
 * which expression it reads (`subject`, the call's key_name) and its operation_args, with
 * every expression the window names computed as a key of the table first. The rows are those
 * of the table the call transforms: the query's rows after WHERE, GROUP BY and HAVING, as SQL
 * computes windows (before DISTINCT, ORDER BY's effect on LIMIT, and LIMIT).
 */

/** What computing keys needs: a key of (a descendant of) `t` holding an expression. */
export interface KeyOf {
  key(t: TableRef, expr: Expr): [TableRef, string];
  operand(t: TableRef, expr: Expr): [TableRef, Operand];
}

export interface WindowCall {
  table: TableRef;
  subject: string;
  operation: string;
  args: Record<string, unknown>;
}

const RUNNING: Record<string, string> = { SUM: 'sum', AVG: 'mean', COUNT: 'count', MIN: 'min', MAX: 'max' };

export function windowCall(exprs: KeyOf, t: TableRef, w: WindowExpr): WindowCall {
  if (w.distinct) unsupported('window_function', `${w.name}(DISTINCT …) OVER (...)`);
  if (w.orderBy.some((o) => o.nulls !== null)) unsupported('window_function', 'NULLS FIRST/LAST in a window');
  let table = t;
  const keyOf = (e: Expr): string => {
    const [t1, key] = exprs.key(table, e);
    table = t1;
    return key;
  };
  const orderItems = (items: WindowOrderItem[]) =>
    items.map((o) => ({ key_name: keyOf(o.expr), ascending: o.direction === 'asc' }));
  const partition = w.partitionBy.map(keyOf);
  const partitionArgs = partition.length > 0 ? { partition_by: partition } : {};
  const call = (subject: string, operation: string, args: Record<string, unknown>): WindowCall => ({
    table,
    subject,
    operation,
    args: { ...args, ...partitionArgs },
  });

  switch (w.name) {
    case 'ROW_NUMBER':
    case 'RANK':
    case 'DENSE_RANK':
    case 'NTILE': {
      const ntile = w.name === 'NTILE';
      if (w.args.length !== (ntile ? 1 : 0))
        unsupported('window_function', `${w.name} with ${w.args.length} argument(s)`);
      // Without ORDER BY the numbering follows the scan order, which the query does not fix.
      if (w.orderBy.length === 0) unsupported('window_function', `${w.name} OVER (...) without ORDER BY`);
      frameless(w);
      const buckets = ntile ? positiveInteger(w.args[0], 'NTILE buckets') : undefined;
      const [first, ...rest] = w.orderBy;
      const subject = keyOf(first.expr);
      const args: Record<string, unknown> = { ascending: first.direction === 'asc' };
      if (w.name === 'RANK' || w.name === 'DENSE_RANK') args.dense = w.name === 'DENSE_RANK';
      if (rest.length > 0) args.then_by = orderItems(rest);
      if (buckets !== undefined) args.buckets = buckets;
      return call(subject, w.name === 'DENSE_RANK' ? 'rank' : w.name.toLowerCase(), args);
    }
    case 'LAG':
    case 'LEAD': {
      if (w.args.length < 1 || w.args.length > 3)
        unsupported('window_function', `${w.name} with ${w.args.length} arguments`);
      if (w.orderBy.length === 0) unsupported('window_function', `${w.name} OVER (...) without ORDER BY`);
      frameless(w);
      const subject = keyOf(w.args[0]);
      const args: Record<string, unknown> = { order_by: orderItems(w.orderBy) };
      if (w.args.length >= 2) args.offset = nonNegativeInteger(w.args[1], `${w.name} offset`);
      if (w.args.length === 3) {
        const [t1, fallback] = exprs.operand(table, w.args[2]);
        table = t1;
        args.default = fallback;
      }
      return call(subject, w.name.toLowerCase(), args);
    }
    default: {
      const aggregation = RUNNING[w.name];
      if (!aggregation) unsupported('window_function', `${w.name} OVER (...)`);
      if (w.star ? w.args.length > 0 : w.args.length !== 1)
        unsupported('window_function', `${w.name} OVER (...) with ${w.args.length} arguments`);
      const subject = w.star ? table.keys[0] : keyOf(w.args[0]);
      const args: Record<string, unknown> = { aggregation: w.star ? 'count_rows' : aggregation };
      if (w.orderBy.length > 0) args.order_by = orderItems(w.orderBy);
      const frame = frameArgs(w);
      if (frame === 'whole') delete args.order_by;
      else if (frame) args.frame = frame;
      return call(subject, 'running', args);
    }
  }
}

/** Ranking and offset functions ignore a frame; one written anyway is refused rather than guessed at. */
function frameless(w: WindowExpr): void {
  if (w.frame !== null) unsupported('window_frame', `${w.name} with a frame`);
}

/**
 * A frame as running's `frame` {preceding, following} (ROWS, null = unbounded), undefined
 * for SQL's default frame (RANGE from the partition's start to the current row's last peer),
 * 'whole' for a frame that spans the partition. Other frames (GROUPS, RANGE with offsets, a
 * frame ending before the current row) are refused.
 */
function frameArgs(w: WindowExpr): { preceding: number | null; following: number | null } | 'whole' | undefined {
  if (w.frame === null) return undefined;
  const parsed = /^(ROWS|RANGE|GROUPS) (?:BETWEEN (.+) AND (.+)|(.+))$/.exec(w.frame);
  if (!parsed) return unsupported('window_frame', w.frame);
  const [, units, low, high, only] = parsed;
  const start = low ?? only;
  const end = high ?? 'CURRENT ROW';
  if (units === 'RANGE') {
    if (start === 'UNBOUNDED PRECEDING' && end === 'CURRENT ROW') return undefined;
    if (start === 'UNBOUNDED PRECEDING' && end === 'UNBOUNDED FOLLOWING') return 'whole';
    return unsupported('window_frame', w.frame);
  }
  if (units !== 'ROWS') return unsupported('window_frame', w.frame);
  const preceding = bound(start, 'PRECEDING');
  const following = bound(end, 'FOLLOWING');
  if (preceding === false || following === false) return unsupported('window_frame', w.frame);
  return { preceding, following };
}

/** `n <side>` → n, `UNBOUNDED <side>` → null, `CURRENT ROW` → 0; false for a bound on the other side. */
function bound(text: string, side: 'PRECEDING' | 'FOLLOWING'): number | null | false {
  if (text === 'CURRENT ROW') return 0;
  if (text === `UNBOUNDED ${side}`) return null;
  const n = new RegExp(`^(\\d+) ${side}$`).exec(text);
  return n ? Number(n[1]) : false;
}

function nonNegativeInteger(e: Expr, what: string): number {
  if (e.kind !== 'literal' || e.type !== 'integer' || (e.value as number) < 0)
    unsupported('window_function', `${what} that is not a non-negative integer literal`);
  return e.value as number;
}

function positiveInteger(e: Expr, what: string): number {
  const n = nonNegativeInteger(e, what);
  if (n === 0) unsupported('window_function', `${what} of 0`);
  return n;
}
