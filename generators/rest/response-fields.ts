import type { ColumnInfo, DatabaseInfo, ResultSet, SqlValue } from '../../core/model.js';
import type { Expr, FromClause, Query, SelectItem, SelectQuery } from '../sql/ast.js';
import { castAffinity, parseQuery } from '../sql/normalize.js';
import {
  FIELD_NAME,
  type EndpointSpec,
  type ResponseField,
  type ResponseShape,
  type ResponseSpec,
} from '../../runtime/rest/spec.js';
import { replacePlaceholders } from '../../runtime/rest/placeholders.js';
import { clip, columnLabel, formatPart, nameWords, snake, uniqueName, words } from './naming.js';
import { arithmeticName, firstColumn, firstSelect, itemPhrase, percentageParts } from './select-items.js';
import { columnResolver, type ColumnResolver } from './columns.js';

/**
 * An endpoint's response as a real API's (issue 14): one field per result column, named in
 * snake_case for what it means — the alias, the column (qualified by its table when two
 * columns share a name), an aggregate or expression for what it computes (`account_count`,
 * `average_salary`, `gender_percentage`) — typed from the declared types and the values seen,
 * nullable unless the schema rules NULL out; one object, one object or null, or a list, as
 * the query's shape guarantees. Pure: the SQL, the schema and the trial run's rows in.
 */

type FieldType = ResponseField['types'][number];
type Typing = { types: Set<FieldType>; nullable: boolean };

const ANY: FieldType[] = ['integer', 'number', 'string'];

/** The response of an endpoint whose SQL ran with `observed` (null when it did not run). */
export function describeResponse(
  spec: Pick<EndpointSpec, 'sql'>,
  db: DatabaseInfo,
  observed: ResultSet | null,
): ResponseSpec {
  // A placeholder parses as NULL: never mistaken for a value the shape depends on (`LIMIT :n`).
  const parsed = parseQuery(
    replacePlaceholders(spec.sql, () => 'NULL'),
    db,
  );
  const query = parsed.ok ? parsed.value.query : null;
  const select = query ? firstSelect(query) : null;
  const width = observed?.columns.length ?? select?.columns.length ?? 0;
  // The parse is ours; the width is SQLite's: the items name the columns only when they agree.
  const items = select && select.columns.length === width ? select.columns : null;
  const resolve = query && select ? columnResolver(query, db) : null;
  const taken = new Set<string>();
  const counted = select?.from?.base.kind === 'table' ? words(select.from.base.table) : ['row'];
  const bases = Array.from({ length: width }, (_, i) =>
    items && resolve ? itemName(items[i], { resolve, counted }) : nameOf(words(observed?.columns[i] ?? '')),
  );
  // A name two columns share is qualified by each column's table, then numbered.
  const qualified = bases.map((base, i) =>
    bases.indexOf(base) !== bases.lastIndexOf(base) && items ? qualifiedName(items[i], base) : base,
  );
  const fields = qualified.map((base, i): ResponseField => {
    const typing = items && select ? exprTyping(items[i].expr, select, db) : { types: new Set(ANY), nullable: true };
    for (const row of observed?.rows ?? []) observe(typing, row[i]);
    return {
      name: uniqueName(base, taken),
      description: fieldDescription(
        items?.[i] ?? null,
        resolve,
        observed?.columns[i] ?? `column ${i + 1}`,
        query ? columnTables(query, i, db) : [],
      ),
      types: ANY.filter((t) => typing.types.has(t)),
      nullable: typing.nullable,
    };
  });
  const shape = query ? shapeOf(query) : 'list';
  return { description: responseDescription(shape, fields), shape, fields };
}

const SHAPE_TEXT: Record<ResponseShape, string> = {
  object: 'One object',
  object_or_null: 'One object, or null when no row matches',
  list: 'A list of objects, one per row',
};

/** What the response is, said from its shape and fields (a synthesizer's own words described the SQL's columns). */
function responseDescription(shape: ResponseShape, fields: readonly ResponseField[]): string {
  return clip(`${SHAPE_TEXT[shape]}, with ${fields.map((f) => `${f.name} (${f.description})`).join(', ')}.`, 1000);
}

// ---- shape -----------------------------------------------------------------------------------

