import type { BinaryOp, ExistsExpr, Expr, InExpr } from '../sql/ast.js';
import { unsupported, type TableRef } from './builder.js';
import type { PassContext } from './context.js';
import { existsAsIn } from './exists.js';
import { correlatedOuterExprs, withKeys } from './decorrelation.js';
import { COMPARISON, FLIPPED, isConstant } from './expressions.js';

/**
 * WHERE (and HAVING on a grouped table): a predicate as filter_data calls. AND chains
 * filters; OR filters each branch from the same table and unions them; NOT is pushed down
 * to the atoms (De Morgan, inverted comparisons), which is exact in SQL's three-valued
 * logic because a filter keeps only rows where the predicate is true.
 */

const INVERSE: Partial<Record<BinaryOp, BinaryOp>> = {
  '=': '!=',
  '!=': '=',
  '<': '>=',
  '>=': '<',
  '>': '<=',
  '<=': '>',
};

interface Atom {
  key: string;
  condition: string;
  value?: unknown;
}

export function filterPass(ctx: PassContext, table: TableRef, predicate: Expr | null): TableRef {
  if (!predicate) return table;
  const folded = foldConstants(pushNot(predicate, false));
  if (folded === true) return table;
  if (folded === false) return unsupported('constant_predicate', 'a WHERE that no row can satisfy');
  return filter(ctx, table, folded);
}

/**
 * Literals in a boolean position decided as SQLite decides them (`WHERE x OR 'abc'`: 'abc'
 * is 0, false), and the AND/OR around them simplified. Exact for a filter, which keeps the
 * rows where the predicate is true: a NULL there is as good as false, and NOT is already at
 * the atoms (pushNot).
 */
function foldConstants(e: Expr): Expr | boolean {
  if (e.kind === 'literal') return sqliteTruth(e.value) === true;
  if (e.kind === 'unary' && e.op === 'NOT' && e.operand.kind === 'literal')
    return sqliteTruth(e.operand.value) === false;
  if (e.kind !== 'binary' || (e.op !== 'AND' && e.op !== 'OR')) return e;
  const left = foldConstants(e.left);
  const right = foldConstants(e.right);
  const absorbing = e.op === 'OR';
  if (typeof left === 'boolean') return left === absorbing ? absorbing : right;
  if (typeof right === 'boolean') return right === absorbing ? absorbing : left;
  return { ...e, left, right };
}

/**
 * A value's truth in SQLite: NULL is unknown; a number is true unless 0; text is read as
 * the number its longest numeric prefix spells (none: 0), as `CAST(x AS NUMERIC)` does.
 */
export function sqliteTruth(value: number | string | null): boolean | null {
  if (value === null) return null;
  if (typeof value === 'number') return value !== 0;
  const prefix = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(value);
  return prefix !== null && Number(prefix[0]) !== 0;
}

function filter(ctx: PassContext, t: TableRef, e: Expr): TableRef {
  if (e.kind === 'binary' && e.op === 'AND') return filter(ctx, filter(ctx, t, e.left), e.right);
  if (e.kind === 'binary' && e.op === 'OR') {
    ctx.b.requireExtended('or', 'OR');
    // Compute every per-row value the branches need first: union_data needs both
    // branches to carry the same keys.
    const prepared = leaves(e).reduce(
      (acc, leaf) =>
        isCorrelatedTest(leaf) ? withKeys(ctx, acc, correlatedOuterExprs(leaf)) : atom(ctx, acc, leaf)[0],
      t,
    );
    return ctx.b.union(filter(ctx, prepared, e.left), filter(ctx, prepared, e.right));
  }
  if (isCorrelatedTest(e)) return e.kind === 'exists' ? ctx.queries.exists(t, e) : ctx.queries.inSubquery(t, e);
  const [t1, a] = atom(ctx, t, e);
  return ctx.b.filter(t1, a.key, a.condition, a.value);
}

/**
 * `[NOT] EXISTS` / `[NOT] IN` over a correlated subquery, which filters by a join
 * (decorrelation.ts) rather than by a value; a positive EXISTS that is an IN in disguise
 * (exists.ts) stays a value filter.
 */
function isCorrelatedTest(e: Expr): e is ExistsExpr | InExpr {
  if (e.kind === 'exists') return e.query.correlated && existsAsIn(e) === null;
  return e.kind === 'in' && e.subquery !== null && e.subquery.correlated;
}

/** The non-AND/OR parts of a predicate. */
function leaves(e: Expr): Expr[] {
  return e.kind === 'binary' && (e.op === 'AND' || e.op === 'OR') ? [...leaves(e.left), ...leaves(e.right)] : [e];
}

