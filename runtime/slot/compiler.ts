import type { DatabaseInfo, ToolCall, ToolPool } from '../../core/model.js';
import type { SqlParam } from '../sql/executor.js';
import { Args, objectArg } from './args.js';
import {
  AGGREGATIONS,
  CONDITIONS,
  EXTENDED_ONLY_TOOLS,
  INITIALIZE_TOOL,
  OPERATIONS,
  PAPER_TOOLS,
  SET_OPERATIONS,
  toolsOf,
} from './catalog.js';
import { allowed, ToolError } from './errors.js';
import { derivedKey, startingTableKeys, type StartingTableRef } from './keys.js';
import { operationSql, type OperandResolver } from './operations.js';
import { cte, cteName, ident, join, param, quoteIdent, raw, sql, type Frag } from './sqlfrag.js';

/**
 * Compiles SLOT calls (docs/TOOLS.md) into SQL over the instance's SQLite database, so
 * every tool means exactly "the SQLite result of the equivalent relational operation".
 *
 * Each call becomes one common table expression (CTE) reading earlier ones. The SQL is
 * kept such that SQLite can flatten the CTE chain into one query over the base tables
 * (filters pushed into the join, indexes used): no window function or materialized
 * numbering on the way from the starting table to an answer unless a tool needs
 * positions (first occurrences, per-group limits).
 *
 * - Row identity: hidden columns `__rid_<n>` = the rowid of the n-th joined table (a
 *   table without rowid contributes its primary key); a group's identity is its group
 *   keys. union_data compares identities NULL-safely (`IS`), since a LEFT JOIN leaves
 *   the rowids of unmatched tables NULL.
 * - Row order is metadata: a list of ORDER BY terms over the relation's columns, always
 *   ending in the identity, so it is total. The starting table is in identity order
 *   (base-table rowids in join order); sort_data prepends its key (stable by
 *   construction); other tools keep the terms and apply them where positions matter
 *   (LIMIT, first occurrences, argmin/argmax, the output).
 * - Projections (retrieve_data, select_unique_values) carry the identity and order
 *   columns they drop from the visible keys under hidden (`__`) names.
 * - A grouped table's rows are groups; it remembers its member rows (the source CTE and
 *   the group keys) so that aggregate_data can compute per-group values at any later
 *   point (after HAVING-like filters, sorts, other aggregates), joined on the group keys.
 *   Scalars are one-row CTEs with the column `__v`.
 */

/** Facts about the database the SQL depends on (runtime/slot/source-facts.ts probes them). */
export interface CompileOptions {
  /** Tables (lower-case names) without rowid (WITHOUT ROWID): identified by their primary key. */
  withoutRowid?: ReadonlySet<string>;
  /**
   * By starting join (its FROM clause, see `SlotCompiler.startingJoins`): the aliases
   * (lower-case) in the order SQLite's planner nests the join's loops. The source order
   * follows it; without it, the join order.
   */
  sourceOrders?: ReadonlyMap<string, readonly string[]>;
}

/** A starting table's join: its FROM clause and aliases in join order. */
export interface StartingJoin {
  from: string;
  aliases: string[];
}

export type OutputKind = 'table' | 'list' | 'scalar';

export interface CompiledRelation {
  label: string;
  kind: OutputKind;
  /** Visible column keys: a table's columns, a list's one column, none for a scalar. */
  keys: string[];
  grouped: boolean;
  /** A sort_data ran upstream: row order is part of the output. */
  sorted: boolean;
  /** Standalone query returning the visible output in output order. */
  sql: string;
  /** Bound parameters of `sql`, in textual order. */
  params: SqlParam[];
}

export interface DerivedKey {
  key: string;
  description: string;
  /** Label of the call that created it. */
  label: string;
}

export interface CompiledSequence {
  /** By label: initialization and calls. */
  relations: Record<string, CompiledRelation>;
  /** Labels in compilation order. */
  labels: string[];
  /** Keys created by transform_data and grouped aggregate_data, in creation order. */
  derivedKeys: DerivedKey[];
}

/** One ORDER BY term over a column of the relation. */
interface OrderTerm {
  column: string;
  descending: boolean;
}

interface Rel {
  label: string;
  kind: OutputKind;
  cte: number;
  keys: string[];
  /** The CTE's columns in order (keys and hidden ones; a starting table may emit fewer, see StartingBody). */
  columns: string[];
  /** Columns whose values (as a tuple, NULL-safe) identify a row of `origin`. */
  identity: string[];
  /** The row order: ORDER BY terms over the columns (keys or hidden), total. */
  order: OrderTerm[];
  /** Grouped tables: the member rows (a CTE with `keys`, in `order`) and the group keys. */
  members?: { cte: number; keys: string[]; groupKeys: string[]; order: OrderTerm[] };
  /** Which identity the rows carry (label of the call that assigned it). */
  origin: string;
  /** Which ordering lineage the rows carry (label of the call that last set the order). */
  orderToken: string;
  sorted: boolean;
}

/**
 * A starting table's body, rendered last: with only the keys the rest of the statement
 * names (`used`), so SQLite parses and plans no column it does not need.
 */
type StartingBody = (used: (key: string) => boolean) => Frag;

type Shape = Omit<Rel, 'label' | 'cte'> & { body: Frag | StartingBody };

const HIDDEN_PREFIX = '__';
/** Names SQLite accepts for the rowid; a column of the same name shadows one. */
const ROWID_NAMES = ['rowid', '_rowid_', 'oid'];

