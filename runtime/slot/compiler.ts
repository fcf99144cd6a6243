import type { DatabaseInfo, ToolCall, ToolPool } from '../../pipeline/model.js';
import type { SqlParam } from '../sql/executor.js';
import { Args, objectArg } from './args.js';
import {
  AGGREGATIONS,
  CONDITIONS,
  EXTENDED_ONLY_TOOLS,
  INITIALIZE_TOOL,
  OPERATIONS,
  PAPER_TOOLS,
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
 * Each call becomes one common table expression (CTE) reading earlier ones. Table CTEs
 * carry two hidden columns besides their keys: `__rid`, the row identity assigned by
 * initialize_active_data (or by group_data_by, one per group), which union_data uses to
 * keep each source row once; and `__ord`, the row's position, which sort_data renumbers
 * (stable: ties keep the previous `__ord` order) and every other tool carries along, so
 * that order survives filters, transforms and projections. A grouped table's rows are
 * groups (`__rid` = group id); it remembers its member rows (a CTE with `__gid`) so that
 * aggregate_data can compute per-group values at any later point (after HAVING-like
 * filters, sorts, other aggregates). Scalars are one-row CTEs with the column `__v`.
 */

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

interface Rel {
  label: string;
  kind: OutputKind;
  cte: number;
  keys: string[];
  /** Grouped tables: the member rows (with `__gid`) and their keys. */
  members?: { cte: number; keys: string[] };
  /** Which `__rid` numbering the rows carry (label of the call that assigned it). */
  origin: string;
  /** Which `__ord` numbering the rows carry (label of the call that assigned it). */
  orderToken: string;
  sorted: boolean;
}

type Shape = Omit<Rel, 'label' | 'cte'> & { body: Frag };

const RID = raw('"__rid"');
const ORD = raw('"__ord"');
const GID = raw('"__gid"');
const HIDDEN_PREFIX = '__';

export class SlotCompiler {
  private readonly ctes: Frag[] = [];
  private readonly rels = new Map<string, Rel>();
  private readonly derived: DerivedKey[] = [];

  constructor(
    readonly db: DatabaseInfo,
    readonly pool: ToolPool,
  ) {}

  /**
   * Compiles one call. `initialize_active_data` is accepted only when `initialization`
   * is set (it is not a model-facing tool). On a ToolError nothing changes, so a live
   * session can keep going after a bad call.
   */
  add(call: ToolCall, options: { initialization?: boolean } = {}): CompiledRelation {
    const args = new Args(call);
    if (typeof call.label !== 'string' || call.label === '') args.fail('bad_value', 'every call needs a non-empty "label"');
    if (this.rels.has(call.label)) args.fail('duplicate_label', `label "${call.label}" is already used by an earlier call`);
    if (call.arguments === null || typeof call.arguments !== 'object' || Array.isArray(call.arguments)) {
      args.fail('wrong_type', '"arguments" must be an object');
    }
    const cteMark = this.ctes.length;
    const derivedMark = this.derived.length;
    try {
      const shape = this.dispatch(call, args, options.initialization === true);
      const index = this.push(shape.body);
      const { body: _body, ...rest } = shape;
      this.rels.set(call.label, { ...rest, label: call.label, cte: index });
      return this.relation(call.label);
    } catch (error) {
      this.ctes.length = cteMark;
      this.derived.length = derivedMark;
      throw error;
    }
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
        : sql`SELECT ${join(rel.keys.map(ident), ', ')} FROM ${cte(rel.cte)} ORDER BY "__ord"`;
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
    return { relations, labels: [...this.rels.keys()], derivedKeys: this.derived.map((d) => ({ ...d })) };
  }

  private push(body: Frag): number {
    this.ctes.push(body);
    return this.ctes.length - 1;
  }

  /** Prefixes `select` with the CTEs it reads, transitively, in definition order. */
  private withCtes(select: Frag): Frag {
    const needed = new Set<number>();
    const visit = (index: number): void => {
      if (needed.has(index)) return;
      needed.add(index);
      this.ctes[index].deps.forEach(visit);
    };
    select.deps.forEach(visit);
    const defs = [...needed].sort((a, b) => a - b).map((i) => sql`${raw(cteName(i))} AS (${this.ctes[i]})`);
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
    const columns = keys.map((k) => raw(`${quoteIdent(k.alias)}.${quoteIdent(k.column)} AS ${quoteIdent(k.key)}`));
    const inner = sql`SELECT ROW_NUMBER() OVER () AS "__rid", ${join(columns, ', ')} FROM ${from}`;
    return {
      kind: 'table',
      keys: keys.map((k) => k.key),
      origin: label,
      orderToken: label,
      sorted: false,
      body: sql`SELECT *, "__rid" AS "__ord" FROM (${inner})`,
    };
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
      return sql`(SELECT ${ident(column)} FROM ${cte(ref.rel.cte)} ORDER BY "__ord" LIMIT 1)`;
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
    return { keys: rel.keys, members: rel.members, origin: rel.origin, orderToken: rel.orderToken, sorted: rel.sorted };
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
    const key = ident(this.key(rel, args, 'key_name'));
    const direction = raw(args.boolean('ascending', true) ? 'ASC' : 'DESC');
    const columns = join([RID, ...rel.keys.map(ident)], ', ');
    // SQLite orders NULLs first ascending and last descending, as the contract says.
    return {
      kind: 'table',
      ...this.inherit(rel),
      orderToken: label,
      sorted: true,
      body: sql`SELECT ${columns}, ROW_NUMBER() OVER (ORDER BY ${key} ${direction}, "__ord") AS "__ord" FROM ${cte(rel.cte)}`,
    };
  }

  /** The rows of `rel` whose `keys` combination occurs first (in row order). */
  private firstOccurrences(rel: Rel, keys: string[]): Frag {
    const columns = join([RID, ORD, ...keys.map(ident)], ', ');
    const partition = join(keys.map(ident), ', ');
    return sql`SELECT ${columns} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY ${partition} ORDER BY "__ord") AS "__dn" FROM ${cte(rel.cte)}) WHERE "__dn" = 1`;
  }

  private retrieve(args: Args): Shape {
    args.expectOnly(['data_source', 'key_name', 'distinct', 'limit', 'offset'], this.paper ? ['offset'] : []);
    const rel = this.source(args, 'data_source');
    const key = this.key(rel, args, 'key_name');
    const rows = args.boolean('distinct', false)
      ? this.firstOccurrences(rel, [key])
      : sql`SELECT ${RID}, ${ORD}, ${ident(key)} FROM ${cte(rel.cte)}`;
    const limit = args.integer('limit') ?? 0;
    const offset = args.integer('offset') ?? 0;
    if (offset < 0) args.fail('bad_value', 'argument "offset" must not be negative');
    const page = limit > 0 || offset > 0 ? sql` LIMIT ${param(limit > 0 ? limit : -1)} OFFSET ${param(offset)}` : raw('');
    return {
      kind: 'list',
      keys: [key],
      origin: rel.origin,
      orderToken: rel.orderToken,
      sorted: rel.sorted,
      body: sql`${rows} ORDER BY "__ord"${page}`,
    };
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
    if (type.name === 'argmin' || type.name === 'argmax') {
      if (rel.members) args.fail('bad_value', `aggregation_type "${type.name}" works on plain tables, not on the grouped table "$${rel.label}$"`);
      const key = ident(this.key(rel, args, 'key_name'));
      const rows = limit > 0 ? sql`(SELECT * FROM ${cte(rel.cte)} ORDER BY "__ord" LIMIT ${param(limit)})` : cte(rel.cte);
      const direction = raw(type.name === 'argmin' ? 'ASC' : 'DESC');
      return {
        kind: 'table',
        ...this.inherit(rel),
        body: sql`SELECT * FROM ${rows} WHERE ${key} IS NOT NULL ORDER BY ${key} ${direction}, "__ord" LIMIT 1`,
      };
    }
    if (!rel.members) {
      const value = star ? raw('NULL') : ident(this.key(rel, args, 'key_name'));
      const rows = limit > 0 ? sql`(SELECT * FROM ${cte(rel.cte)} ORDER BY "__ord" LIMIT ${param(limit)})` : cte(rel.cte);
      const values = sql`SELECT ${raw(distinct ? 'DISTINCT ' : '')}${value} AS "__x" FROM ${rows}`;
      return {
        kind: 'scalar',
        keys: [],
        origin: label,
        orderToken: label,
        sorted: false,
        body: aggregateSql(type.name, star, values, false),
      };
    }
    const members = rel.members;
    const memberRel: Rel = { ...rel, keys: members.keys, members: undefined };
    const value = star ? raw('NULL') : ident(this.key(memberRel, args, 'key_name'));
    const rows =
      limit > 0
        ? sql`(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "__gid" ORDER BY "__ord") AS "__gn" FROM ${cte(members.cte)}) WHERE "__gn" <= ${param(limit)})`
        : cte(members.cte);
    const values = sql`SELECT ${raw(distinct ? 'DISTINCT ' : '')}${GID}, ${value} AS "__x" FROM ${rows}`;
    const base = `${type.name}${distinct ? '_distinct' : ''}_${star ? 'rows' : (keyName as string)}`;
    const newKey = derivedKey([...rel.keys, ...members.keys], base);
    this.derived.push({
      key: newKey,
      label,
      description: `${type.description}${distinct ? ' (distinct values)' : ''} of ${star ? 'the rows' : keyName} in each group`,
    });
    return {
      kind: 'table',
      ...this.inherit(rel),
      keys: [...rel.keys, newKey],
      body: sql`SELECT s.*, a."__v" AS ${ident(newKey)} FROM ${cte(rel.cte)} AS s LEFT JOIN (${aggregateSql(type.name, star, values, true)}) AS a ON a."__gid" = s."__rid"`,
    };
  }

  private group(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'key_name']);
    const rel = this.source(args, 'data_source');
    const { keys } = this.keyList(rel, args, 'key_name');
    const columns = join(keys.map(ident), ', ');
    // Group ids follow the group keys' order (NULL first), as SQLite's GROUP BY output does.
    const members = this.push(sql`SELECT *, DENSE_RANK() OVER (ORDER BY ${columns}) AS "__gid" FROM ${cte(rel.cte)}`);
    return {
      kind: 'table',
      keys,
      members: { cte: members, keys: rel.keys },
      origin: label,
      orderToken: label,
      sorted: false,
      body: sql`SELECT "__gid" AS "__rid", "__gid" AS "__ord", ${columns} FROM ${cte(members)} GROUP BY "__gid"`,
    };
  }

  private unique(args: Args): Shape {
    args.expectOnly(['data_source', 'key_name']);
    const rel = this.source(args, 'data_source');
    const { keys, many } = this.keyList(rel, args, 'key_name');
    return {
      kind: many ? 'table' : 'list',
      keys,
      origin: rel.origin,
      orderToken: rel.orderToken,
      sorted: rel.sorted,
      body: this.firstOccurrences(rel, keys),
    };
  }

  private transform(args: Args, label: string): Shape {
    args.expectOnly(['data_source', 'key_name', 'operation_type', 'operation_args']);
    const rel = this.source(args, 'data_source');
    const key = this.key(rel, args, 'key_name');
    const op = args.choice('operation_type', OPERATIONS, this.paper);
    const { new_key_name: requested, ...opArgs } = objectArg(args, 'operation_args');
    const expression = operationSql(op, ident(key), opArgs, args, this.resolver(rel, args));
    const newKey = this.newKey(rel, args, requested, `${key}_${op.name}`);
    this.derived.push({ key: newKey, label, description: `${key} after ${op.name}: ${op.description}` });
    return {
      kind: 'table',
      ...this.inherit(rel),
      keys: [...rel.keys, newKey],
      body: sql`SELECT *, ${expression} AS ${ident(newKey)} FROM ${cte(rel.cte)}`,
    };
  }

  private calculate(args: Args, label: string): Shape {
    args.expectOnly(['value', 'operation_type', 'operation_args']);
    const subject = this.scalarValue(args.required('value'), args, 'argument "value"');
    const op = args.choice('operation_type', OPERATIONS, this.paper);
    const expression = operationSql(op, subject, objectArg(args, 'operation_args'), args, this.resolver(undefined, args));
    return { kind: 'scalar', keys: [], origin: label, orderToken: label, sorted: false, body: sql`SELECT ${expression} AS "__v"` };
  }

  private union(args: Args): Shape {
    args.expectOnly(['data_source', 'other_data_source']);
    const a = this.source(args, 'data_source');
    const b = this.source(args, 'other_data_source');
    if (a.kind !== 'table' || b.kind !== 'table') args.fail('wrong_type', 'union_data combines two tables, not lists');
    if (a.origin !== b.origin || a.members?.cte !== b.members?.cte) {
      args.fail('bad_value', `"$${a.label}$" and "$${b.label}$" do not come from the same source table; union_data combines rows of one source`);
    }
    if (a.keys.length !== b.keys.length || a.keys.some((k) => !b.keys.includes(k))) {
      args.fail('bad_value', `"$${a.label}$" and "$${b.label}$" have different keys (${allowed(a.keys)} vs ${allowed(b.keys)})`);
    }
    // Same ordering lineage: keep it; otherwise fall back to source order.
    const sameOrder = a.orderToken === b.orderToken;
    const ord = sameOrder ? ORD : raw('"__rid" AS "__ord"');
    const columns = join([RID, ord, ...a.keys.map(ident)], ', ');
    return {
      kind: 'table',
      ...this.inherit(a),
      orderToken: sameOrder ? a.orderToken : a.origin,
      sorted: sameOrder && a.sorted,
      body: sql`SELECT ${columns} FROM ${cte(a.cte)} UNION ALL SELECT ${columns} FROM ${cte(b.cte)} WHERE "__rid" NOT IN (SELECT "__rid" FROM ${cte(a.cte)})`,
    };
  }
}

