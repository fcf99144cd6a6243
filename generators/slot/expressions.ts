import {
  children,
  type AggregateExpr,
  type BinaryOp,
  type Expr,
  type LiteralExpr,
  type Query,
  type SubqueryExpr,
  type WindowExpr,
} from '../sql/ast.js';
import { ZONE_MODIFIERS } from '../../runtime/slot/catalog.js';
import { SequenceBuilder, unsupported, ref, type Operand, type TableRef } from './builder.js';
import { windowCall } from './windows.js';

/**
 * Expressions as SLOT calls. Row level (and per group, on a grouped table whose aggregates
 * are already columns): `transform_data` chains adding a key that holds the value. Over
 * ungrouped aggregates: `calculate` chains over scalar labels. Every computed key is
 * remembered on the table by the expression's signature, so it is computed once.
 */

/** Nested SELECTs, compiled by the query passes (they own the recursion). */
export interface Subqueries {
  /** A label whose output is the subquery's value (a scalar, or a list whose first value counts). */
  value(query: Query): string;
  /** A label whose output is the list of the subquery's (single) column. */
  list(query: Query): string;
  /** A correlated scalar subquery's value on every row of `t` (decorrelation.ts). */
  correlatedValue(t: TableRef, expr: SubqueryExpr): [TableRef, string];
}

export function signature(expr: Expr): string {
  return JSON.stringify(expr);
}

export const ARITHMETIC: Partial<Record<BinaryOp, string>> = {
  '+': 'add',
  '-': 'subtract',
  '*': 'multiply',
  '/': 'divide',
  '%': 'modulo',
  '||': 'concat',
};

export const COMPARISON: Partial<Record<BinaryOp, string>> = {
  '=': 'equal_to',
  '!=': 'not_equal_to',
  '<': 'less_than',
  '<=': 'less_than_equal_to',
  '>': 'greater_than',
  '>=': 'greater_than_equal_to',
};

/** `a op b` is `b flipped(op) a`. */
export const FLIPPED: Partial<Record<BinaryOp, BinaryOp>> = {
  '=': '=',
  '!=': '!=',
  '<': '>',
  '>': '<',
  '<=': '>=',
  '>=': '<=',
  '+': '+',
  '*': '*',
  AND: 'AND',
  OR: 'OR',
};

const AGGREGATION: Record<string, string> = { COUNT: 'count', SUM: 'sum', AVG: 'mean', MIN: 'min', MAX: 'max' };

const UNARY_FUNCTIONS: Record<string, string> = {
  ABS: 'abs',
  LENGTH: 'length',
  UPPER: 'upper',
  LOWER: 'lower',
  TRIM: 'trim',
  JULIANDAY: 'julianday',
};

/** date/time functions that are strftime with a fixed pattern. */
const DATE_PATTERNS: Record<string, string> = {
  DATE: '%Y-%m-%d',
  DATETIME: '%Y-%m-%d %H:%M:%S',
  TIME: '%H:%M:%S',
};

const CURRENT_TIME_FUNCTIONS = ['CURRENT_TIMESTAMP', 'CURRENT_DATE', 'CURRENT_TIME', 'NOW'];

/** The current moment ('now', CURRENT_TIMESTAMP, ...): not a deterministic value. */
function isNow(expr: Expr): boolean {
  if (expr.kind === 'literal') return typeof expr.value === 'string' && expr.value.trim().toLowerCase() === 'now';
  return expr.kind === 'function' && CURRENT_TIME_FUNCTIONS.includes(expr.name);
}

function textLiteral(expr: Expr | undefined): expr is LiteralExpr & { value: string } {
  return expr?.kind === 'literal' && typeof expr.value === 'string';
}

/**
 * DATE/DATETIME/TIME(x, modifiers...) and STRFTIME(pattern, x, modifiers...) as the
 * `datetime` operation on x (null for other functions). The current moment, and the
 * modifiers whose result depends on the machine's time zone, are refused: not deterministic.
 */