export class SlotCompiler {
  private readonly ctes: (Frag | StartingBody)[] = [];
  private readonly rels = new Map<string, Rel>();
  private readonly derived: DerivedKey[] = [];
  private readonly joins: StartingJoin[] = [];

  constructor(
    readonly db: DatabaseInfo,
    readonly pool: ToolPool,
    private readonly options: CompileOptions = {},
  ) {}

  /**
   * Compiles one call. `initialize_active_data` is accepted only when `initialization`
   * is set (it is not a model-facing tool). On a ToolError nothing changes, so a live
   * session can keep going after a bad call.
   */
  add(call: ToolCall, options: { initialization?: boolean } = {}): CompiledRelation {
    this.define(call, options);
    return this.relation(call.label);
  }

  /** `add` without rendering the call's SQL (render it later with `relation`). */
  define(call: ToolCall, options: { initialization?: boolean } = {}): void {
    const args = new Args(call);
    if (typeof call.label !== 'string' || call.label === '') args.fail('bad_value', 'every call needs a non-empty "label"');
    if (this.rels.has(call.label)) args.fail('duplicate_label', `label "${call.label}" is already used by an earlier call`);
    if (call.arguments === null || typeof call.arguments !== 'object' || Array.isArray(call.arguments)) {
      args.fail('wrong_type', '"arguments" must be an object');
    }
    const cteMark = this.ctes.length;
    const derivedMark = this.derived.length;
    const joinMark = this.joins.length;
    try {
      const shape = this.dispatch(call, args, options.initialization === true);
      const index = this.push(shape.body);
      const { body: _body, ...rest } = shape;
      this.rels.set(call.label, { ...rest, label: call.label, cte: index });
    } catch (error) {
      this.ctes.length = cteMark;
      this.derived.length = derivedMark;
      this.joins.length = joinMark;
      throw error;
    }
  }

  /** The joins of the starting tables compiled so far. */
  startingJoins(): StartingJoin[] {
    return this.joins.map((j) => ({ from: j.from, aliases: [...j.aliases] }));
  }

  /** Labels compiled so far, in order. */
  labels(): string[] {
    return [...this.rels.keys()];
  }

  relation(label: string): CompiledRelation {
    const rel = this.rels.get(label);
    if (!rel) throw new ToolError('bad_reference', label, `no output labelled "${label}"`);
    const select =
      rel.kind === 'scalar'
        ? sql`SELECT "__v" FROM ${cte(rel.cte)}`
        : sql`SELECT ${join(rel.keys.map(ident), ', ')} FROM ${cte(rel.cte)} ORDER BY ${orderBy(rel.order)}`;
    const query = this.withCtes(select);
    return {
      label,
      kind: rel.kind,
      keys: [...rel.keys],
      grouped: rel.members !== undefined,
      sorted: rel.sorted,
      sql: query.sql,
      params: query.params,
    };
  }

  sequence(): CompiledSequence {
    const relations: Record<string, CompiledRelation> = {};
    for (const label of this.rels.keys()) relations[label] = this.relation(label);
    return { relations, labels: [...this.rels.keys()], derivedKeys: this.derivedKeys() };
  }

  /** Keys created so far by transform_data and grouped aggregate_data, in creation order. */
  derivedKeys(): DerivedKey[] {
    return this.derived.map((d) => ({ ...d }));
  }

  private push(body: Frag | StartingBody): number {
    this.ctes.push(body);
    return this.ctes.length - 1;
  }

  /** Prefixes `select` with the CTEs it reads, transitively, in definition order. */
  private withCtes(select: Frag): Frag {
    const needed = new Set<number>();
    const visit = (index: number): void => {
      if (needed.has(index)) return;
      needed.add(index);
      const body = this.ctes[index];
      if (typeof body !== 'function') body.deps.forEach(visit);
    };
    select.deps.forEach(visit);
    const indices = [...needed].sort((a, b) => a - b);
    const bodies = new Map<number, Frag>();
    for (const i of indices) {
      const body = this.ctes[i];
      if (typeof body !== 'function') bodies.set(i, body);
    }
    // Every column reference is a quoted identifier: a key the text never quotes is unused.
    const text = [select.sql, ...[...bodies.values()].map((b) => b.sql)].join('\n');
    const used = (key: string): boolean => text.includes(quoteIdent(key));
    for (const i of indices) {
      const body = this.ctes[i];
      if (typeof body === 'function') bodies.set(i, body(used));
    }
    const defs = indices.map((i) => sql`${raw(cteName(i))} AS (${bodies.get(i)!})`);
    return sql`WITH ${join(defs, ', ')} ${select}`;
  }

  private dispatch(call: ToolCall, args: Args, initialization: boolean): Shape {
    if (call.name === INITIALIZE_TOOL) {
      if (!initialization) args.fail('unknown_tool', `${INITIALIZE_TOOL} is run by the system, not callable here`);
      return this.initialize(args, call.label);
    }
    if (initialization) args.fail('bad_value', `an initialization step must be ${INITIALIZE_TOOL}`);
    const offered = toolsOf(this.pool);
    if (!(offered as readonly string[]).includes(call.name)) {
      const known = [...PAPER_TOOLS, ...EXTENDED_ONLY_TOOLS] as readonly string[];
      if (known.includes(call.name)) args.fail('not_in_pool', `tool "${call.name}" is not available; tools are ${allowed(offered)}`);
      args.fail('unknown_tool', `unknown tool "${call.name}"; tools are ${allowed(offered)}`);
    }
    switch (call.name) {
      case 'filter_data':
        return this.filter(args);
      case 'sort_data':
        return this.sort(args, call.label);
      case 'retrieve_data':
        return this.retrieve(args);
      case 'aggregate_data':
        return this.aggregate(args, call.label);
      case 'group_data_by':
        return this.group(args, call.label);
      case 'select_unique_values':
        return this.unique(args);
      case 'transform_data':
        return this.transform(args, call.label);
      case 'union_data':
        return this.union(args);
      case 'combine_data':
        return this.combine(args, call.label);
      default:
        return this.calculate(args, call.label);
    }
  }