/**
 * The aggregate of column `__x` of `values`: per `__gid` when `grouped` (columns `__gid`,
 * `__v`), else one row `__v` (an aggregate without GROUP BY yields a row even for no
 * input: COUNT 0, SUM NULL). Sample std is two-pass (mean first) for accuracy; one value
 * divides by zero, hence NULL, as pandas gives NaN.
 */
function aggregateSql(type: string, star: boolean, values: Frag, grouped: boolean): Frag {
  const gid = raw(grouped ? '"__gid", ' : '');
  const groupBy = raw(grouped ? ' GROUP BY "__gid"' : '');
  if (type === 'std') {
    const partition = raw(grouped ? 'PARTITION BY "__gid"' : '');
    return sql`SELECT ${gid}sqrt(SUM(("__x" - "__m") * ("__x" - "__m")) / (COUNT("__x") - 1)) AS "__v" FROM (SELECT *, AVG("__x") OVER (${partition}) AS "__m" FROM (${values}))${groupBy}`;
  }
  const functions: Record<string, string> = { min: 'MIN', max: 'MAX', sum: 'SUM', mean: 'AVG', count: 'COUNT' };
  const expression = star ? 'COUNT(*)' : `${functions[type]}("__x")`;
  return sql`SELECT ${gid}${raw(expression)} AS "__v" FROM (${values})${groupBy}`;
}

export function compileSequence(
  db: DatabaseInfo,
  initialization: ToolCall[],
  calls: ToolCall[],
  pool: ToolPool,
): CompiledSequence {
  const compiler = new SlotCompiler(db, pool);
  for (const call of initialization) compiler.add(call, { initialization: true });
  for (const call of calls) compiler.add(call);
  return compiler.sequence();
}