function datetimeCall(name: string, args: Expr[]): { subject: Expr; opArgs: Record<string, unknown> } | null {
  const strftime = name === 'STRFTIME';
  const fixed = DATE_PATTERNS[name];
  if (!strftime && fixed === undefined) return null;
  const [subject, ...modifiers] = strftime ? args.slice(1) : args;
  if (subject === undefined || isNow(subject)) unsupported('current_time', `${name} of the current time`);
  const pattern = strftime ? args[0] : undefined;
  if (strftime && !textLiteral(pattern))
    unsupported('function_strftime', 'a strftime pattern that is not a text literal');
  if (!modifiers.every(textLiteral))
    unsupported('function_datetime', 'a date/time modifier that is not a text literal');
  const texts = modifiers.map((m) => (m as LiteralExpr).value as string);
  if (texts.some((m) => (ZONE_MODIFIERS as readonly string[]).includes(m.trim().toLowerCase()))) {
    unsupported('time_zone', `${name} with a time-zone modifier depends on the machine, not on the data`);
  }
  const opArgs: Record<string, unknown> = { pattern: fixed ?? (pattern as LiteralExpr).value };
  if (texts.length > 0) opArgs.modifiers = texts;
  return { subject, opArgs };
}

/** A literal whose SQLite REAL-ness JSON cannot carry (`1.0`). */
export function isIntegralReal(expr: Expr): boolean {
  return expr.kind === 'literal' && expr.type === 'real' && Number.isInteger(expr.value);
}

/** A constant: a literal, or an uncorrelated scalar subquery. */
export function isConstant(expr: Expr): boolean {
  return expr.kind === 'literal' || (expr.kind === 'subquery' && !expr.query.correlated);
}

export function aggregationType(agg: AggregateExpr): string {
  const type = AGGREGATION[agg.name];
  if (!type) unsupported(`aggregate_${agg.name.toLowerCase()}`, `${agg.name} has no aggregate_data counterpart`);
  return type;
}

/** Aggregates used by `expr`, outermost first, not looking into nested SELECTs. */
export function collectAggregates(expr: Expr | null, into: AggregateExpr[] = []): AggregateExpr[] {
  if (!expr) return into;
  if (expr.kind === 'aggregate') {
    into.push(expr);
    return into;
  }
  for (const child of children(expr)) collectAggregates(child, into);
  return into;
}

export function containsWindow(expr: Expr): boolean {
  return expr.kind === 'window' || children(expr).some(containsWindow);
}

/** Column references of `expr` outside aggregates and nested SELECTs. */
export function bareColumns(expr: Expr | null, into: Expr[] = []): Expr[] {
  if (!expr || expr.kind === 'aggregate') return into;
  if (expr.kind === 'column') into.push(expr);
  for (const child of children(expr)) bareColumns(child, into);
  return into;
}

export interface ScalarContext {
  /** null for a SELECT without FROM: no rows to aggregate. */
  table: TableRef | null;
  memo: Map<string, unknown>;
}

export class ExpressionCompiler {
  constructor(
    private readonly b: SequenceBuilder,
    private readonly subqueries: Subqueries,
  ) {}

  // ---- per row (or per group) ---------------------------------------------------------------