/**
 * One row by construction: an aggregate query without GROUP BY, HAVING or OFFSET (exactly
 * one row), or LIMIT 1 (at most one). Anything else, a list: ties and joins can always add rows.
 */
export function shapeOf(query: Query): ResponseShape {
  const limit = query.limit?.kind === 'literal' ? query.limit.value : null;
  if (query.offset) return limit === 1 || limit === 0 ? 'object_or_null' : 'list';
  if (limit === 1 || limit === 0) return 'object_or_null';
  if (query.kind !== 'select' || query.groupBy.length || query.having) return 'list';
  if (!query.from && !query.where) return 'object';
  const aggregated = query.columns.some((item) => containsAggregate(item.expr));
  return aggregated && query.limit === null ? 'object' : aggregated ? 'object_or_null' : 'list';
}

function containsAggregate(expr: Expr): boolean {
  switch (expr.kind) {
    case 'aggregate':
      return true;
    case 'binary':
      return containsAggregate(expr.left) || containsAggregate(expr.right);
    case 'unary':
      return containsAggregate(expr.operand);
    case 'function':
      return expr.args.some(containsAggregate);
    case 'cast':
      return containsAggregate(expr.expr);
    case 'case':
      return (
        expr.whens.some((w) => containsAggregate(w.when) || containsAggregate(w.then)) ||
        (expr.else !== null && containsAggregate(expr.else))
      );
    default:
      return false;
  }
}

// ---- names -----------------------------------------------------------------------------------

const AGGREGATE_NAMES: Record<string, (what: string[]) => string[]> = {
  COUNT: (what) => [...what, 'count'],
  SUM: (what) => ['total', ...what],
  TOTAL: (what) => ['total', ...what],
  AVG: (what) => ['average', ...what],
  MIN: (what) => ['min', ...what],
  MAX: (what) => ['max', ...what],
  GROUP_CONCAT: (what) => [...what, 'list'],
};

const FUNCTION_WORDS: Record<string, string[]> = {
  SUBSTR: ['part'],
  SUBSTRING: ['part'],
  LENGTH: ['length'],
  LOWER: ['lowercase'],
  UPPER: ['uppercase'],
  ROUND: ['rounded'],
  ABS: ['absolute'],
  JULIANDAY: ['julian', 'day'],
  DATE: ['date'],
  DATETIME: ['datetime'],
  INSTR: ['position'],
};

interface NamingContext {
  resolve: ColumnResolver;
  /** What `COUNT(*)` counts: the rows of the first table. */
  counted: string[];
}

function itemName(item: SelectItem, ctx: NamingContext): string {
  return nameOf(item.alias ? words(item.alias) : exprWords(item.expr, ctx));
}

/** Words for what an expression computes, from the column it is about. */
function exprWords(expr: Expr, ctx: NamingContext): string[] {
  const { resolve } = ctx;
  // A condition counted or averaged (`CASE WHEN colour = 'Blue' THEN 1 …`) is about its column.
  const about = (e: Expr): string[] => {
    const column = firstColumn(conditionOf(e) ?? e);
    if (!column) return [];
    const info = resolve({ qualifier: column.source, name: column.column });
    const own = withoutId(nameWords(column.column, info?.column.description ?? ''));
    return own.length === 1 && own[0] === 'id' && info ? words(info.table.name) : own;
  };
  switch (expr.kind) {
    case 'column': {
      const info = resolve({ qualifier: expr.source, name: expr.column });
      return nameWords(expr.column, info?.column.description ?? '');
    }
    case 'aggregate': {
      // An aggregate of arithmetic is of what the arithmetic computes (SUM(price * quantity) is not a total quantity).
      const arithmetic =
        expr.arg?.kind === 'binary' &&
        ARITHMETIC.has(expr.arg.op) &&
        !conditionOf(expr.arg) &&
        !percentageParts(expr.arg);
      const what = expr.arg ? (arithmetic ? exprWords(expr.arg, ctx) : about(expr.arg)) : [];
      const counted = expr.name === 'COUNT' && what.length === 0 ? ctx.counted : what;
      // SUM(CASE WHEN … THEN 1 ELSE 0 END), or SUM(type = 'OWNER'), counts the rows that meet the condition.
      const summedComparison =
        (expr.name === 'SUM' || expr.name === 'TOTAL') && expr.arg?.kind === 'binary' && COMPARISONS.has(expr.arg.op);
      const name = expr.arg && (countsCondition(expr.arg) || summedComparison) ? 'COUNT' : expr.name;
      return AGGREGATE_NAMES[name]([...(expr.distinct ? ['distinct'] : []), ...counted]);
    }
    case 'cast':
      return exprWords(expr.expr, ctx);
    case 'unary':
      return expr.op === 'NOT' ? ['not', ...exprWords(expr.operand, ctx)] : exprWords(expr.operand, ctx);
    case 'binary':
      // Named by what it computes (price × quantity, a date difference in days), else by its first column and operation.
      return arithmeticName(expr, about) ?? [...about(expr), ...binaryWords(expr)];
    case 'function': {
      const format = expr.name.toUpperCase() === 'STRFTIME' && expr.args[0]?.kind === 'literal' ? expr.args[0] : null;
      const part = format ? words(formatPart(String(format.value)) ?? '') : FUNCTION_WORDS[expr.name.toUpperCase()];
      return [...about(expr), ...(part ?? words(expr.name))];
    }
    case 'case':
      return [...about(expr), 'category'];
    case 'subquery':
      return expr.query.kind === 'select' && expr.query.columns[0]
        ? exprWords(expr.query.columns[0].expr, ctx)
        : ['value'];
    case 'literal':
      return ['value'];
    case 'window':
      return [...about(expr), ...words(expr.name)];
    default:
      return [...about(expr), 'flag'];
  }
}