  private get paper(): boolean {
    return this.pool === 'paper';
  }

  // ---- initialize_active_data -------------------------------------------------------

  private initialize(args: Args, label: string): Shape {
    args.expectOnly(['database', 'tables', 'joins']);
    const tables = args.required('tables');
    if (!Array.isArray(tables) || tables.length === 0) args.fail('wrong_type', '"tables" must be a non-empty list');
    const refs: StartingTableRef[] = tables.map((t, i) => {
      const ref = t as Partial<StartingTableRef> | null;
      if (!ref || typeof ref.alias !== 'string' || typeof ref.table !== 'string') {
        args.fail('wrong_type', `tables[${i}] must be {"alias": string, "table": string}`);
      }
      return { alias: ref.alias, table: ref.table };
    });
    let keys;
    try {
      keys = startingTableKeys(this.db, refs);
    } catch (error) {
      args.fail('bad_value', `${(error as Error).message}; tables are ${allowed(this.db.tables.map((t) => t.name))}`);
    }
    const aliases = new Map<string, string>(); // lower-case alias -> table name
    for (const ref of refs) {
      if (aliases.has(ref.alias.toLowerCase())) args.fail('bad_value', `alias "${ref.alias}" is used twice`);
      aliases.set(ref.alias.toLowerCase(), this.db.tables.find((t) => t.name.toLowerCase() === ref.table.toLowerCase())!.name);
    }
    const joins = args.raw('joins') ?? [];
    if (!Array.isArray(joins) || joins.length !== refs.length - 1) {
      args.fail('bad_value', `"joins" must be a list with one entry per table after the first (${refs.length - 1})`);
    }
    const column = (qualified: unknown, where: string): Frag => {
      if (typeof qualified !== 'string' || !qualified.includes('.')) args.fail('wrong_type', `${where} must be "<alias>.<column>"`);
      const dot = qualified.indexOf('.');
      const alias = qualified.slice(0, dot);
      const table = aliases.get(alias.toLowerCase());
      if (!table) args.fail('bad_value', `${where}: unknown alias "${alias}"`);
      const info = this.db.tables.find((t) => t.name === table)!;
      const name = qualified.slice(dot + 1);
      const col = info.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
      if (!col) args.fail('bad_value', `${where}: table "${table}" has no column "${name}"`);
      const ref = refs.find((r) => r.alias.toLowerCase() === alias.toLowerCase())!;
      return raw(`${quoteIdent(ref.alias)}.${quoteIdent(col.name)}`);
    };
    let from = sql`${ident(aliases.get(refs[0].alias.toLowerCase())!)} AS ${ident(refs[0].alias)}`;
    joins.forEach((j, i) => {
      const spec = j as { type?: unknown; alias?: unknown; on?: unknown } | null;
      const ref = refs[i + 1];
      if (!spec || (spec.type !== 'inner' && spec.type !== 'left')) args.fail('bad_value', `joins[${i}].type must be "inner" or "left"`);
      if (typeof spec.alias === 'string' && spec.alias.toLowerCase() !== ref.alias.toLowerCase()) {
        args.fail('bad_value', `joins[${i}].alias must be "${ref.alias}" (tables[${i + 1}])`);
      }
      const on = spec.on ?? [];
      if (!Array.isArray(on)) args.fail('wrong_type', `joins[${i}].on must be a list`);
      const conditions = on.map((c, k) => {
        const eq = c as { left?: unknown; right?: unknown } | null;
        return sql`${column(eq?.left, `joins[${i}].on[${k}].left`)} = ${column(eq?.right, `joins[${i}].on[${k}].right`)}`;
      });
      const target = sql`${ident(aliases.get(ref.alias.toLowerCase())!)} AS ${ident(ref.alias)}`;
      const kind = raw(spec.type === 'left' ? 'LEFT JOIN' : 'JOIN');
      from = conditions.length
        ? sql`${from} ${kind} ${target} ON ${join(conditions, ' AND ')}`
        : sql`${from} ${kind} ${target}`;
    });
    const columns = (used: (key: string) => boolean): Frag[] =>
      keys.filter((k) => used(k.key)).map((k) => raw(`${quoteIdent(k.alias)}.${quoteIdent(k.column)} AS ${quoteIdent(k.key)}`));
    const aliasList = refs.map((r) => r.alias);
    this.joins.push({ from: from.sql, aliases: aliasList });
    const ids = this.rowIdentity(refs, aliases);
    const base = { kind: 'table' as const, keys: keys.map((k) => k.key), origin: label, orderToken: label, sorted: false };
    const body =
      (idColumns: Frag[]): StartingBody =>
      (used) =>
        sql`SELECT ${join([...idColumns, ...columns(used)], ', ')} FROM ${from}`;
    if (!ids) {
      // Some table has neither a rowid nor a primary key: number the joined rows instead.
      const numbered = body([raw('ROW_NUMBER() OVER () AS "__rid"')]);
      return { ...base, columns: ['__rid', ...base.keys], identity: ['__rid'], order: ascending(['__rid']), body: numbered };
    }
    const identity = ids.map((id) => id.column);
    // Source order: the rowids, outermost loop of the planner's join first, which is the
    // order SQLite enumerates the join in (inner loops find their matches in rowid order).
    const nesting = this.options.sourceOrders?.get(from.sql);
    const rank = (table: number): number => (nesting ? nesting.indexOf(aliasList[table].toLowerCase()) : table);
    const complete = !nesting || aliasList.every((a) => nesting.includes(a.toLowerCase()));
    const order = complete ? [...ids].sort((x, y) => rank(x.table) - rank(y.table)).map((id) => id.column) : identity;
    const idColumns = ids.map((id) => raw(`${id.expression} AS ${quoteIdent(id.column)}`));
    return { ...base, columns: [...identity, ...base.keys], identity, order: ascending(order), body: body(idColumns) };
  }