  /** A key of the returned table (a descendant of `t`) holding `expr` on every row. */
  key(t: TableRef, expr: Expr): [TableRef, string] {
    const sig = signature(expr);
    const known = t.exprs.get(sig);
    if (known !== undefined) return [t, known];
    switch (expr.kind) {
      case 'column':
        if (expr.depth > 0) unsupported('correlated_subquery', `${expr.column} refers to an enclosing query`);
        if (t.memberKeys) unsupported('bare_column', `${expr.source}.${expr.column} is neither grouped nor aggregated`);
        unsupported('unknown_column', `${expr.source}.${expr.column} is not in the table`);
      // falls through (unsupported throws)
      case 'subquery':
        if (expr.query.correlated) return this.subqueries.correlatedValue(t, expr);
        return this.constant(t, expr);
      case 'literal':
        return this.constant(t, expr);
      case 'binary':
        return this.binary(t, expr.op, expr.left, expr.right, sig);
      case 'unary': {
        if (expr.op === '+') return this.key(t, expr.operand);
        const [t1, k] = this.key(t, expr.operand);
        return this.transform(t1, k, expr.op === '-' ? 'negate' : 'not', {}, sig);
      }
      case 'function':
        return this.func(t, expr.name, expr.args, sig);
      case 'aggregate':
        unsupported('aggregate_context', `${expr.name} is used where rows are not grouped`);
      // falls through
      case 'window':
        return this.window(t, expr, sig);
      case 'case':
        return this.caseExpr(t, expr.whens, expr.else, sig);
      case 'cast': {
        if (expr.to === 'blob') unsupported('cast', `CAST AS ${expr.typeName}`);
        const [t1, k] = this.key(t, expr.expr);
        return this.transform(t1, k, 'cast', { to: expr.to }, sig);
      }
      case 'in': {
        const [t1, k] = this.key(t, expr.expr);
        const op = expr.not ? 'not_in' : 'in';
        if (expr.subquery) return this.transform(t1, k, op, { values: ref(this.subqueries.list(expr.subquery)) }, sig);
        return this.transform(t1, k, op, { values: (expr.list ?? []).map((v) => this.constantValue(v)) }, sig);
      }
      case 'between': {
        const low: Expr = { kind: 'binary', op: '>=', left: expr.expr, right: expr.low };
        const high: Expr = { kind: 'binary', op: '<=', left: expr.expr, right: expr.high };
        const both: Expr = { kind: 'binary', op: 'AND', left: low, right: high };
        if (!expr.not) return this.key(t, both);
        const [t1, k] = this.key(t, both);
        return this.transform(t1, k, 'not', {}, sig);
      }
      case 'like': {
        if (expr.op === 'GLOB') unsupported('glob', 'GLOB');
        const [t1, k] = this.key(t, expr.expr);
        const [t2, pattern] = this.operand(t1, expr.pattern);
        return this.transform(t2, k, expr.not ? 'not_like' : 'like', { operand: pattern }, sig);
      }
      case 'isNull': {
        const [t1, k] = this.key(t, expr.expr);
        return this.transform(t1, k, expr.not ? 'is_not_null' : 'is_null', {}, sig);
      }
      case 'exists':
        unsupported(expr.query.correlated ? 'correlated_subquery' : 'exists', 'EXISTS');
    }
  }

  /** A window function (windows.ts) as one of transform_data's window operations. */
  private window(t: TableRef, expr: WindowExpr, sig: string): [TableRef, string] {
    this.b.requireExtended('window_function', `${expr.name} OVER (...)`);
    const call = windowCall(this, t, expr);
    return this.transform(call.table, call.subject, call.operation, call.args, sig);
  }

  /** `{value}` for constants, `{key_name}` for anything computed per row. */
  operand(t: TableRef, expr: Expr): [TableRef, Operand] {
    if (isConstant(expr) && !isIntegralReal(expr)) return [t, { value: this.constantValue(expr) }];
    const [t1, k] = this.key(t, expr);
    return [t1, { key_name: k }];
  }

  /** The JSON value of a constant (a `$LABEL$` for a scalar subquery). */
  constantValue(expr: Expr): unknown {
    if (expr.kind === 'literal') return expr.value;
    if (expr.kind === 'subquery') {
      this.b.requireExtended('subquery', 'a nested SELECT');
      return ref(this.subqueries.value(expr.query));
    }
    if (expr.kind === 'unary' && expr.op === '-' && expr.operand.kind === 'subquery') {
      unsupported('constant_expression', 'negated subquery');
    }
    unsupported('constant_expression', `${expr.kind} where a constant is expected`);
  }

  private transform(
    t: TableRef,
    key: string,
    op: string,
    args: Record<string, unknown>,
    sig: string,
  ): [TableRef, string] {
    const t1 = this.b.transform(t, key, op, args, sig);
    return [t1, t1.keys[t1.keys.length - 1]];
  }

