import { allowed } from './errors.js';
import type { Args } from './args.js';
import { CAST_TYPES, ZONE_MODIFIERS, type OperationChoice } from './catalog.js';
import { join, param, raw, sql, type Frag } from './sqlfrag.js';
import { windowSql, type WindowScope } from './windows.js';

/**
 * SQL for the operations of `transform_data` and `calculate` (docs/TOOLS.md,
 * "Operations"): one expression of `subject`, the column or the value operated on.
 */

export interface OperandResolver extends WindowScope {
  /** A list of values, or a reference to one, rendered as `(...)` for IN. */
  values(value: unknown, path: string): Frag;
}

const BINARY: Record<string, string> = {
  add: '+',
  subtract: '-',
  multiply: '*',
  divide: '/',
  modulo: '%',
  concat: '||',
  equal_to: '=',
  not_equal_to: '<>',
  greater_than: '>',
  less_than: '<',
  greater_than_equal_to: '>=',
  less_than_equal_to: '<=',
  like: 'LIKE',
  not_like: 'NOT LIKE',
  and: 'AND',
  or: 'OR',
};

const UNARY: Record<string, (x: Frag) => Frag> = {
  abs: (x) => sql`abs(${x})`,
  negate: (x) => sql`(- ${x})`,
  length: (x) => sql`length(${x})`,
  upper: (x) => sql`upper(${x})`,
  lower: (x) => sql`lower(${x})`,
  trim: (x) => sql`trim(${x})`,
  julianday: (x) => sql`julianday(${x})`,
  is_null: (x) => sql`(${x} IS NULL)`,
  is_not_null: (x) => sql`(${x} IS NOT NULL)`,
  not: (x) => sql`(NOT ${x})`,
};

/** Operations of shape `operand` that are SQL functions of the subject and the operand. */
const OPERAND_FUNCTIONS: Record<string, (x: Frag, y: Frag) => Frag> = {
  coalesce: (x, y) => sql`ifnull(${x}, ${y})`,
  contains: (x, y) => sql`(instr(${x}, ${y}) > 0)`,
  position: (x, y) => sql`instr(${x}, ${y})`,
};

/** Operation arguments only the extended pool offers. */
export const EXTENDED_ARGS: Partial<Record<OperationChoice['shape'], string[]>> = { datetime: ['modifiers'] };

/** The `operation_args` each shape takes (`new_key_name`, transform_data's own, aside). */
export const SHAPE_ARGS: Record<OperationChoice['shape'], string[]> = {
  none: [],
  operand: ['operand'],
  cast: ['to'],
  round: ['digits'],
  substring: ['start_index', 'end_index'],
  substr: ['start', 'length'],
  datetime: ['pattern', 'modifiers'],
  values: ['values'],
  if_then_else: ['then', 'else'],
  rank: ['ascending', 'dense', 'partition_by', 'then_by'],
  row_number: ['ascending', 'then_by', 'partition_by'],
  ntile: ['buckets', 'ascending', 'then_by', 'partition_by'],
  shift: ['order_by', 'offset', 'default', 'partition_by'],
  running: ['aggregation', 'order_by', 'partition_by', 'frame'],
};

/** The `operation_args` each shape cannot do without (what `need` below asks for). */
export const SHAPE_REQUIRED: Record<OperationChoice['shape'], string[]> = {
  none: [],
  operand: ['operand'],
  cast: ['to'],
  round: [],
  substring: ['start_index'],
  substr: ['start'],
  datetime: ['pattern'],
  values: ['values'],
  if_then_else: ['then'],
  rank: [],
  row_number: [],
  ntile: ['buckets'],
  shift: ['order_by'],
  running: ['aggregation'],
};