/** One filter_data call for an atom (after the transforms it needs). */
function atom(ctx: PassContext, t: TableRef, e: Expr): [TableRef, Atom] {
  const { exprs, b } = ctx;
  switch (e.kind) {
    case 'binary': {
      const condition = COMPARISON[e.op];
      if (!condition) break;
      if (isConstant(e.left) && !isConstant(e.right)) {
        return atom(ctx, t, { ...e, op: FLIPPED[e.op]!, left: e.right, right: e.left });
      }
      if (isConstant(e.right) && !isConstant(e.left)) {
        const [t1, key] = exprs.key(t, e.left);
        return [t1, { key, condition, value: exprs.constantValue(e.right) }];
      }
      b.requireExtended('column_comparison', 'a comparison between two computed values');
      break;
    }
    case 'like':
      if (e.op === 'LIKE' && e.pattern.kind === 'literal') {
        const [t1, key] = exprs.key(t, e.expr);
        return [t1, { key, condition: e.not ? 'not_like' : 'like', value: e.pattern.value }];
      }
      break;
    case 'in': {
      const [t1, key] = exprs.key(t, e.expr);
      if (e.subquery) {
        b.requireExtended('subquery', 'IN (SELECT ...)');
        return [t1, { key, condition: e.not ? 'not_in' : 'in', value: `$${ctx.queries.list(e.subquery)}$` }];
      }
      const list = e.list ?? [];
      if (list.length === 1 && !e.not) return [t1, { key, condition: 'equal_to', value: exprs.constantValue(list[0]) }];
      b.requireExtended('in', 'IN (...)');
      return [t1, { key, condition: e.not ? 'not_in' : 'in', value: list.map((v) => exprs.constantValue(v)) }];
    }
    case 'between':
      return unsupported('between', 'BETWEEN reached an atom'); // expanded by pushNot
    case 'isNull': {
      const [t1, key] = exprs.key(t, e.expr);
      b.requireExtended('null_check', 'IS NULL');
      return [t1, { key, condition: e.not ? 'is_not_null' : 'is_null' }];
    }
    case 'exists': {
      const semiJoin = existsAsIn(e);
      if (semiJoin) return atom(ctx, t, semiJoin);
      return unsupported(e.query.correlated ? 'correlated_subquery' : 'exists', 'EXISTS');
    }
  }
  // Anything else: compute its truth value per row, keep the true rows. A value that may be
  // text is read as a number first, as SQLite does in a boolean position ('abc' is false).
  if (isBoolean(e)) {
    const [t1, key] = exprs.key(t, e);
    return [t1, { key, condition: 'equal_to', value: 1 }];
  }
  const numeric: Expr = isNumeric(e) ? e : { kind: 'cast', expr: e, to: 'numeric', typeName: 'NUMERIC' };
  const [t1, key] = exprs.key(t, numeric);
  return [t1, { key, condition: 'not_equal_to', value: 0 }];
}

/** Values that are numbers (or NULL) whatever the data: arithmetic, counts and sums. */
function isNumeric(e: Expr): boolean {
  if (e.kind === 'binary') return ['+', '-', '*', '/', '%'].includes(e.op);
  // Unary plus is a no-op in SQLite: +'abc' is still text.
  if (e.kind === 'unary') return e.op === '-';
  if (e.kind === 'aggregate') return ['COUNT', 'SUM', 'AVG', 'TOTAL'].includes(e.name);
  if (e.kind === 'cast') return e.to === 'integer' || e.to === 'real' || e.to === 'numeric';
  // INSTR is a character position: an integer, or NULL.
  return e.kind === 'function' && e.name === 'INSTR' && e.args.length === 2;
}

function isBoolean(e: Expr): boolean {
  if (e.kind === 'binary') return COMPARISON[e.op] !== undefined || e.op === 'AND' || e.op === 'OR';
  if (e.kind === 'unary') return e.op === 'NOT';
  return e.kind === 'like' || e.kind === 'in' || e.kind === 'between' || e.kind === 'isNull';
}

/** NOT pushed to the atoms; BETWEEN expanded to two comparisons. */
export function pushNot(e: Expr, negate: boolean): Expr {
  switch (e.kind) {
    case 'unary':
      if (e.op === 'NOT') return pushNot(e.operand, !negate);
      break;
    case 'binary': {
      if (e.op === 'AND' || e.op === 'OR') {
        const op = negate ? (e.op === 'AND' ? 'OR' : 'AND') : e.op;
        return { kind: 'binary', op, left: pushNot(e.left, negate), right: pushNot(e.right, negate) };
      }
      const inverse = INVERSE[e.op];
      if (negate && inverse) return { ...e, op: inverse };
      break;
    }
    case 'between': {
      const low: Expr = { kind: 'binary', op: '>=', left: e.expr, right: e.low };
      const high: Expr = { kind: 'binary', op: '<=', left: e.expr, right: e.high };
      return pushNot({ kind: 'binary', op: 'AND', left: low, right: high }, negate !== e.not);
    }
    case 'like':
    case 'in':
    case 'isNull':
    case 'exists':
      return negate ? { ...e, not: !e.not } : e;
  }
  return negate ? { kind: 'unary', op: 'NOT', operand: e } : e;
}