  /** A column holding a constant (`if_then_else` with the same value either way), REAL kept. */
  private constant(t: TableRef, expr: Expr): [TableRef, string] {
    const value = { value: this.constantValue(expr) };
    if (!isIntegralReal(expr))
      return this.transform(t, t.keys[0], 'if_then_else', { then: value, else: value }, signature(expr));
    const integral: Expr = { ...(expr as LiteralExpr), type: 'integer', raw: String((expr as LiteralExpr).value) };
    const [t1, k] = this.key(t, integral);
    return this.transform(t1, k, 'cast', { to: 'real' }, signature(expr));
  }

  private binary(t: TableRef, op: BinaryOp, left: Expr, right: Expr, sig: string): [TableRef, string] {
    if (op === 'IS' || op === 'IS NOT') unsupported('is_operator', `${op} with a non-NULL operand`);
    const name = ARITHMETIC[op] ?? COMPARISON[op] ?? op.toLowerCase();
    if (isConstant(left) && !isConstant(right)) {
      const flipped = FLIPPED[op];
      if (flipped) return this.binary(t, flipped, right, left, sig);
      if (op === '-' && !isIntegralReal(left)) {
        // c - x = (-x) + c
        const negated: Expr = { kind: 'unary', op: '-', operand: right };
        const [t1, k] = this.key(t, negated);
        return this.transform(t1, k, 'add', { operand: { value: this.constantValue(left) } }, sig);
      }
    }
    let [t1, k] = this.key(t, left);
    // x op 1.0 is REAL arithmetic: cast x first, then operate with the integral value.
    if (ARITHMETIC[op] && op !== '||' && isIntegralReal(right)) {
      [t1, k] = this.key(t1, { kind: 'cast', expr: left, to: 'real', typeName: 'REAL' });
      return this.transform(t1, k, name, { operand: { value: (right as LiteralExpr).value } }, sig);
    }
    const [t2, operand] = this.operand(t1, right);
    return this.transform(t2, k, name, { operand }, sig);
  }

  private func(t: TableRef, name: string, args: Expr[], sig: string): [TableRef, string] {
    // JULIANDAY('now') and the like: the answer would change with the day it is computed.
    if (args.some(isNow)) unsupported('current_time', `${name} of the current time`);
    const datetime = datetimeCall(name, args);
    if (datetime) {
      const [t1, k] = this.key(t, datetime.subject);
      return this.transform(t1, k, 'datetime', datetime.opArgs, sig);
    }
    const unary = UNARY_FUNCTIONS[name];
    if (unary && args.length === 1) {
      const [t1, k] = this.key(t, args[0]);
      return this.transform(t1, k, unary, {}, sig);
    }
    if (name === 'INSTR' && args.length === 2) {
      this.b.requireExtended('function_instr', 'INSTR');
      const [t1, k] = this.key(t, args[0]);
      const [t2, operand] = this.operand(t1, args[1]);
      return this.transform(t2, k, 'position', { operand }, sig);
    }
    if ((name === 'SUBSTR' || name === 'SUBSTRING') && (args.length === 2 || args.length === 3)) {
      const bounds = substringBounds(args[1], args[2]);
      if (bounds) {
        const [t1, k] = this.key(t, args[0]);
        return this.transform(t1, k, 'substring', bounds, sig);
      }
      // Bounds a slice cannot hold (computed per row, negative lengths): SQLite's substr itself.
      this.b.requireExtended('function_substr', 'SUBSTR with computed or negative bounds');
      const [t1, k] = this.key(t, args[0]);
      const [t2, start] = this.operand(t1, args[1]);
      if (args.length === 2) return this.transform(t2, k, 'substr', { start }, sig);
      const [t3, length] = this.operand(t2, args[2]);
      return this.transform(t3, k, 'substr', { start, length }, sig);
    }
    if (
      name === 'ROUND' &&
      (args.length === 1 || (args.length === 2 && args[1].kind === 'literal' && args[1].type === 'integer'))
    ) {
      const [t1, k] = this.key(t, args[0]);
      return this.transform(
        t1,
        k,
        'round',
        args.length === 2 ? { digits: args[1].kind === 'literal' ? args[1].value : 0 } : {},
        sig,
      );
    }
    if ((name === 'IFNULL' || name === 'COALESCE') && args.length === 2) {
      const [t1, k] = this.key(t, args[0]);
      const [t2, operand] = this.operand(t1, args[1]);
      return this.transform(t2, k, 'coalesce', { operand }, sig);
    }
    if (name === 'CURRENT_TIMESTAMP' || name === 'CURRENT_DATE' || name === 'NOW') unsupported('current_time', name);
    return unsupported(`function_${name.toLowerCase()}`, `${name}() with ${args.length} argument(s)`);
  }

