import type { Args } from './args.js';
import { RUNNING_AGGREGATIONS, type WindowShape } from './catalog.js';
import { allowed } from './errors.js';
import { join, param, raw, sql, type Frag } from './sqlfrag.js';

/**
 * SQL of the window operations of transform_data (docs/TOOLS.md, "Operations"): rank,
 * row_number, ntile, lag / lead, running. Each is one window function over the rows of the
 * table the call transforms, so it sees every row of its input and nothing after it.
 * Whatever the window's own order leaves tied is ordered by the table's current row order,
 * so that a value never depends on how SQLite happens to scan: except RANK, whose tied
 * rows share a value and whose value must not depend on that order.
 */

/** What a window needs of the table it runs over. */
export interface WindowScope {
  /** `{key_name: k}` or `{value: v}` at `path`. */
  operand(value: unknown, path: string): Frag;
  /** A key of the table's rows (of its group rows, when grouped), named at `path`. */
  key(value: unknown, path: string): Frag;
  /** The table's current row order, as ORDER BY terms: the last tie-break. */
  rowOrder(): Frag;
}

const RUNNING_FUNCTIONS: Record<(typeof RUNNING_AGGREGATIONS)[number], string> = {
  sum: 'SUM',
  mean: 'AVG',
  count: 'COUNT',
  count_rows: 'COUNT',
  min: 'MIN',
  max: 'MAX',
};

/** The window expression of `op` on `subject`; its required arguments are present (operationSql checked). */
export function windowSql(
  op: { name: string; shape: WindowShape },
  subject: Frag,
  opArgs: Record<string, unknown>,
  args: Args,
  scope: WindowScope,
): Frag {
  const read = new WindowArgs(opArgs, args, scope);
  const partition = read.partition();
  // rank, row_number, ntile: by the key (largest first unless ascending), then then_by.
  const ranking = (): Frag[] => [term(subject, read.flag('ascending', false)), ...read.terms('then_by')];
  switch (op.shape) {
    case 'rank':
      return over(raw(read.flag('dense', false) ? 'DENSE_RANK()' : 'RANK()'), partition, ranking());
    case 'row_number':
      return over(raw('ROW_NUMBER()'), partition, [...ranking(), scope.rowOrder()]);
    case 'ntile': {
      const buckets = read.integer('buckets');
      if (buckets < 1) args.fail('bad_value', `operation_args.buckets is ${buckets}; it must be a positive integer`);
      return over(sql`NTILE(${param(buckets)})`, partition, [...ranking(), scope.rowOrder()]);
    }
    case 'shift': {
      const order = read.terms('order_by');
      if (order.length === 0) args.fail('bad_value', 'operation_args.order_by must name at least one key');
      const offset = opArgs.offset == null ? 1 : read.nonNegative('offset');
      const fallback =
        opArgs.default === undefined ? raw('NULL') : scope.operand(opArgs.default, 'operation_args.default');
      const fn = raw(op.name === 'lag' ? 'LAG' : 'LEAD');
      return over(sql`${fn}(${subject}, ${param(offset)}, ${fallback})`, partition, [...order, scope.rowOrder()]);
    }
    case 'running':
      return running(subject, read, partition, args, scope);
  }
}

/**
 * An aggregate over a window of the partition. No order_by: the whole partition. order_by
 * without frame: SQL's default frame (RANGE ... CURRENT ROW), where rows tied on order_by
 * are peers and count together, so the table's order must not be appended (it would split
 * them). A frame counts rows: order_by, then the table's order, decide which.
 */
function running(subject: Frag, read: WindowArgs, partition: Frag, args: Args, scope: WindowScope): Frag {
  const name = read.opArgs.aggregation;
  const offered = RUNNING_AGGREGATIONS as readonly string[];
  if (typeof name !== 'string' || !offered.includes(name)) {
    args.fail('bad_value', `operation_args.aggregation must be one of ${allowed(offered)}`);
  }
  const aggregation = name as (typeof RUNNING_AGGREGATIONS)[number];
  const fn = raw(`${RUNNING_FUNCTIONS[aggregation]}(${aggregation === 'count_rows' ? '*' : ''}`);
  const call = aggregation === 'count_rows' ? sql`${fn})` : sql`${fn}${subject})`;
  const order = read.opArgs.order_by == null ? [] : read.terms('order_by');
  const frame = read.frame();
  if (!frame) return over(call, partition, order);
  return over(call, partition, [...order, scope.rowOrder()], frame);
}

