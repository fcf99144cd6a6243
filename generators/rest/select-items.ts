import type { AggregateExpr, BinaryExpr, Expr, Query, SelectItem, SelectQuery } from '../sql/ast.js';
import type { ColumnResolver } from './columns.js';
import { placeholderIn } from './endpoint-query.js';
import { clip, columnLabel, formatPart, nameWords, words } from './naming.js';

/**
 * What a select item or an expression is, in words: the words of a name (`itemWords`: an
 * alias, a column, an aggregate of a column) and a phrase for a reader (`itemPhrase`: the
 * column's description, "number of distinct …", "… as a percentage of …"; `exprPhrase`
 * for any expression, conditions included). Endpoint names and summaries, and the fields of
 * an endpoint's response, are both made of them.
 */

export function firstColumn(expr: Expr): Extract<Expr, { kind: 'column' }> | null {
  if (expr.kind === 'column') return expr;
  const children: Expr[] =
    expr.kind === 'binary'
      ? [expr.left, expr.right]
      : expr.kind === 'unary'
        ? [expr.operand]
        : expr.kind === 'function'
          ? expr.args
          : expr.kind === 'aggregate'
            ? expr.arg
              ? [expr.arg]
              : []
            : expr.kind === 'cast'
              ? [expr.expr]
              : expr.kind === 'case'
                ? expr.whens.flatMap((w) => [w.then, w.when]).concat(expr.else ? [expr.else] : [])
                : [];
  for (const child of children) {
    const found = firstColumn(child);
    if (found) return found;
  }
  return null;
}

export const AGGREGATE_WORDS: Record<string, string> = {
  COUNT: 'count',
  SUM: 'total',
  TOTAL: 'total',
  AVG: 'average',
  MIN: 'min',
  MAX: 'max',
  GROUP_CONCAT: 'list',
};

/** `resolve`, when given, names a cryptic column (BIRD's `A2`) by its short description, as its response field is. */
export function itemWords(item: SelectItem, baseTable: string | null, resolve?: ColumnResolver): string[] {
  const expr = item.expr;
  if (expr.kind === 'column') {
    const info = resolve?.({ qualifier: expr.source, name: expr.column });
    return (info ? nameWords(expr.column, info.column.description) : words(expr.column)).slice(0, 6);
  }
  if (item.alias) return words(item.alias).slice(0, 6);
  const column = firstColumn(expr);
  if (expr.kind === 'aggregate') {
    const computed =
      expr.arg?.kind === 'binary' ? arithmeticName(expr.arg, (e) => words(firstColumn(e)?.column ?? '')) : null;
    return [
      AGGREGATE_WORDS[expr.name],
      ...(computed ?? (column ? words(column.column) : baseTable ? words(baseTable) : ['rows'])),
    ].slice(0, 8);
  }
  return [...computedWords(expr), ...(column ? words(column.column) : ['value'])].slice(0, 6);
}

/**
 * Arithmetic named by what it computes where its operands say it, from each operand's words
 * (`about`): a product of two columns is `<a> times <b>` (price × quantity is revenue, not
 * quantity), a difference of two dates `<a> days` (JULIANDAY(a) - JULIANDAY(b)); else null.
 * Endpoint names and response fields both say it so.
 */
export function arithmeticName(expr: BinaryExpr, about: (e: Expr) => string[]): string[] | null {
  const left = firstColumn(expr.left) ? about(expr.left) : [];
  const right = firstColumn(expr.right) ? about(expr.right) : [];
  if (expr.op === '*' && left.length && right.length && !percentageParts(expr)) return [...left, 'times', ...right];
  if (expr.op === '-' && isDay(expr.left) && isDay(expr.right)) return [...(left.length ? left : right), 'days'];
  return null;
}

/** A date as a count of days: JULIANDAY(…), or STRFTIME('%J', …). */
function isDay(expr: Expr): boolean {
  if (expr.kind === 'cast') return isDay(expr.expr);
  if (expr.kind !== 'function') return false;
  const name = expr.name.toUpperCase();
  const first = expr.args[0];
  return name === 'JULIANDAY' || (name === 'STRFTIME' && first?.kind === 'literal' && first.value === '%J');
}

/** What kind of computation an expression is, as name words (`percentage`, `difference`); none for a plain one. */
function computedWords(expr: Expr): string[] {
  const inner = unwrapped(expr);
  if (inner.kind === 'binary') {
    if (percentageParts(inner)) return ['percentage'];
    const word = ARITHMETIC_WORDS[inner.op];
    return word ? [word] : [];
  }
  if (inner.kind === 'function') return words(FUNCTION_WORDS[inner.name]?.(inner.args) ?? '');
  return inner.kind === 'case' ? ['conditional'] : [];
}