export function operationSql(
  op: OperationChoice,
  subject: Frag,
  opArgs: Record<string, unknown>,
  args: Args,
  resolver: OperandResolver,
  paper: boolean,
): Frag {
  const names = SHAPE_ARGS[op.shape];
  for (const name of Object.keys(opArgs)) {
    if (paper && EXTENDED_ARGS[op.shape]?.includes(name)) {
      args.fail('not_in_pool', `operation_args.${name} of operation "${op.name}" is not available in this tool pool`);
    }
    if (!names.includes(name)) {
      args.fail(
        'unknown_argument',
        `operation_args."${name}" is not an argument of operation "${op.name}"` +
          (names.length ? `; its arguments are ${allowed(names)}` : '; it takes none'),
      );
    }
  }
  const need = (name: string): unknown => {
    if (opArgs[name] === undefined)
      args.fail('missing_argument', `operation "${op.name}" needs operation_args.${name}`);
    return opArgs[name];
  };
  const integer = (name: string): number => args.integerValue(need(name), `operation_args.${name}`);
  switch (op.shape) {
    case 'none':
      return UNARY[op.name](subject);
    case 'operand': {
      const other = resolver.operand(need('operand'), 'operation_args.operand');
      const fn = OPERAND_FUNCTIONS[op.name];
      return fn ? fn(subject, other) : sql`(${subject} ${raw(BINARY[op.name])} ${other})`;
    }
    case 'cast': {
      const to = need('to');
      if (typeof to !== 'string' || !(CAST_TYPES as readonly string[]).includes(to.toLowerCase())) {
        args.fail('bad_value', `operation_args.to must be one of ${allowed(CAST_TYPES)}`);
      }
      return sql`CAST(${subject} AS ${raw(to.toUpperCase())})`;
    }
    case 'round':
      return opArgs.digits === undefined || opArgs.digits === null
        ? sql`round(${subject})`
        : sql`round(${subject}, ${param(integer('digits'))})`;
    case 'datetime': {
      const pattern = need('pattern');
      if (typeof pattern !== 'string') args.fail('wrong_type', 'operation_args.pattern must be a string');
      const modifiers = datetimeModifiers(opArgs.modifiers, args);
      return sql`strftime(${join([param(pattern), subject, ...modifiers.map((m) => param(m))], ', ')})`;
    }
    case 'substring':
      return substring(subject, integer('start_index'), opArgs.end_index == null ? undefined : integer('end_index'));
    case 'substr': {
      // SQLite's own substr: its bounds rules (1-based, negative start and length, start 0) are the contract.
      const start = resolver.operand(need('start'), 'operation_args.start');
      if (opArgs.length == null) return sql`substr(${subject}, ${start})`;
      return sql`substr(${subject}, ${start}, ${resolver.operand(opArgs.length, 'operation_args.length')})`;
    }
    case 'values': {
      const list = resolver.values(need('values'), 'operation_args.values');
      return sql`(${subject} ${raw(op.name === 'in' ? 'IN' : 'NOT IN')} ${list})`;
    }
    case 'if_then_else': {
      const then = resolver.operand(need('then'), 'operation_args.then');
      const otherwise = opArgs.else === undefined ? raw('NULL') : resolver.operand(opArgs.else, 'operation_args.else');
      return sql`(CASE WHEN ${subject} THEN ${then} ELSE ${otherwise} END)`;
    }
    case 'rank':
    case 'row_number':
    case 'ntile':
    case 'shift':
    case 'running':
      SHAPE_REQUIRED[op.shape].forEach(need);
      return windowSql({ name: op.name, shape: op.shape }, subject, opArgs, args, resolver);
  }
}

/**
 * SQLite date/time modifiers ('+1 day', 'start of month', 'weekday 0', ...), applied left
 * to right as strftime does; the time-zone ones are refused (ZONE_MODIFIERS).
 */
function datetimeModifiers(value: unknown, args: Args): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((m) => typeof m !== 'string')) {
    args.fail('wrong_type', 'operation_args.modifiers must be a list of strings');
  }
  const modifiers = value as string[];
  const zone = modifiers.find((m) => (ZONE_MODIFIERS as readonly string[]).includes(m.trim().toLowerCase()));
  if (zone !== undefined)
    args.fail('bad_value', `operation_args.modifiers: "${zone}" depends on the machine's time zone, not on the data`);
  return modifiers;
}

/**
 * Python slice `x[start:end]` on the text of x: bounds clamp to [0, length], negative
 * bounds count from the end. SUBSTR is 1-based with a length, hence the arithmetic.
 */
function substring(x: Frag, start: number, end: number | undefined): Frag {
  if (start >= 0 && end === undefined) return sql`substr(${x}, ${param(start + 1)})`;
  if (start >= 0 && end !== undefined && end >= 0) {
    return sql`substr(${x}, ${param(start + 1)}, ${param(Math.max(end - start, 0))})`;
  }
  const bound = (b: number): Frag =>
    b >= 0 ? sql`min(${param(b)}, length(${x}))` : sql`max(length(${x}) + ${param(b)}, 0)`;
  const from = bound(start);
  const to = end === undefined ? sql`length(${x})` : bound(end);
  return sql`substr(${x}, ${from} + 1, max(${to} - ${from}, 0))`;
}