/** `fn OVER (PARTITION BY ... ORDER BY ... frame)`, the clauses that are given. */
function over(fn: Frag, partition: Frag, order: Frag[], frame?: Frag): Frag {
  const ordered = order.length > 0 ? sql`ORDER BY ${join(order, ', ')}` : raw('');
  const framed = frame ? sql` ${frame}` : raw('');
  return sql`${fn} OVER (${partition}${ordered}${framed})`;
}

function term(expression: Frag, ascending: boolean): Frag {
  return sql`${expression} ${raw(ascending ? 'ASC' : 'DESC')}`;
}

/** Reads the window arguments of `operation_args`; every failure names the argument. */
class WindowArgs {
  constructor(
    readonly opArgs: Record<string, unknown>,
    private readonly args: Args,
    private readonly scope: WindowScope,
  ) {}

  flag(name: string, otherwise: boolean): boolean {
    const value = this.opArgs[name] ?? otherwise;
    if (typeof value !== 'boolean') this.args.fail('wrong_type', `operation_args.${name} must be true or false`);
    return value;
  }

  integer(name: string): number {
    return this.args.integerValue(this.opArgs[name], `operation_args.${name}`);
  }

  nonNegative(name: string): number {
    const value = this.integer(name);
    if (value < 0) this.args.fail('bad_value', `operation_args.${name} is ${value}; it must not be negative`);
    return value;
  }

  /** `PARTITION BY k1, k2 ` (trailing space), or nothing. */
  partition(): Frag {
    const value: unknown = this.opArgs.partition_by ?? [];
    if (!Array.isArray(value)) this.args.fail('wrong_type', 'operation_args.partition_by must be a list of keys');
    const keys = value.map((key, i) => this.scope.key(key, `operation_args.partition_by[${i}]`));
    return keys.length > 0 ? sql`PARTITION BY ${join(keys, ', ')} ` : raw('');
  }

  /** `[{key_name, ascending?}]` (ascending defaults to true, SQL's ASC) as ORDER BY terms. */
  terms(name: string): Frag[] {
    const value: unknown = this.opArgs[name] ?? [];
    const shape = '{"key_name": <key>, "ascending": <boolean, default true>}';
    if (!Array.isArray(value)) this.args.fail('wrong_type', `operation_args.${name} must be a list of ${shape}`);
    return value.map((item: unknown, i) => {
      const path = `operation_args.${name}[${i}]`;
      if (item === null || typeof item !== 'object' || Array.isArray(item))
        this.args.fail('wrong_type', `${path} must be ${shape}`);
      const { key_name: key, ascending, ...rest } = item as Record<string, unknown>;
      const extra = Object.keys(rest)[0];
      if (extra !== undefined)
        this.args.fail('unknown_argument', `${path}."${extra}" is not allowed; an item is ${shape}`);
      if (key === undefined) this.args.fail('missing_argument', `${path} needs "key_name"`);
      const up = ascending ?? true;
      if (typeof up !== 'boolean') this.args.fail('wrong_type', `${path}.ascending must be true or false`);
      return term(this.scope.key(key, `${path}.key_name`), up);
    });
  }

  /**
   * `ROWS BETWEEN <start> AND <end>`, or undefined without a frame. preceding: n rows
   * before (null or absent: from the partition's first row); following: n rows after
   * (absent or 0: the current row; null: to the partition's last row).
   */
  frame(): Frag | undefined {
    const value = this.opArgs.frame;
    if (value === undefined || value === null) return undefined;
    const shape = '{"preceding"?: <integer >= 0 or null>, "following"?: <integer >= 0 or null>}';
    if (typeof value !== 'object' || Array.isArray(value))
      this.args.fail('wrong_type', `operation_args.frame must be ${shape}`);
    const frame = value as Record<string, unknown>;
    const extra = Object.keys(frame).find((k) => k !== 'preceding' && k !== 'following');
    if (extra !== undefined)
      this.args.fail('unknown_argument', `operation_args.frame."${extra}" is not allowed; a frame is ${shape}`);
    const bound = (name: 'preceding' | 'following'): number | null => {
      const given = frame[name];
      if (given === null) return null;
      const n = this.args.integerValue(given, `operation_args.frame.${name}`);
      if (n < 0) this.args.fail('bad_value', `operation_args.frame.${name} is ${n}; it must not be negative`);
      return n;
    };
    const preceding = frame.preceding === undefined ? null : bound('preceding');
    const following = frame.following === undefined ? 0 : bound('following');
    const start = preceding === null ? raw('UNBOUNDED PRECEDING') : sql`${param(preceding)} PRECEDING`;
    const end =
      following === null
        ? raw('UNBOUNDED FOLLOWING')
        : following === 0
          ? raw('CURRENT ROW')
          : sql`${param(following)} FOLLOWING`;
    return sql`ROWS BETWEEN ${start} AND ${end}`;
  }
}