export function describe(column: Extract<Expr, { kind: 'column' }>, resolve: ColumnResolver): string {
  const info = resolve({ qualifier: column.source, name: column.column });
  return columnLabel(column.column, info?.column.description ?? '');
}

export function itemPhrase(item: SelectItem, resolve: ColumnResolver): string {
  return item.expr.kind === 'literal' && placeholderIn(item.expr) === null
    ? `the value ${item.name}`
    : clip(exprPhrase(item.expr, resolve), 300);
}

export function exprLabel(expr: Expr, resolve: ColumnResolver): string {
  return clip(exprPhrase(expr, resolve), 300);
}

const COMPARISON_WORDS: Partial<Record<BinaryExpr['op'], string>> = {
  '=': 'is',
  '!=': 'is not',
  '<': 'is below',
  '<=': 'is at most',
  '>': 'is above',
  '>=': 'is at least',
  IS: 'is',
  'IS NOT': 'is not',
};
const ARITHMETIC_PHRASES: Partial<Record<BinaryExpr['op'], [string, string]>> = {
  '-': ['the difference between', 'and'],
  '+': ['the sum of', 'and'],
  '*': ['the product of', 'and'],
  '/': ['the ratio of', 'to'],
  '%': ['the remainder of', 'divided by'],
  '||': ['the concatenation of', 'and'],
};
const ARITHMETIC_WORDS: Partial<Record<BinaryExpr['op'], string>> = {
  '-': 'difference',
  '+': 'sum',
  '*': 'product',
  '/': 'ratio',
  '%': 'remainder',
  '||': 'concatenation',
};
/** Scalar functions in words, from their arguments' phrases (absent: "<function> of <arguments>"). */
const FUNCTION_WORDS: Record<string, (args: Expr[]) => string> = {
  STRFTIME: (args) => (args[0]?.kind === 'literal' ? (formatPart(String(args[0].value)) ?? 'formatted date') : 'date'),
  SUBSTR: () => 'part',
  SUBSTRING: () => 'part',
  JULIANDAY: () => 'julian day',
  ROUND: () => 'rounded',
  ABS: () => 'absolute value',
  LENGTH: () => 'length',
  DATE: () => 'date',
  INSTR: () => 'position',
};

/** An expression in words for a reader: columns by their description, computations by what they compute. */
export function exprPhrase(expr: Expr, resolve: ColumnResolver): string {
  const p = (e: Expr) => exprPhrase(e, resolve);
  switch (expr.kind) {
    case 'column':
      return describe(expr, resolve);
    case 'literal': {
      const name = placeholderIn(expr);
      return name !== null ? `the given ${words(name).join(' ')}` : expr.raw;
    }
    case 'aggregate':
      return aggregatePhrase(expr, resolve);
    case 'binary': {
      const comparison = COMPARISON_WORDS[expr.op];
      if (comparison) return `${p(expr.left)} ${comparison} ${p(expr.right)}`;
      if (expr.op === 'AND' || expr.op === 'OR') return `${p(expr.left)} ${expr.op.toLowerCase()} ${p(expr.right)}`;
      const percentage = percentageParts(expr);
      if (percentage) return `${p(percentage.part)} as a percentage of ${p(percentage.whole)}`;
      const [lead, join] = ARITHMETIC_PHRASES[expr.op]!;
      return `${lead} ${p(expr.left)} ${join} ${p(expr.right)}`;
    }
    case 'unary':
      return expr.op === 'NOT'
        ? `not (${p(expr.operand)})`
        : expr.op === '-'
          ? `minus ${p(expr.operand)}`
          : p(expr.operand);
    case 'function':
      return functionPhrase(expr.name, expr.args, resolve);
    case 'cast':
      return p(expr.expr);
    case 'case':
      return `${expr.whens.map((w) => `${p(w.then)} when ${p(w.when)}`).join(', ')}${expr.else ? `, else ${p(expr.else)}` : ''}`;
    case 'window':
      return `the ${expr.name.toLowerCase().replace(/_/g, ' ')}${expr.args.length ? ` of ${expr.args.map(p).join(', ')}` : ''}${expr.partitionBy.length ? ` per ${expr.partitionBy.map(p).join(', ')}` : ''}${expr.orderBy.length ? ` by ${expr.orderBy.map((o) => p(o.expr)).join(', ')}` : ''}`;
    case 'in':
      return `${p(expr.expr)} is ${expr.not ? 'not ' : ''}one of ${expr.list ? expr.list.map(p).join(', ') : expr.subquery ? queryPhrase(expr.subquery, resolve) : 'a list'}`;
    case 'between':
      return `${p(expr.expr)} is ${expr.not ? 'not ' : ''}between ${p(expr.low)} and ${p(expr.high)}`;
    case 'like':
      return `${p(expr.expr)} ${expr.not ? 'does not match' : 'matches'} ${p(expr.pattern)}`;
    case 'isNull':
      return `${p(expr.expr)} is ${expr.not ? 'set' : 'missing'}`;
    case 'exists':
      return `there is ${expr.not ? 'no' : 'a'} matching ${queryPhrase(expr.query, resolve)}`;
    case 'subquery':
      return queryPhrase(expr.query, resolve);
  }
}