  /**
   * Hidden identity columns of a starting table: per joined table (in join order) its
   * rowid, or its primary key if it has no rowid; undefined if a table has neither.
   */
  private rowIdentity(
    refs: StartingTableRef[],
    aliases: Map<string, string>,
  ): { column: string; expression: string; table: number }[] | undefined {
    const ids: { column: string; expression: string; table: number }[] = [];
    for (const [i, ref] of refs.entries()) {
      const info = this.db.tables.find((t) => t.name === aliases.get(ref.alias.toLowerCase()))!;
      const alias = quoteIdent(ref.alias);
      const taken = new Set(info.columns.map((c) => c.name.toLowerCase()));
      const rowid = this.options.withoutRowid?.has(info.name.toLowerCase()) ? undefined : ROWID_NAMES.find((name) => !taken.has(name));
      if (rowid) ids.push({ column: `__rid_${i + 1}`, expression: `${alias}.${rowid}`, table: i });
      else if (info.primaryKey.length) {
        info.primaryKey.forEach((pk, j) => ids.push({ column: `__rid_${i + 1}_${j + 1}`, expression: `${alias}.${quoteIdent(pk)}`, table: i }));
      } else return undefined;
    }
    return ids;
  }

  // ---- references and values --------------------------------------------------------

  /** `"$LABEL$"` or `"$LABEL.key$"`; undefined for anything that is not a reference. */
  private reference(value: unknown, args: Args, where: string): { rel: Rel; field?: string } | undefined {
    if (typeof value !== 'string' || !/^\$[^$]+\$$/.test(value)) return undefined;
    const inner = value.slice(1, -1);
    const whole = this.rels.get(inner);
    if (whole) return { rel: whole };
    const dot = inner.indexOf('.');
    const rel = dot > 0 ? this.rels.get(inner.slice(0, dot)) : undefined;
    if (!rel) {
      args.fail('bad_reference', `${where} refers to "${value}", but no earlier call has that label; labels so far are ${allowed([...this.rels.keys()])}`);
    }
    const field = inner.slice(dot + 1);
    if (rel.kind === 'scalar' || !rel.keys.includes(field)) {
      args.fail('bad_reference', `${where}: "${value}" names no column of "${rel.label}"; its columns are ${allowed(rel.keys)}`);
    }
    return { rel, field };
  }

  /** The table (or list) a `data_source`-like argument refers to. */
  private source(args: Args, name: string): Rel {
    const value = args.required(name);
    const ref = this.reference(value, args, `argument "${name}"`);
    if (!ref) {
      args.fail('bad_reference', `argument "${name}" must be a reference "$LABEL$" to an earlier output, e.g. "$starting_table_var$"`);
    }
    if (ref.field !== undefined) args.fail('bad_reference', `argument "${name}" takes a whole output "$${ref.rel.label}$", not a column`);
    if (ref.rel.kind === 'scalar') args.fail('wrong_type', `argument "${name}": "$${ref.rel.label}$" is a single value, not a table`);
    return ref.rel;
  }

  /** A column key of `rel`, named by argument `name` (or given as `value`). */
  private key(rel: Rel, args: Args, name: string, value: unknown = args.required(name)): string {
    if (typeof value !== 'string') args.fail('wrong_type', `argument "${name}" must be a key (string); keys are ${allowed(rel.keys)}`);
    if (rel.keys.includes(value)) return value;
    if (rel.members?.keys.includes(value)) {
      args.fail(
        'not_grouped',
        `argument "${name}": "${value}" is not a column of the grouped table "$${rel.label}$" (only its group keys and aggregates are: ${allowed(rel.keys)}); aggregate it with aggregate_data first`,
      );
    }
    args.fail('unknown_key', `argument "${name}": unknown key "${value}" in "$${rel.label}$"; keys are ${allowed(rel.keys)}`);
  }

  /** One or more keys: a string, or (extended pool) a non-empty list of strings. */
  private keyList(rel: Rel, args: Args, name: string): { keys: string[]; many: boolean } {
    const value = args.required(name);
    if (!Array.isArray(value)) return { keys: [this.key(rel, args, name, value)], many: false };
    if (this.paper) args.fail('not_in_pool', `argument "${name}" must be a single key in this tool pool, not a list`);
    if (value.length === 0) args.fail('bad_value', `argument "${name}" must not be an empty list`);
    const keys = value.map((v) => this.key(rel, args, name, v));
    if (new Set(keys).size !== keys.length) args.fail('bad_value', `argument "${name}" lists a key twice`);
    return { keys, many: true };
  }

