import type { DatabaseInfo, ToolCall, ToolPool } from '../../core/model.js';
import { RejectionError } from '../../core/outcome.js';
import { AGGREGATIONS, CONDITIONS, OPERATIONS, toolsOf } from '../../runtime/slot/catalog.js';
import { derivedKey, joinedKeys } from '../../runtime/slot/keys.js';

/**
 * The sequence under construction: labelled calls, initializations, and what each table
 * output holds (its keys, which column or computed expression each key carries), tracked
 * exactly as the runtime derives them so that predicted keys are the runtime's keys.
 */

export function unsupported(construct: string, message: string): never {
  throw new RejectionError(`unsupported:${construct}`, message);
}

/** A table output and what its keys mean. */
export interface TableRef {
  label: string;
  keys: string[];
  /** Grouped tables: the member rows' keys (aggregate_data reads them). */
  memberKeys: string[] | null;
  /** Expression signature (see `signature`) -> key holding its value on every row. */
  exprs: Map<string, string>;
}

export type Operand = { key_name: string } | { value: unknown };

export type JoinType = 'inner' | 'left' | 'semi' | 'anti';

export function ref(label: string): string {
  return `$${label}$`;
}

const AGGREGATE_LABELS: Record<string, string> = { mean: 'AVG' };

/** What a non-paper tool, condition or operation is, for `unsupported:<construct>` in the paper pool. */
const PAPER_CONSTRUCT: Record<string, string> = {
  union_data: 'or',
  datetime_modifiers: 'function_datetime',
  not_like: 'not_like',
  not_contains: 'not_like',
  in: 'in',
  not_in: 'in',
  is_null: 'null_check',
  is_not_null: 'null_check',
  add: 'arithmetic',
  subtract: 'arithmetic',
  multiply: 'arithmetic',
  divide: 'arithmetic',
  modulo: 'arithmetic',
  negate: 'arithmetic',
  cast: 'cast',
  if_then_else: 'case',
  position: 'function_instr',
  substr: 'function_substr',
  and: 'boolean_expression',
  or: 'or',
  not: 'boolean_expression',
  equal_to: 'comparison_expression',
  not_equal_to: 'comparison_expression',
  greater_than: 'comparison_expression',
  less_than: 'comparison_expression',
  greater_than_equal_to: 'comparison_expression',
  less_than_equal_to: 'comparison_expression',
  like: 'comparison_expression',
  contains: 'comparison_expression',
};

export class SequenceBuilder {
  readonly initialization: ToolCall[] = [];
  readonly calls: ToolCall[] = [];
  private readonly counters = new Map<string, number>();
  private readonly initByShape = new Map<string, string>();

  constructor(
    readonly db: DatabaseInfo,
    readonly pool: ToolPool,
  ) {}

  get paper(): boolean {
    return this.pool === 'paper';
  }

  /** Rejects in the paper pool: `construct` needs the extended tools. */
  requireExtended(construct: string, what: string): void {
    if (this.paper) unsupported(construct, `${what} needs the extended tool pool`);
  }

