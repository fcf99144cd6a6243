import type { ToolPool } from '../../core/model.js';

/**
 * What each pool offers (docs/TOOLS.md): tools, filter conditions, aggregation types and
 * transform operations, with the wording the tool specs show models. The compiler checks
 * calls against these lists and the spec builder renders them, so the two never drift.
 */

export const PAPER_TOOLS = [
  'filter_data',
  'sort_data',
  'retrieve_data',
  'aggregate_data',
  'group_data_by',
  'select_unique_values',
  'transform_data',
] as const;
export const EXTENDED_ONLY_TOOLS = ['union_data', 'calculate', 'combine_data', 'join_data'] as const;
export const INITIALIZE_TOOL = 'initialize_active_data';

export type SlotTool = (typeof PAPER_TOOLS)[number] | (typeof EXTENDED_ONLY_TOOLS)[number];

export function toolsOf(pool: ToolPool): readonly SlotTool[] {
  return pool === 'paper' ? PAPER_TOOLS : [...PAPER_TOOLS, ...EXTENDED_ONLY_TOOLS];
}

export interface Choice {
  name: string;
  paper: boolean;
  description: string;
}

export const CONDITIONS: readonly Choice[] = [
  { name: 'equal_to', paper: true, description: 'key = value' },
  { name: 'not_equal_to', paper: true, description: 'key <> value' },
  { name: 'greater_than', paper: true, description: 'key > value' },
  { name: 'less_than', paper: true, description: 'key < value' },
  { name: 'greater_than_equal_to', paper: true, description: 'key >= value' },
  { name: 'less_than_equal_to', paper: true, description: 'key <= value' },
  { name: 'contains', paper: true, description: 'key contains the text value (case-sensitive substring)' },
  {
    name: 'like',
    paper: true,
    description: "key matches the SQL LIKE pattern value ('%' any text, '_' one character)",
  },
  { name: 'not_like', paper: false, description: 'key does not match the SQL LIKE pattern value' },
  { name: 'not_contains', paper: false, description: 'key does not contain the text value' },
  { name: 'in', paper: false, description: 'key is one of value (a list, or "$LABEL$" of a list)' },
  { name: 'not_in', paper: false, description: 'key is none of value (a list, or "$LABEL$" of a list)' },
  { name: 'is_null', paper: false, description: 'key is missing (NULL); value is ignored' },
  { name: 'is_not_null', paper: false, description: 'key is present (not NULL); value is ignored' },
];

export const AGGREGATIONS: readonly Choice[] = [
  { name: 'min', paper: true, description: 'smallest value' },
  { name: 'max', paper: true, description: 'largest value' },
  { name: 'sum', paper: true, description: 'sum of the values' },
  { name: 'mean', paper: true, description: 'average of the values' },
  { name: 'count', paper: true, description: 'number of non-missing values (key_name "*": number of rows)' },
  { name: 'std', paper: true, description: 'sample standard deviation of the values' },
  { name: 'argmin', paper: true, description: 'the first row holding the smallest value (a one-row table)' },
  { name: 'argmax', paper: true, description: 'the first row holding the largest value (a one-row table)' },
];

/** The shape of an operation's `operation_args`. */
export type OperationShape =
  'none' | 'operand' | 'cast' | 'round' | 'substring' | 'substr' | 'datetime' | 'values' | 'if_then_else' | WindowShape;

/** Shapes of the window operations: they see the table's rows, so only transform_data offers them. */
export const WINDOW_SHAPES = ['rank', 'row_number', 'ntile', 'shift', 'running'] as const;
export type WindowShape = (typeof WINDOW_SHAPES)[number];

export function isWindow(op: OperationChoice): boolean {
  return (WINDOW_SHAPES as readonly string[]).includes(op.shape);
}

export interface OperationChoice extends Choice {
  shape: OperationShape;
}