  /** A single value: a literal (bound), or a reference to a scalar / first value of a list. */
  private scalarValue(value: unknown, args: Args, where: string): Frag {
    const ref = this.reference(value, args, where);
    if (ref) {
      if (ref.rel.kind === 'scalar') return sql`(SELECT "__v" FROM ${cte(ref.rel.cte)})`;
      const column = ref.field ?? this.onlyColumn(ref.rel, args, where);
      return sql`(SELECT ${ident(column)} FROM ${cte(ref.rel.cte)} ORDER BY ${orderBy(ref.rel.order)} LIMIT 1)`;
    }
    if (value === null || typeof value === 'string' || typeof value === 'number') return param(value);
    args.fail('wrong_type', `${where} must be a string, a number, null or a reference "$LABEL$"`);
  }

  /** A list of values rendered `(...)` for IN: a JSON list, or a reference to a list/column. */
  private listValue(value: unknown, args: Args, where: string): Frag {
    if (Array.isArray(value)) return sql`(${join(value.map((v, i) => this.scalarValue(v, args, `${where}[${i}]`)), ', ')})`;
    const ref = this.reference(value, args, where);
    if (!ref) args.fail('wrong_type', `${where} must be a list of values or a reference "$LABEL$" to a list`);
    if (ref.rel.kind === 'scalar') return sql`(SELECT "__v" FROM ${cte(ref.rel.cte)})`;
    const column = ref.field ?? this.onlyColumn(ref.rel, args, where);
    return sql`(SELECT ${ident(column)} FROM ${cte(ref.rel.cte)})`;
  }

  private onlyColumn(rel: Rel, args: Args, where: string): string {
    if (rel.keys.length !== 1) {
      args.fail('bad_reference', `${where}: "$${rel.label}$" has several columns; name one as "$${rel.label}.<key>$" (${allowed(rel.keys)})`);
    }
    return rel.keys[0];
  }