  private label(prefix: string): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return `${prefix}_${n}`;
  }

  /** An initialize_active_data call; an identical one already made is reused. */
  initialize(args: { tables: unknown[]; joins: unknown[] }): string {
    const shape = JSON.stringify(args);
    const existing = this.initByShape.get(shape);
    if (existing) return existing;
    const n = this.initialization.length + 1;
    const label = n === 1 ? 'starting_table_var' : `starting_table_var_${n}`;
    this.initialization.push({ name: 'initialize_active_data', arguments: { database: this.db.dbId, ...args }, label });
    this.initByShape.set(shape, label);
    return label;
  }

  private emit(name: string, args: Record<string, unknown>, prefix: string): string {
    this.checkPool(name, args);
    const label = this.label(prefix);
    this.calls.push({ name, arguments: args, label });
    return label;
  }

  private checkPool(name: string, args: Record<string, unknown>): void {
    if (!this.paper) return;
    const paperChoice = (list: readonly { name: string; paper: boolean }[], value: unknown): boolean =>
      list.some((c) => c.name === value && c.paper);
    let offending: string | null = null;
    if (name === 'calculate') offending = String(args.operation_type);
    else if (!(toolsOf('paper') as readonly string[]).includes(name)) offending = name;
    else if (name === 'filter_data' && !paperChoice(CONDITIONS, args.condition)) offending = String(args.condition);
    else if (name === 'aggregate_data' && !paperChoice(AGGREGATIONS, args.aggregation_type))
      offending = String(args.aggregation_type);
    else if (name === 'transform_data' && !paperChoice(OPERATIONS, args.operation_type))
      offending = String(args.operation_type);
    else if (name === 'transform_data' && (args.operation_args as Record<string, unknown>).modifiers !== undefined)
      offending = 'datetime_modifiers';
    else if ((name === 'group_data_by' || name === 'select_unique_values') && Array.isArray(args.key_name))
      offending = 'multi_key';
    if (offending !== null) {
      const construct = PAPER_CONSTRUCT[offending] ?? offending;
      unsupported(construct, `${name} with ${offending} is not in the paper tool pool`);
    }
  }

  // ---- table-producing tools ----------------------------------------------------------------

  startingTable(label: string, keys: string[], columns: Map<string, string>): TableRef {
    return { label, keys, memberKeys: null, exprs: columns };
  }

  filter(table: TableRef, key: string, condition: string, value?: unknown): TableRef {
    const args: Record<string, unknown> = { data_source: ref(table.label), key_name: key, condition };
    if (value !== undefined) args.value = value;
    return { ...table, label: this.emit('filter_data', args, 'FILTER') };
  }

  /** sort_data; with `rows`, the sorted table keeps only the rows a LIMIT/OFFSET leaves (extended pool). */
  sort(table: TableRef, key: string, ascending: boolean, rows?: { limit: number | null; offset: number }): TableRef {
    const args: Record<string, unknown> = { data_source: ref(table.label), key_name: key, ascending };
    if (rows) {
      this.requireExtended('derived_limit', 'LIMIT in a derived table');
      if (rows.limit !== null) args.limit = rows.limit;
      if (rows.offset > 0) args.offset = rows.offset;
    }
    const label = this.emit('sort_data', args, 'SORT');
    return { ...table, label };
  }

  /**
   * combine_data: the output keeps `a`'s keys (or those `columns` picks of each input); a
   * list when both inputs are lists.
   */
  combine(a: TableRef, b: TableRef, operation: string, columns?: { a: string[]; b: string[] }): TableRef {
    const args: Record<string, unknown> = { data_source: ref(a.label), other_data_source: ref(b.label), operation };
    if (columns) {
      args.key_name = columns.a.length === 1 ? columns.a[0] : columns.a;
      args.other_key_name = columns.b.length === 1 ? columns.b[0] : columns.b;
    }
    const label = this.emit('combine_data', args, 'COMBINE');
    return { label, keys: [...(columns?.a ?? a.keys)], memberKeys: null, exprs: new Map() };
  }

  /**
   * join_data: `semi` / `anti` keep `a`'s rows (and what its keys hold); `inner` / `left` add
   * `b`'s keys after `a`'s, each renamed as the runtime renames it (derivedKey), and what
   * they hold carried over.
   */
  join(a: TableRef, aKeys: string[], b: TableRef, bKeys: string[], type: JoinType): TableRef {
    this.requireExtended('join', 'a join of two tables');
    const one = (keys: string[]) => (keys.length === 1 ? keys[0] : keys);
    const args = {
      data_source: ref(a.label),
      other_data_source: ref(b.label),
      key_name: one(aKeys),
      other_key_name: one(bKeys),
      type,
    };
    const label = this.emit('join_data', args, 'JOIN');
    if (type === 'semi' || type === 'anti') return { ...a, label };
    const { keys, renamed } = joinedKeys(a.keys, b.keys);
    const exprs = new Map(a.exprs);
    for (const [sig, key] of b.exprs) {
      const newKey = renamed.get(key);
      if (newKey !== undefined && !exprs.has(sig)) exprs.set(sig, newKey);
    }
    return { label, keys, memberKeys: null, exprs };
  }

  union(a: TableRef, b: TableRef): TableRef {
    const label = this.emit('union_data', { data_source: ref(a.label), other_data_source: ref(b.label) }, 'UNION');
    return { ...a, label };
  }

  transform(
    table: TableRef,
    key: string,
    operation: string,
    operationArgs: Record<string, unknown>,
    signature: string,
  ): TableRef {
    const newKey = derivedKey(table.keys, `${key}_${operation}`);
    const label = this.emit(
      'transform_data',
      { data_source: ref(table.label), key_name: key, operation_type: operation, operation_args: operationArgs },
      operation.toUpperCase(),
    );
    const exprs = new Map(table.exprs);
    exprs.set(signature, newKey);
    return { ...table, label, keys: [...table.keys, newKey], exprs };
  }

  /** `exprs`: what the group keys hold (signature -> key). */
  group(table: TableRef, keys: string[], exprs: Map<string, string>): TableRef {
    const label = this.emit(
      'group_data_by',
      { data_source: ref(table.label), key_name: keys.length === 1 ? keys[0] : keys },
      'GROUP',
    );
    return { label, keys: [...keys], memberKeys: table.keys, exprs };
  }

  /** aggregate_data on a grouped table: one more column. */
  aggregateGrouped(table: TableRef, key: string, type: string, distinct: boolean, signature: string): TableRef {
    const base = `${type}${distinct ? '_distinct' : ''}_${key === '*' ? 'rows' : key}`;
    const newKey = derivedKey([...table.keys, ...(table.memberKeys ?? [])], base);
    const label = this.emit(
      'aggregate_data',
      aggregateArgs(table, key, type, distinct),
      AGGREGATE_LABELS[type] ?? type.toUpperCase(),
    );
    const exprs = new Map(table.exprs);
    exprs.set(signature, newKey);
    return { ...table, label, keys: [...table.keys, newKey], exprs };
  }

  /** argmin/argmax: the one-row table holding the extreme value. */
  argExtreme(table: TableRef, key: string, type: 'argmin' | 'argmax'): TableRef {
    const label = this.emit('aggregate_data', aggregateArgs(table, key, type, false), type.toUpperCase());
    return { ...table, label };
  }

  // ---- value-producing tools --------------------------------------------------------------------

  /** aggregate_data on a plain table: a scalar label. */
  aggregateScalar(table: TableRef, key: string, type: string, distinct: boolean): string {
    return this.emit(
      'aggregate_data',
      aggregateArgs(table, key, type, distinct),
      AGGREGATE_LABELS[type] ?? type.toUpperCase(),
    );
  }

  retrieve(
    table: TableRef,
    key: string,
    options: { distinct: boolean; limit: number | null; offset: number | null },
  ): string {
    const args: Record<string, unknown> = { data_source: ref(table.label), key_name: key, distinct: options.distinct };
    if (options.limit !== null) args.limit = options.limit;
    if (options.offset !== null && options.offset > 0) {
      this.requireExtended('offset', 'OFFSET');
      args.offset = options.offset;
    }
    return this.emit('retrieve_data', args, 'SELECT');
  }

  /** select_unique_values: a list for one key, a table for several (or for one given as a list: `asTable`). */
  unique(table: TableRef, keys: string[], asTable = false): string {
    return this.emit(
      'select_unique_values',
      { data_source: ref(table.label), key_name: keys.length === 1 && !asTable ? keys[0] : keys },
      'UNIQUE',
    );
  }

  calculate(value: unknown, operation: string, operationArgs: Record<string, unknown>): string {
    return this.emit(
      'calculate',
      { value, operation_type: operation, operation_args: operationArgs },
      `CALC_${operation.toUpperCase()}`,
    );
  }
}

function aggregateArgs(table: TableRef, key: string, type: string, distinct: boolean): Record<string, unknown> {
  return { data_source: ref(table.label), key_name: key, aggregation_type: type, distinct };
}