const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);
const COMPARISONS = new Set(['=', '==', '!=', '<>', '<', '<=', '>', '>=']);

/** The condition a CASE or IIF tests, the first found. */
function conditionOf(expr: Expr): Expr | null {
  if (expr.kind === 'case') return expr.whens[0]?.when ?? null;
  if (expr.kind === 'function' && expr.name.toUpperCase() === 'IIF') return expr.args[0] ?? null;
  const children =
    expr.kind === 'binary'
      ? [expr.left, expr.right]
      : expr.kind === 'cast'
        ? [expr.expr]
        : expr.kind === 'aggregate' && expr.arg
          ? [expr.arg]
          : expr.kind === 'unary'
            ? [expr.operand]
            : [];
  for (const child of children) {
    const found = conditionOf(child);
    if (found) return found;
  }
  return null;
}

/** `CASE WHEN c THEN 1 ELSE 0 END` or `IIF(c, 1, 0)`: a summed condition is a count. */
function countsCondition(expr: Expr): boolean {
  const one = (e: Expr | null | undefined) => e?.kind === 'literal' && e.value === 1;
  const zero = (e: Expr | null | undefined) => !e || (e.kind === 'literal' && (e.value === 0 || e.value === null));
  if (expr.kind === 'case') return expr.whens.every((w) => one(w.then)) && zero(expr.else);
  if (expr.kind === 'function' && expr.name.toUpperCase() === 'IIF') return one(expr.args[1]) && zero(expr.args[2]);
  return false;
}

/** Arithmetic named for its result: `* 100` over a division is a percentage. */
function binaryWords(expr: Extract<Expr, { kind: 'binary' }>): string[] {
  if (percentageParts(expr)) return ['percentage'];
  switch (expr.op) {
    case '/':
      return ['ratio'];
    case '-':
      return ['difference'];
    case '+':
      return ['sum'];
    case '*':
      return ['product'];
    case '%':
      return ['remainder'];
    case '||':
      return ['text'];
    default:
      return ['flag'];
  }
}

/** `account_id` counted is accounts: `account`. */
function withoutId(parts: string[]): string[] {
  return parts.length > 1 && parts[parts.length - 1] === 'id' ? parts.slice(0, -1) : parts;
}

/** A field name: snake_case words, a letter first, at most 64 characters. */
function nameOf(parts: string[]): string {
  const joined = snake(parts.length ? parts : ['value'])
    .slice(0, 60)
    .replace(/_+$/, '');
  const name = /^[a-z]/.test(joined) ? joined : `f_${joined}`.slice(0, 60);
  return FIELD_NAME.test(name) ? name : 'value';
}

function qualifiedName(item: SelectItem, base: string): string {
  const column = item.expr.kind === 'column' ? item.expr : null;
  return column?.table ? nameOf([...words(column.table), ...base.split('_')]) : base;
}