  private resolver(rel: Rel | undefined, args: Args): OperandResolver {
    return {
      operand: (value, path) => {
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          const operand = value as Record<string, unknown>;
          const names = Object.keys(operand);
          if (names.length === 1 && names[0] === 'key_name') {
            if (!rel) args.fail('bad_value', `${path}: calculate has no columns; give {"value": ...}`);
            return ident(this.key(rel, args, `${path}.key_name`, operand.key_name));
          }
          if (names.length === 1 && names[0] === 'value') return this.scalarValue(operand.value, args, `${path}.value`);
          args.fail('wrong_type', `${path} must be {"key_name": <key>} or {"value": <value or "$LABEL$">}`);
        }
        return this.scalarValue(value, args, path);
      },
      values: (value, path) => this.listValue(value, args, path),
    };
  }

  private newKey(rel: Rel, args: Args, requested: unknown, base: string): string {
    if (requested === undefined || requested === null) return derivedKey(rel.keys, base);
    if (typeof requested !== 'string' || requested === '') args.fail('wrong_type', 'operation_args.new_key_name must be a non-empty string');
    if (requested.startsWith(HIDDEN_PREFIX)) args.fail('bad_value', `operation_args.new_key_name must not start with "${HIDDEN_PREFIX}"`);
    if (rel.keys.includes(requested) || rel.members?.keys.includes(requested)) {
      args.fail('bad_value', `operation_args.new_key_name "${requested}" is already a key of "$${rel.label}$"`);
    }
    return requested;
  }

  private inherit(rel: Rel): Omit<Shape, 'body' | 'kind'> {
    const { keys, columns, identity, order, members, origin, orderToken, sorted } = rel;
    return { keys, columns, identity, order, members, origin, orderToken, sorted };
  }

  /**
   * Projection of `rel` onto `keys`: the column list (the keys, then the identity and
   * order columns that are not keys, renamed to hidden names) and the identity and order
   * in the projected names. The renaming depends on the names only, so two projections
   * onto the same keys agree (union_data relies on it).
   */
  private project(rel: Rel, keys: string[]): { select: Frag; columns: string[]; identity: string[]; order: OrderTerm[] } {
    const carried = [...new Set([...rel.identity, ...rel.order.map((t) => t.column)])].filter((c) => !keys.includes(c));
    const taken = new Set([...keys, ...carried]);
    const names = new Map<string, string>(keys.map((k) => [k, k]));
    const columns = keys.map(ident);
    for (const column of carried) {
      const name = column.startsWith(HIDDEN_PREFIX) ? column : derivedKey(taken, `${HIDDEN_PREFIX}h_${column}`);
      taken.add(name);
      names.set(column, name);
      columns.push(name === column ? ident(column) : sql`${ident(column)} AS ${ident(name)}`);
    }
    return {
      select: join(columns, ', '),
      columns: [...names.values()],
      identity: rel.identity.map((c) => names.get(c)!),
      order: rel.order.map((t) => ({ ...t, column: names.get(t.column)! })),
    };
  }

  /** The columns a projection of `rel` onto `keys` reads. */
  private projectedColumns(rel: Rel, keys: string[]): Frag {
    return join([...new Set([...keys, ...rel.identity, ...rel.order.map((t) => t.column)])].map(ident), ', ');
  }

  // ---- the tools ---------------------------------------------------------------------

  private filter(args: Args): Shape {
    args.expectOnly(['data_source', 'key_name', 'value', 'condition']);
    const rel = this.source(args, 'data_source');
    const key = ident(this.key(rel, args, 'key_name'));
    const condition = args.choice('condition', CONDITIONS, this.paper);
    const value = (): Frag => this.scalarValue(args.required('value'), args, 'argument "value"');
    const list = (): Frag => this.listValue(args.required('value'), args, 'argument "value"');
    const predicates: Record<string, () => Frag> = {
      equal_to: () => sql`${key} = ${value()}`,
      not_equal_to: () => sql`${key} <> ${value()}`,
      greater_than: () => sql`${key} > ${value()}`,
      less_than: () => sql`${key} < ${value()}`,
      greater_than_equal_to: () => sql`${key} >= ${value()}`,
      less_than_equal_to: () => sql`${key} <= ${value()}`,
      contains: () => sql`instr(${key}, ${value()}) > 0`,
      not_contains: () => sql`NOT (instr(${key}, ${value()}) > 0)`,
      like: () => sql`${key} LIKE ${value()}`,
      not_like: () => sql`${key} NOT LIKE ${value()}`,
      in: () => sql`${key} IN ${list()}`,
      not_in: () => sql`${key} NOT IN ${list()}`,
      is_null: () => sql`${key} IS NULL`,
      is_not_null: () => sql`${key} IS NOT NULL`,
    };
    const predicate = predicates[condition.name]();
    return { kind: 'table', ...this.inherit(rel), body: sql`SELECT * FROM ${cte(rel.cte)} WHERE ${predicate}` };
  }

  private sort(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'key_name', 'ascending']);
    const rel = this.source(args, 'data_source');
    const key = this.key(rel, args, 'key_name');
    const descending = !args.boolean('ascending', true);
    // Stable: ties keep the previous order. A later term on a column already ordered by
    // decides nothing. SQLite orders NULLs first ascending, last descending, as the contract says.
    const order = [{ column: key, descending }, ...rel.order.filter((t) => t.column !== key)];
    return { kind: 'table', ...this.inherit(rel), order, orderToken: label, sorted: true, body: sql`SELECT * FROM ${cte(rel.cte)}` };
  }

  /** The rows of `rel` whose `keys` combination occurs first (in row order), with the columns a projection onto `keys` reads. */
  private firstOccurrences(rel: Rel, keys: string[]): Frag {
    const partition = join(keys.map(ident), ', ');
    return sql`(SELECT * FROM (SELECT ${this.projectedColumns(rel, keys)}, ROW_NUMBER() OVER (PARTITION BY ${partition} ORDER BY ${orderBy(rel.order)}) AS "__dn" FROM ${cte(rel.cte)}) WHERE "__dn" = 1)`;
  }

  private retrieve(args: Args): Shape {
    args.expectOnly(['data_source', 'key_name', 'distinct', 'limit', 'offset'], this.paper ? ['offset'] : []);
    const rel = this.source(args, 'data_source');
    const key = this.key(rel, args, 'key_name');
    const rows = args.boolean('distinct', false) ? this.firstOccurrences(rel, [key]) : cte(rel.cte);
    const limit = args.integer('limit') ?? 0;
    const offset = args.integer('offset') ?? 0;
    if (offset < 0) args.fail('bad_value', 'argument "offset" must not be negative');
    const page =
      limit > 0 || offset > 0 ? sql` ORDER BY ${orderBy(rel.order)} LIMIT ${param(limit > 0 ? limit : -1)} OFFSET ${param(offset)}` : raw('');
    const { select, columns, identity, order } = this.project(rel, [key]);
    return {
      kind: 'list',
      keys: [key],
      columns,
      identity,
      order,
      origin: rel.origin,
      orderToken: rel.orderToken,
      sorted: rel.sorted,
      body: sql`SELECT ${select} FROM ${rows}${page}`,
    };
  }

  /** The first `limit` rows of `rel` in row order (all rows when `limit` <= 0). */
  private firstRows(rel: Rel, limit: number): Frag {
    return limit > 0 ? sql`(SELECT * FROM ${cte(rel.cte)} ORDER BY ${orderBy(rel.order)} LIMIT ${param(limit)})` : cte(rel.cte);
  }

  private aggregate(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'key_name', 'aggregation_type', 'distinct', 'limit']);
    const rel = this.source(args, 'data_source');
    const type = args.choice('aggregation_type', AGGREGATIONS, this.paper);
    const distinct = args.boolean('distinct', false);
    const limit = args.integer('limit') ?? 0;
    const keyName = args.required('key_name');
    const star = keyName === '*';
    if (star && (type.name !== 'count' || distinct)) {
      args.fail('bad_value', 'key_name "*" (all rows) is allowed only with aggregation_type "count" and distinct false');
    }
    const some = raw(distinct ? 'DISTINCT ' : '');
    if (type.name === 'argmin' || type.name === 'argmax') {
      if (rel.members) args.fail('bad_value', `aggregation_type "${type.name}" works on plain tables, not on the grouped table "$${rel.label}$"`);
      const key = ident(this.key(rel, args, 'key_name'));
      const direction = raw(type.name === 'argmin' ? 'ASC' : 'DESC');
      return {
        kind: 'table',
        ...this.inherit(rel),
        body: sql`SELECT * FROM ${this.firstRows(rel, limit)} WHERE ${key} IS NOT NULL ORDER BY ${key} ${direction}, ${orderBy(rel.order)} LIMIT 1`,
      };
    }
    if (!rel.members) {
      const value = star ? raw('NULL') : ident(this.key(rel, args, 'key_name'));
      const values = sql`SELECT ${some}${value} AS "__x" FROM ${this.firstRows(rel, limit)}`;
      return scalarShape(label, aggregateSql(type.name, star, values, []));
    }
    const members = rel.members;
    const memberRel: Rel = { ...rel, keys: members.keys, members: undefined };
    const value = star ? raw('NULL') : ident(this.key(memberRel, args, 'key_name'));
    const groupKeys = members.groupKeys;
    const partition = join(groupKeys.map(ident), ', ');
    const rows =
      limit > 0
        ? sql`(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY ${partition} ORDER BY ${orderBy(members.order)}) AS "__gn" FROM ${cte(members.cte)}) WHERE "__gn" <= ${param(limit)})`
        : cte(members.cte);
    const values = sql`SELECT ${some}${partition}, ${value} AS "__x" FROM ${rows}`;
    const base = `${type.name}${distinct ? '_distinct' : ''}_${star ? 'rows' : (keyName as string)}`;
    const newKey = derivedKey([...rel.keys, ...members.keys], base);
    this.derived.push({
      key: newKey,
      label,
      description: `${type.description}${distinct ? ' (distinct values)' : ''} of ${star ? 'the rows' : keyName} in each group`,
    });
    // Groups are matched on their keys, NULL-safely: NULL is a group.
    const on = join(groupKeys.map((k) => sql`a.${ident(k)} IS s.${ident(k)}`), ' AND ');
    return {
      kind: 'table',
      ...this.inherit(rel),
      keys: [...rel.keys, newKey],
      columns: [...rel.columns, newKey],
      body: sql`SELECT s.*, a."__v" AS ${ident(newKey)} FROM ${cte(rel.cte)} AS s LEFT JOIN (${aggregateSql(type.name, star, values, groupKeys)}) AS a ON ${on}`,
    };
  }

  private group(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'key_name']);
    const rel = this.source(args, 'data_source');
    const { keys } = this.keyList(rel, args, 'key_name');
    const columns = join(keys.map(ident), ', ');
    // A group is identified by its keys; groups come in key order (NULL first), as
    // SQLite's GROUP BY output does.
    return {
      kind: 'table',
      keys,
      columns: keys,
      identity: keys,
      order: ascending(keys),
      members: { cte: rel.cte, keys: rel.keys, groupKeys: keys, order: rel.order },
      origin: label,
      orderToken: label,
      sorted: false,
      body: sql`SELECT ${columns} FROM ${cte(rel.cte)} GROUP BY ${columns}`,
    };
  }

  private unique(args: Args): Shape {
    args.expectOnly(['data_source', 'key_name']);
    const rel = this.source(args, 'data_source');
    const { keys, many } = this.keyList(rel, args, 'key_name');
    const { select, columns, identity, order } = this.project(rel, keys);
    return {
      kind: many ? 'table' : 'list',
      keys,
      columns,
      identity,
      order,
      origin: rel.origin,
      orderToken: rel.orderToken,
      sorted: rel.sorted,
      body: sql`SELECT ${select} FROM ${this.firstOccurrences(rel, keys)}`,
    };
  }

  private transform(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'key_name', 'operation_type', 'operation_args']);
    const rel = this.source(args, 'data_source');
    const key = this.key(rel, args, 'key_name');
    const op = args.choice('operation_type', OPERATIONS, this.paper);
    const { new_key_name: requested, ...opArgs } = objectArg(args, 'operation_args');
    const expression = operationSql(op, ident(key), opArgs, args, this.resolver(rel, args), this.paper);
    const newKey = this.newKey(rel, args, requested, `${key}_${op.name}`);
    this.derived.push({ key: newKey, label, description: `${key} after ${op.name}: ${op.description}` });
    return {
      kind: 'table',
      ...this.inherit(rel),
      keys: [...rel.keys, newKey],
      columns: [...rel.columns, newKey],
      body: sql`SELECT *, ${expression} AS ${ident(newKey)} FROM ${cte(rel.cte)}`,
    };
  }

  private calculate(args: Args, label: string): Shape {
    args.expectOnly(['value', 'operation_type', 'operation_args']);
    const value = args.required('value');
    const subject = this.scalarValue(value, args, 'argument "value"');
    const op = args.choice('operation_type', OPERATIONS, this.paper);
    if ((op.name === 'datetime' || op.name === 'julianday') && typeof value === 'string' && value.trim().toLowerCase() === 'now') {
      args.fail('bad_value', `operation "${op.name}" of 'now' depends on when it runs, not on the data`);
    }
    const expression = operationSql(op, subject, objectArg(args, 'operation_args'), args, this.resolver(undefined, args), this.paper);
    return scalarShape(label, sql`SELECT ${expression} AS "__v"`);
  }

  private union(args: Args): Shape {
    args.expectOnly(['data_source', 'other_data_source']);
    const a = this.source(args, 'data_source');
    const b = this.source(args, 'other_data_source');
    if (a.kind !== 'table' || b.kind !== 'table') args.fail('wrong_type', 'union_data combines two tables, not lists');
    if (a.origin !== b.origin || a.members?.cte !== b.members?.cte || !sameNames(a.identity, b.identity)) {
      args.fail('bad_value', `"$${a.label}$" and "$${b.label}$" do not come from the same source table; union_data combines rows of one source`);
    }
    if (a.keys.length !== b.keys.length || a.keys.some((k) => !b.keys.includes(k))) {
      args.fail('bad_value', `"$${a.label}$" and "$${b.label}$" have different keys (${allowed(a.keys)} vs ${allowed(b.keys)})`);
    }
    // Same ordering lineage: keep it; otherwise fall back to source (identity) order.
    const sameOrder = a.orderToken === b.orderToken && sameNames(a.order.map(termText), b.order.map(termText));
    const order = sameOrder ? a.order : ascending(a.identity);
    // Inputs of one layout (the usual: filters of one source) union as `*`, which names no
    // key, so that the starting table can leave out the unused ones.
    const columns = sameNames(a.columns, b.columns) ? a.columns : [...new Set([...a.keys, ...a.identity, ...order.map((t) => t.column)])];
    const select = sameNames(a.columns, b.columns) ? raw('*') : join(columns.map(ident), ', ');
    // A row of b is new unless a holds the same source row (NULL-safe: a LEFT JOIN's
    // unmatched rowids are NULL).
    const same = join(a.identity.map((c) => sql`"__a".${ident(c)} IS "__b".${ident(c)}`), ' AND ');
    return {
      kind: 'table',
      ...this.inherit(a),
      columns,
      order,
      orderToken: sameOrder ? a.orderToken : a.origin,
      sorted: sameOrder && a.sorted,
      body: sql`SELECT ${select} FROM ${cte(a.cte)} UNION ALL SELECT ${select} FROM ${cte(b.cte)} AS "__b" WHERE NOT EXISTS (SELECT 1 FROM ${cte(a.cte)} AS "__a" WHERE ${same})`,
    };
  }

  /**
   * SQLite's compound SELECT of two lists/tables with the same number of columns, matched
   * by position; the output has the first input's keys. union / intersect / except keep
   * distinct rows (NULLs equal), ordered by their values (the keys ascending, in order);
   * union_all keeps every row, the first input's in its order, then the second's.
   */
  private combine(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'other_data_source', 'operation']);
    const a = this.source(args, 'data_source');
    const b = this.source(args, 'other_data_source');
    const operation = args.choice('operation', SET_OPERATIONS, this.paper);
    if (a.members || b.members) args.fail('wrong_type', 'combine_data takes lists or plain tables, not grouped tables; project the columns first');
    if (a.keys.length !== b.keys.length) {
      args.fail('bad_value', `"$${a.label}$" has ${a.keys.length} column(s) and "$${b.label}$" has ${b.keys.length}; combine_data needs the same number`);
    }
    const kind = a.kind === 'list' && b.kind === 'list' ? 'list' : 'table';
    const keys = a.keys;
    const select = (rel: Rel): Frag => join(rel.keys.map((k, i) => sql`${ident(k)} AS ${ident(keys[i])}`), ', ');
    const base = { kind, keys, members: undefined, origin: label, orderToken: label, sorted: false } as const;
    if (operation.name === 'union_all') {
      const hidden = ['__side', '__pos'];
      const side = (rel: Rel, n: number): Frag =>
        sql`SELECT ${select(rel)}, ${raw(String(n))} AS "__side", ROW_NUMBER() OVER (ORDER BY ${orderBy(rel.order)}) AS "__pos" FROM ${cte(rel.cte)}`;
      return { ...base, columns: [...keys, ...hidden], identity: hidden, order: ascending(hidden), body: sql`${side(a, 0)} UNION ALL ${side(b, 1)}` };
    }
    const operator = raw(operation.name.toUpperCase());
    const body = sql`SELECT ${select(a)} FROM ${cte(a.cte)} ${operator} SELECT ${select(b)} FROM ${cte(b.cte)}`;
    return { ...base, columns: keys, identity: keys, order: ascending(keys), body };
  }
}