  /** Multi-branch CASE nests if_then_else, innermost (last WHEN) first. */
  private caseExpr(
    t: TableRef,
    whens: { when: Expr; then: Expr }[],
    otherwise: Expr | null,
    sig: string,
  ): [TableRef, string] {
    this.b.requireExtended('case', 'CASE/IIF');
    let table = t;
    let acc: Operand | null = null;
    if (otherwise && !(otherwise.kind === 'literal' && otherwise.type === 'null'))
      [table, acc] = this.operand(table, otherwise);
    let key = '';
    for (let i = whens.length - 1; i >= 0; i--) {
      const [t1, cond] = this.key(table, whens[i].when);
      const [t2, then] = this.operand(t1, whens[i].then);
      const args: Record<string, unknown> = acc ? { then, else: acc } : { then };
      const partial = i === 0 ? sig : signature({ kind: 'case', whens: whens.slice(i), else: otherwise });
      [table, key] = this.transform(t2, cond, 'if_then_else', args, partial);
      acc = { key_name: key };
    }
    return [table, key];
  }

  // ---- over ungrouped aggregates: scalars ---------------------------------------------------

  /**
   * A JSON value or `$LABEL$` of a scalar holding `expr` over the whole table `ctx.table`
   * (which grows the keys aggregate arguments need).
   */
  scalar(ctx: ScalarContext, expr: Expr): unknown {
    const sig = signature(expr);
    if (ctx.memo.has(sig)) return ctx.memo.get(sig);
    const value = this.scalarUncached(ctx, expr);
    ctx.memo.set(sig, value);
    return value;
  }