function aggregatePhrase(expr: AggregateExpr, resolve: ColumnResolver): string {
  const arg = expr.arg ? unwrapped(expr.arg) : null;
  if (arg === null) return 'number of rows';
  if (expr.name === 'SUM' || expr.name === 'TOTAL') {
    // SUM(CASE WHEN c THEN 1 ELSE 0 END), SUM(c): a count of the rows where c holds.
    if (isCondition(arg)) return `number of rows where ${exprPhrase(arg, resolve)}`;
    const when = arg.kind === 'case' && arg.whens.length === 1 && isZero(arg.else) ? arg.whens[0] : null;
    if (when) {
      const counted = isOne(when.then) ? 'number of rows' : `total of ${exprPhrase(when.then, resolve)}`;
      return `${counted} where ${exprPhrase(when.when, resolve)}`;
    }
  }
  const what = exprPhrase(arg, resolve);
  const word = expr.name === 'COUNT' ? 'number' : AGGREGATE_WORDS[expr.name];
  // "total of the total amount spent" says it twice: a sum of totals is their sum.
  const said = word === 'total' && /^(the )?total\b/i.test(what) ? 'sum' : word;
  return `${said} of ${expr.distinct ? 'distinct ' : ''}${what}`;
}

function functionPhrase(name: string, args: Expr[], resolve: ColumnResolver): string {
  const p = (e: Expr) => exprPhrase(e, resolve);
  const subject = name === 'STRFTIME' ? args[1] : args[0];
  if (name === 'COALESCE' || name === 'IFNULL')
    return `${p(args[0])}, or ${args.slice(1).map(p).join(', or ')} when missing`;
  if (['UPPER', 'LOWER', 'TRIM', 'LTRIM', 'RTRIM'].includes(name) && subject) return p(subject);
  const what = FUNCTION_WORDS[name]?.(args);
  if (what && subject) return `the ${what} of ${p(subject)}`;
  return `${name.toLowerCase()} of ${args.map(p).join(', ')}`;
}

function queryPhrase(query: Query, resolve: ColumnResolver): string {
  if (query.kind === 'set')
    return `${queryPhrase(query.left, resolve)} ${query.op} ${queryPhrase(query.right, resolve)}`;
  const tables = query.from ? [query.from.base, ...query.from.joins.map((j) => j.item)] : [];
  const from = tables.map((t) => (t.kind === 'table' ? t.table : 'a derived table'));
  return `${query.columns.map((c) => exprPhrase(c.expr, resolve)).join(', ')}${from.length ? ` of ${[...new Set(from)].join(', ')}` : ''}`;
}

/** The first SELECT of a query (a compound query's columns are its first SELECT's). */
export function firstSelect(query: Query): SelectQuery {
  return query.kind === 'select' ? query : firstSelect(query.left);
}

/** `part * 100 / whole` or `part / whole * 100` (casts aside): a percentage. */
export function percentageParts(expr: BinaryExpr): { part: Expr; whole: Expr } | null {
  const left = unwrapped(expr.left);
  const right = unwrapped(expr.right);
  if (expr.op === '/' && left.kind === 'binary' && left.op === '*') {
    if (isHundred(left.right)) return { part: left.left, whole: expr.right };
    if (isHundred(left.left)) return { part: left.right, whole: expr.right };
  }
  if (expr.op === '*' && isHundred(right) && left.kind === 'binary' && left.op === '/')
    return { part: left.left, whole: left.right };
  if (expr.op === '*' && isHundred(left) && right.kind === 'binary' && right.op === '/')
    return { part: right.left, whole: right.right };
  return null;
}

function unwrapped(expr: Expr): Expr {
  return expr.kind === 'cast' ? unwrapped(expr.expr) : expr;
}

function isNumber(expr: Expr | null, value: number): boolean {
  const e = expr && unwrapped(expr);
  return e?.kind === 'literal' && typeof e.value === 'number' && e.value === value;
}

const isHundred = (expr: Expr) => isNumber(expr, 100);
const isOne = (expr: Expr) => isNumber(expr, 1);
const isZero = (expr: Expr | null) =>
  expr === null || isNumber(expr, 0) || (expr.kind === 'literal' && expr.value === null);

function isCondition(expr: Expr): boolean {
  return (
    (expr.kind === 'binary' && (expr.op in COMPARISON_WORDS || expr.op === 'AND' || expr.op === 'OR')) ||
    ['in', 'between', 'like', 'isNull', 'exists'].includes(expr.kind)
  );
}