function ascending(columns: string[]): OrderTerm[] {
  return columns.map((column) => ({ column, descending: false }));
}

function termText(term: OrderTerm): string {
  return `${term.column}${term.descending ? ' DESC' : ''}`;
}

function orderBy(order: OrderTerm[]): Frag {
  return raw(order.map((t) => `${quoteIdent(t.column)}${t.descending ? ' DESC' : ''}`).join(', '));
}

function sameNames(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * The aggregate of column `__x` of `values`: per group of the `groupKeys` columns when
 * there are any (columns: the group keys, `__v`), else one row `__v` (an aggregate
 * without GROUP BY yields a row even for no input: COUNT 0, SUM NULL). Sample std is
 * two-pass (mean first) for accuracy; one value divides by zero, hence NULL, as pandas
 * gives NaN.
 */
function aggregateSql(type: string, star: boolean, values: Frag, groupKeys: string[]): Frag {
  const keys = groupKeys.map(quoteIdent).join(', ');
  const select = raw(keys ? `${keys}, ` : '');
  const groupBy = raw(keys ? ` GROUP BY ${keys}` : '');
  if (type === 'std') {
    const partition = raw(keys ? `PARTITION BY ${keys}` : '');
    return sql`SELECT ${select}sqrt(SUM(("__x" - "__m") * ("__x" - "__m")) / (COUNT("__x") - 1)) AS "__v" FROM (SELECT *, AVG("__x") OVER (${partition}) AS "__m" FROM (${values}))${groupBy}`;
  }
  const functions: Record<string, string> = { min: 'MIN', max: 'MAX', sum: 'SUM', mean: 'AVG', count: 'COUNT' };
  const expression = star ? 'COUNT(*)' : `${functions[type]}("__x")`;
  return sql`SELECT ${select}${raw(expression)} AS "__v" FROM (${values})${groupBy}`;
}

/** A one-value output: its query yields the value as column `__v`. */
function scalarShape(label: string, body: Frag): Shape {
  return { kind: 'scalar', keys: [], columns: ['__v'], identity: [], order: [], origin: label, orderToken: label, sorted: false, body };
}

export function compileSequence(
  db: DatabaseInfo,
  initialization: ToolCall[],
  calls: ToolCall[],
  pool: ToolPool,
  options: CompileOptions = {},
): CompiledSequence {
  const compiler = new SlotCompiler(db, pool, options);
  for (const call of initialization) compiler.define(call, { initialization: true });
  for (const call of calls) compiler.define(call);
  return compiler.sequence();
}