export const OPERATIONS: readonly OperationChoice[] = [
  {
    name: 'substring',
    paper: true,
    shape: 'substring',
    description:
      'part of the text: operation_args {start_index, end_index?}, 0-based, end exclusive; a negative start_index counts from the end',
  },
  { name: 'abs', paper: true, shape: 'none', description: 'absolute value' },
  {
    name: 'datetime',
    paper: true,
    shape: 'datetime',
    description:
      "formats a date/time with operation_args {pattern}, an SQLite strftime pattern such as '%Y' or '%Y-%m'",
  },
  { name: 'add', paper: false, shape: 'operand', description: 'key + operand' },
  { name: 'subtract', paper: false, shape: 'operand', description: 'key - operand' },
  { name: 'multiply', paper: false, shape: 'operand', description: 'key * operand' },
  {
    name: 'divide',
    paper: false,
    shape: 'operand',
    description: 'key / operand (integer / integer is integer division; division by zero gives null)',
  },
  { name: 'modulo', paper: false, shape: 'operand', description: 'key % operand' },
  {
    name: 'cast',
    paper: false,
    shape: 'cast',
    description: 'converts the type: operation_args {to: "integer" | "real" | "text" | "numeric"}',
  },
  { name: 'round', paper: false, shape: 'round', description: 'rounds: operation_args {digits?} (default 0)' },
  { name: 'negate', paper: false, shape: 'none', description: '-key' },
  { name: 'length', paper: false, shape: 'none', description: 'number of characters' },
  { name: 'upper', paper: false, shape: 'none', description: 'upper case' },
  { name: 'lower', paper: false, shape: 'none', description: 'lower case' },
  { name: 'trim', paper: false, shape: 'none', description: 'removes surrounding spaces' },
  {
    name: 'position',
    paper: false,
    shape: 'operand',
    description:
      'where the text operand first occurs in key: 1 for the first character, 0 if it does not occur (null if either is null)',
  },
  {
    name: 'substr',
    paper: false,
    shape: 'substr',
    description:
      "part of the text as SQL's substr: operation_args {start: operand, length?: operand}; start is 1-based and a negative start counts from the end; a negative length takes the characters before start; without length, the rest of the text (null if any is null)",
  },
  { name: 'julianday', paper: false, shape: 'none', description: 'the date as a Julian day number' },
  { name: 'concat', paper: false, shape: 'operand', description: 'key followed by operand, as text' },
  { name: 'coalesce', paper: false, shape: 'operand', description: 'key, or operand where key is null' },
  { name: 'equal_to', paper: false, shape: 'operand', description: '1 if key = operand, else 0 (null if unknown)' },
  { name: 'not_equal_to', paper: false, shape: 'operand', description: '1 if key <> operand, else 0' },
  { name: 'greater_than', paper: false, shape: 'operand', description: '1 if key > operand, else 0' },
  { name: 'less_than', paper: false, shape: 'operand', description: '1 if key < operand, else 0' },
  { name: 'greater_than_equal_to', paper: false, shape: 'operand', description: '1 if key >= operand, else 0' },
  { name: 'less_than_equal_to', paper: false, shape: 'operand', description: '1 if key <= operand, else 0' },
  { name: 'like', paper: false, shape: 'operand', description: '1 if key matches the LIKE pattern operand, else 0' },
  { name: 'not_like', paper: false, shape: 'operand', description: '1 if key does not match the LIKE pattern operand' },
  { name: 'contains', paper: false, shape: 'operand', description: '1 if key contains the text operand, else 0' },
  { name: 'in', paper: false, shape: 'values', description: '1 if key is one of operation_args {values: [...]}' },
  { name: 'not_in', paper: false, shape: 'values', description: '1 if key is none of operation_args {values: [...]}' },
  { name: 'is_null', paper: false, shape: 'none', description: '1 if key is null, else 0' },
  { name: 'is_not_null', paper: false, shape: 'none', description: '1 if key is not null, else 0' },
  { name: 'and', paper: false, shape: 'operand', description: 'key AND operand (truth values, three-valued)' },
  { name: 'or', paper: false, shape: 'operand', description: 'key OR operand (truth values, three-valued)' },
  { name: 'not', paper: false, shape: 'none', description: 'NOT key' },
  {
    name: 'if_then_else',
    paper: false,
    shape: 'if_then_else',
    description: 'operation_args {then: operand, else?: operand}: then where key is true, else else (null if missing)',
  },
  {
    name: 'rank',
    paper: false,
    shape: 'rank',
    description:
      "the row's rank by key among the table's rows, 1 for the first (transform_data only): operation_args {ascending?: boolean (default false: the largest first), dense?: boolean (default false: tied rows share a rank and the next rank skips, as SQL's RANK; true: no gaps, as DENSE_RANK), partition_by?: [keys] (rank within the rows that share these keys), then_by?: [{key_name, ascending?}] (further keys ranking rows tied on key)}; missing values come first when ascending, last otherwise",
  },
  {
    name: 'row_number',
    paper: false,
    shape: 'row_number',
    description:
      "the row's position by key among the table's rows, 1 for the first, every row a different number (transform_data only): operation_args {ascending?: boolean (default false: the largest first), then_by?: [{key_name, ascending?}] (further keys for rows tied on key), partition_by?: [keys] (number within the rows that share these keys)}; rows still tied keep the table's current order",
  },
  {
    name: 'ntile',
    paper: false,
    shape: 'ntile',
    description:
      "splits the rows, ordered by key, into operation_args.buckets groups of (nearly) equal size and gives the group number, 1 for the first (transform_data only, as SQL NTILE): operation_args {buckets: positive integer, ascending?: boolean (default false), then_by?: [{key_name, ascending?}], partition_by?: [keys]}; rows still tied keep the table's current order",
  },
  {
    name: 'lag',
    paper: false,
    shape: 'shift',
    description:
      "key's value in the row offset rows before, in the order of operation_args.order_by (transform_data only, as SQL LAG): operation_args {order_by: [{key_name, ascending?}] (required), offset?: integer >= 0 (default 1), default?: operand (the value where there is no such row; default null), partition_by?: [keys]}; rows tied on order_by keep the table's current order",
  },
  {
    name: 'lead',
    paper: false,
    shape: 'shift',
    description:
      "key's value in the row offset rows after, in the order of operation_args.order_by (transform_data only, as SQL LEAD): operation_args {order_by: [{key_name, ascending?}] (required), offset?: integer >= 0 (default 1), default?: operand (default null), partition_by?: [keys]}; rows tied on order_by keep the table's current order",
  },
  {
    name: 'running',
    paper: false,
    shape: 'running',
    description:
      'an aggregate of key over a window of rows (transform_data only, as SQL aggregate OVER): operation_args {aggregation: "sum" | "mean" | "count" | "count_rows" | "min" | "max", order_by?: [{key_name, ascending?}], partition_by?: [keys], frame?: {preceding?: integer >= 0 or null, following?: integer >= 0 or null}}. Without order_by: over all rows of the partition; with order_by and no frame: over the rows up to the current one, rows tied on order_by counted together (a running total); with frame: over the rows from preceding rows before (null or omitted: from the first) to following rows after (omitted or 0: the current row; null: to the last), in order_by then the table\'s current order',
  },
];