/** `tables`: the tables the result column is read from, one per branch of a compound query (columnTables). */
function fieldDescription(
  item: SelectItem | null,
  resolve: ColumnResolver | null,
  column: string,
  tables: readonly string[],
): string {
  if (!item || !resolve) return clip(`The result column ${column}`, 500);
  const expr = item.expr;
  if (expr.kind === 'column') {
    const info = resolve({ qualifier: expr.source, name: expr.column });
    const label = columnLabel(expr.column, info?.column.description ?? '');
    const values = info?.column.valueDescription.trim().replace(/\s+/g, ' ') ?? '';
    const where = tables.length ? ` of ${tables.join(' or ')}` : info ? ` of ${info.table.name}` : '';
    return clip(`${capitalized(label)}${where}${values && values.length <= 200 ? ` (${values})` : ''}`, 500);
  }
  return clip(capitalized(itemPhrase(item, resolve)), 500);
}

/**
 * The tables result column `i` is a plain column of, each branch of a compound query
 * resolved in its own scope (`SELECT city FROM store UNION SELECT city FROM customer`: store
 * or customer); empty for a simple query, whose resolver says it.
 */
function columnTables(query: Query, i: number, db: DatabaseInfo): string[] {
  if (query.kind !== 'set') return [];
  const tables = compoundBranches(query).flatMap((branch) => {
    const item = branch.columns[i]?.expr;
    if (item?.kind !== 'column') return [];
    const info = columnResolver(branch, db)({ qualifier: item.source, name: item.column });
    return info ? [info.table.name] : [];
  });
  return [...new Set(tables)];
}