  private scalarUncached(ctx: ScalarContext, expr: Expr): unknown {
    const t = ctx.table;
    const memo = ctx;
    const calc = (subject: unknown, op: string, args: Record<string, unknown> = {}): string =>
      ref(this.b.calculate(subject, op, args));
    switch (expr.kind) {
      case 'literal':
        return isIntegralReal(expr) ? calc(expr.value, 'cast', { to: 'real' }) : expr.value;
      case 'subquery':
        return this.constantValue(expr);
      case 'aggregate': {
        if (t === null) return unsupported('no_from', `${expr.name} in a SELECT without FROM`);
        const type = aggregationType(expr);
        if (expr.star || !expr.arg) return ref(this.b.aggregateScalar(t, '*', 'count', false));
        const [t1, k] = this.key(t, expr.arg);
        ctx.table = t1;
        return ref(this.b.aggregateScalar(t1, k, type, expr.distinct));
      }
      case 'binary': {
        if (expr.op === 'IS' || expr.op === 'IS NOT') unsupported('is_operator', `${expr.op} with a non-NULL operand`);
        const op = ARITHMETIC[expr.op] ?? COMPARISON[expr.op] ?? expr.op.toLowerCase();
        let left = this.scalar(memo, expr.left);
        let right: unknown;
        if (ARITHMETIC[expr.op] && expr.op !== '||' && isIntegralReal(expr.right)) {
          left = calc(left, 'cast', { to: 'real' });
          right = (expr.right as LiteralExpr).value;
        } else {
          right = this.scalar(memo, expr.right);
        }
        return calc(left, op, { operand: { value: right } });
      }
      case 'unary':
        if (expr.op === '+') return this.scalar(memo, expr.operand);
        return calc(this.scalar(memo, expr.operand), expr.op === '-' ? 'negate' : 'not');
      case 'cast':
        if (expr.to === 'blob') unsupported('cast', `CAST AS ${expr.typeName}`);
        return calc(this.scalar(memo, expr.expr), 'cast', { to: expr.to });
      case 'function': {
        const datetime = datetimeCall(expr.name, expr.args);
        if (datetime) return calc(this.scalar(memo, datetime.subject), 'datetime', datetime.opArgs);
        const unary = UNARY_FUNCTIONS[expr.name];
        if (unary && expr.args.length === 1) return calc(this.scalar(memo, expr.args[0]), unary);
        if (expr.name === 'ROUND' && expr.args.length <= 2) {
          const digits = expr.args[1];
          if (digits && !(digits.kind === 'literal' && digits.type === 'integer'))
            unsupported('function_round', 'ROUND digits');
          return calc(
            this.scalar(memo, expr.args[0]),
            'round',
            digits?.kind === 'literal' ? { digits: digits.value } : {},
          );
        }
        if ((expr.name === 'IFNULL' || expr.name === 'COALESCE') && expr.args.length === 2) {
          return calc(this.scalar(memo, expr.args[0]), 'coalesce', {
            operand: { value: this.scalar(memo, expr.args[1]) },
          });
        }
        if (expr.name === 'INSTR' && expr.args.length === 2) {
          return calc(this.scalar(memo, expr.args[0]), 'position', {
            operand: { value: this.scalar(memo, expr.args[1]) },
          });
        }
        if ((expr.name === 'SUBSTR' || expr.name === 'SUBSTRING') && [2, 3].includes(expr.args.length)) {
          const [subject, start, length] = expr.args.map((a) => this.scalar(memo, a));
          const bounds: Record<string, unknown> = { start: { value: start } };
          if (expr.args.length === 3) bounds.length = { value: length };
          return calc(subject, 'substr', bounds);
        }
        return unsupported(`function_${expr.name.toLowerCase()}`, `${expr.name}() over aggregates`);
      }
      case 'case': {
        this.b.requireExtended('case', 'CASE/IIF');
        let acc: unknown = expr.else ? this.scalar(memo, expr.else) : undefined;
        for (let i = expr.whens.length - 1; i >= 0; i--) {
          const cond = this.scalar(memo, expr.whens[i].when);
          const args: Record<string, unknown> = { then: { value: this.scalar(memo, expr.whens[i].then) } };
          if (acc !== undefined) args.else = { value: acc };
          acc = calc(cond, 'if_then_else', args);
        }
        return acc;
      }
      case 'isNull':
        return calc(this.scalar(memo, expr.expr), expr.not ? 'is_not_null' : 'is_null');
      case 'column':
        return unsupported(
          expr.depth > 0 ? 'correlated_subquery' : 'bare_column',
          `${expr.column} next to an aggregate without GROUP BY`,
        );
      default:
        return unsupported(`scalar_${expr.kind}`, `${expr.kind} over aggregates`);
    }
  }
}

/**
 * SQLite substr(x, start, length) (1-based) as the tool's 0-based, end-exclusive slice, for
 * integer constants with a length that is not negative; null for other bounds.
 */
function substringBounds(startExpr: Expr, lengthExpr: Expr | undefined): Record<string, number> | null {
  const integer = (e: Expr | undefined): number | undefined =>
    e && e.kind === 'literal' && e.type === 'integer' ? (e.value as number) : undefined;
  const start = integer(startExpr);
  const length = lengthExpr === undefined ? undefined : integer(lengthExpr);
  if (start === undefined || (lengthExpr !== undefined && (length === undefined || length < 0))) return null;
  // substr(x, 0, n) yields n - 1 characters: position 0 is before the first one.
  const from = start > 0 ? start - 1 : start;
  const firstIndex = start === 0 ? 0 : from;
  if (length === undefined) return { start_index: firstIndex };
  const end = start === 0 ? Math.max(length - 1, 0) : from + length;
  if (from < 0 && end >= 0) return { start_index: from };
  return { start_index: firstIndex, end_index: end };
}