/** running's aggregates: SQL aggregate functions over the window (count_rows: COUNT(*)). */
export const RUNNING_AGGREGATIONS = ['sum', 'mean', 'count', 'count_rows', 'min', 'max'] as const;

/** join_data's types: which rows of data_source the matches keep, and with what. */
export const JOIN_TYPES: readonly Choice[] = [
  {
    name: 'inner',
    paper: false,
    description: 'one row per matching pair of rows, with the columns of both (INNER JOIN)',
  },
  {
    name: 'left',
    paper: false,
    description:
      "the inner join's rows, plus every row of data_source that matches none, with other_data_source's columns missing (LEFT JOIN)",
  },
  {
    name: 'semi',
    paper: false,
    description: 'the rows of data_source that match at least one row of other_data_source, each once (EXISTS)',
  },
  {
    name: 'anti',
    paper: false,
    description: 'the rows of data_source that match no row of other_data_source (NOT EXISTS)',
  },
];

/** combine_data's operations: SQLite's compound SELECT operators. */
export const SET_OPERATIONS: readonly Choice[] = [
  { name: 'union', paper: false, description: 'the rows in either input, each distinct row once (UNION)' },
  {
    name: 'union_all',
    paper: false,
    description: 'all rows of the first input, then all rows of the second (UNION ALL)',
  },
  { name: 'intersect', paper: false, description: 'the distinct rows in both inputs (INTERSECT)' },
  {
    name: 'except',
    paper: false,
    description: 'the distinct rows of the first input that are not in the second (EXCEPT)',
  },
];

/**
 * datetime modifiers whose result depends on the machine's time zone, not on the data:
 * refused, so that every output stays deterministic.
 */
export const ZONE_MODIFIERS = ['localtime', 'utc'] as const;

export const CAST_TYPES = ['integer', 'real', 'text', 'numeric'] as const;

export function choicesOf<T extends Choice>(choices: readonly T[], pool: ToolPool): T[] {
  return choices.filter((c) => pool === 'extended' || c.paper);
}