function compoundBranches(query: Query): SelectQuery[] {
  return query.kind === 'set' ? [...compoundBranches(query.left), ...compoundBranches(query.right)] : [query];
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

// ---- types -----------------------------------------------------------------------------------

function observe(typing: Typing, value: SqlValue | undefined): void {
  if (value === null || value === undefined) typing.nullable = true;
  else if (typeof value === 'string') typing.types.add('string');
  else typing.types.add(Number.isInteger(value) ? 'integer' : 'number');
}

const typing = (types: FieldType[], nullable: boolean): Typing => ({ types: new Set(types), nullable });

/**
 * The JSON types an expression's values take and whether it can be NULL, from the declared
 * column types (their affinity: an INTEGER column may still hold text, SQLite being
 * dynamically typed, so only what affinity guarantees is narrowed) and the operators.
 */
function exprTyping(expr: Expr, select: SelectQuery, db: DatabaseInfo): Typing {
  const of = (e: Expr) => exprTyping(e, select, db);
  switch (expr.kind) {
    case 'literal':
      return expr.type === 'null'
        ? typing(['string'], true)
        : typing([expr.type === 'text' ? 'string' : expr.type === 'real' ? 'number' : 'integer'], false);
    case 'column':
      return columnTyping(expr, select, db);
    case 'aggregate':
      switch (expr.name) {
        case 'COUNT':
          return typing(['integer'], false);
        case 'TOTAL':
          return typing(['number'], false);
        case 'AVG':
          return typing(['number'], true);
        case 'GROUP_CONCAT':
          return typing(['string'], true);
        default: {
          const arg = expr.arg ? of(expr.arg) : typing(ANY, true);
          return typing([...arg.types], true);
        }
      }
    case 'cast': {
      const inner = of(expr.expr);
      const to: Record<string, FieldType[]> = { integer: ['integer'], real: ['number'], text: ['string'] };
      return typing(to[expr.to] ?? ANY, inner.nullable);
    }
    case 'binary':
      return binaryTyping(expr, of);
    case 'unary':
      return expr.op === 'NOT' ? typing(['integer'], of(expr.operand).nullable) : of(expr.operand);
    case 'case': {
      const branches = [...expr.whens.map((w) => of(w.then)), expr.else ? of(expr.else) : typing([], true)];
      return typing(
        branches.flatMap((b) => [...b.types]),
        branches.some((b) => b.nullable),
      );
    }
    case 'function':
      return functionTyping(expr, of);
    case 'in':
    case 'between':
    case 'like':
    case 'exists':
      return typing(['integer'], true);
    case 'isNull':
      return typing(['integer'], false);
    default:
      return typing(ANY, true);
  }
}

function binaryTyping(expr: Extract<Expr, { kind: 'binary' }>, of: (e: Expr) => Typing): Typing {
  const left = of(expr.left);
  const right = of(expr.right);
  const nullable = left.nullable || right.nullable;
  if (expr.op === '||') return typing(['string'], nullable);
  if (['+', '-', '*', '/', '%'].includes(expr.op)) {
    // Text in arithmetic is read as a number; a division by zero is NULL.
    const real = left.types.has('number') || right.types.has('number');
    const types: FieldType[] = expr.op === '%' ? ['integer', 'number'] : real ? ['number'] : ['integer', 'number'];
    return typing(types, nullable || expr.op === '/' || expr.op === '%');
  }
  return typing(['integer'], nullable && expr.op !== 'IS' && expr.op !== 'IS NOT');
}

const TEXT_FUNCTIONS = new Set([
  'SUBSTR',
  'SUBSTRING',
  'LOWER',
  'UPPER',
  'TRIM',
  'LTRIM',
  'RTRIM',
  'REPLACE',
  'STRFTIME',
  'DATE',
  'TIME',
  'DATETIME',
  'PRINTF',
  'FORMAT',
  'HEX',
  'TYPEOF',
]);
const INTEGER_FUNCTIONS = new Set(['LENGTH', 'INSTR', 'UNICODE', 'SIGN']);
const REAL_FUNCTIONS = new Set(['ROUND', 'JULIANDAY']);

function functionTyping(expr: Extract<Expr, { kind: 'function' }>, of: (e: Expr) => Typing): Typing {
  const name = expr.name.toUpperCase();
  const args = expr.args.map(of);
  if (TEXT_FUNCTIONS.has(name)) return typing(['string'], true);
  if (INTEGER_FUNCTIONS.has(name)) return typing(['integer'], true);
  if (REAL_FUNCTIONS.has(name)) return typing(['number'], true);
  if (name === 'IIF')
    return union(
      args.slice(1),
      args.slice(1).some((a) => a.nullable),
    );
  if (name === 'COALESCE' || name === 'IFNULL')
    return union(
      args,
      args.every((a) => a.nullable),
    );
  if (name === 'ABS' || name === 'MIN' || name === 'MAX') return union(args, true);
  return typing(ANY, true);
}

function union(parts: readonly Typing[], nullable: boolean): Typing {
  const types = parts.flatMap((p) => [...p.types]);
  return typing(types.length ? types : ANY, nullable);
}

/** A column's affinity types; nullable unless NOT NULL or the rowid, and never on the outer side of a join. */
function columnTyping(expr: Extract<Expr, { kind: 'column' }>, select: SelectQuery, db: DatabaseInfo): Typing {
  const table = expr.table ? db.tables.find((t) => t.name.toLowerCase() === expr.table!.toLowerCase()) : undefined;
  const column = table?.columns.find((c) => c.name.toLowerCase() === expr.column.toLowerCase());
  if (!table || !column) return typing(ANY, true);
  const rowid = table.primaryKey.length === 1 && same(table.primaryKey[0], column.name) && isIntegerType(column);
  const nullable = !(column.notNull || rowid) || outerSide(select.from, expr.source);
  return typing(affinityTypes(column), nullable);
}

function affinityTypes(column: ColumnInfo): FieldType[] {
  switch (castAffinity(column.type.toUpperCase())) {
    // As declared; values of other types the data holds are added as they are seen.
    case 'text':
      return ['string'];
    case 'integer':
      return ['integer'];
    case 'real':
    case 'numeric':
      return ['number'];
    default:
      return ANY;
  }
}

const isIntegerType = (column: ColumnInfo) => column.type.trim().toUpperCase() === 'INTEGER';
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The FROM item `source` can be all NULLs in a row: the inner side of an outer join. */
function outerSide(from: FromClause | null, source: string): boolean {
  if (!from) return false;
  return from.joins.some((join, i) => {
    const isItem = same(join.item.name, source);
    const before = [from.base, ...from.joins.slice(0, i).map((j) => j.item)].some((item) => same(item.name, source));
    return (
      ((join.type === 'left' || join.type === 'full') && isItem) ||
      ((join.type === 'right' || join.type === 'full') && before)
    );
  });
}
