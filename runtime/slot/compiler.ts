import type { DatabaseInfo, ToolCall, ToolPool } from '../../core/model.js';
import type { SqlParam } from '../sql/executor.js';
import { Args } from './args.js';
import { CallScope } from './call-scope.js';
import { INITIALIZE_TOOL, toolsOf } from './catalog.js';
import { allowed, ToolError } from './errors.js';
import { initialize, type CompileOptions, type StartingJoin } from './initialize.js';
import { orderBy, type OutputKind, type Rel, type Shape, type StartingBody } from './relation.js';
import { cte, cteName, ident, join, quoteIdent, raw, sql, type Frag } from './sqlfrag.js';
import { toolCompiler } from './tools.js';

export type { CompileOptions, StartingJoin } from './initialize.js';
export type { OutputKind } from './relation.js';

/**
 * Compiles SLOT calls (docs/TOOLS.md) into SQL over the instance's SQLite database, so
 * every tool means exactly "the SQLite result of the equivalent relational operation".
 * Each tool's own compilation is an entry of the table in tools.ts; this module files
 * the calls' outputs by label and renders the SQL of any of them.
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
 * - A grouped table's rows are groups; it remembers its member rows, so that
 *   aggregate_data can compute per-group values at any later point (tool-groups.ts).
 * - Scalars are one-row CTEs with the column `__v`.
 */

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
  /** Asked for: the hidden columns after the keys that order the rows. */
  orderColumns?: string[];
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
  /** Keys created by transform_data, grouped aggregate_data and join_data (renamed keys), in creation order. */
  derivedKeys: DerivedKey[];
}

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
    if (typeof call.label !== 'string' || call.label === '')
      args.fail('bad_value', 'every call needs a non-empty "label"');
    if (this.rels.has(call.label))
      args.fail('duplicate_label', `label "${call.label}" is already used by an earlier call`);
    if (call.arguments === null || typeof call.arguments !== 'object' || Array.isArray(call.arguments)) {
      args.fail('wrong_type', '"arguments" must be an object');
    }
    // A call is validated whole before anything is recorded, so a rejected one changes nothing.
    const { body, derived, ...rest } = this.compile(call, args, options.initialization === true);
    const index = this.push(body);
    for (const { key, description } of derived ?? []) this.derived.push({ key, label: call.label, description });
    this.rels.set(call.label, { ...rest, label: call.label, cte: index });
  }

  /** The joins of the starting tables compiled so far. */
  startingJoins(): StartingJoin[] {
    return this.joins.map((j) => ({ from: j.from, aliases: [...j.aliases] }));
  }

  /** Labels compiled so far, in order. */
  labels(): string[] {
    return [...this.rels.keys()];
  }

  /**
   * `withOrder`: each row also carries the values it is ordered by (after the keys, in
   * `orderColumns`): an unsorted table's are its source rows' identities.
   */
  relation(label: string, { withOrder = false }: { withOrder?: boolean } = {}): CompiledRelation {
    const rel = this.rels.get(label);
    if (!rel) throw new ToolError('bad_reference', label, `no output labelled "${label}"`);
    const ordering = withOrder && rel.kind !== 'scalar' ? rel.order.map((term) => term.column) : [];
    const select =
      rel.kind === 'scalar'
        ? sql`SELECT "__v" FROM ${cte(rel.cte)}`
        : sql`SELECT ${join([...rel.keys, ...ordering].map(ident), ', ')} FROM ${cte(rel.cte)} ORDER BY ${orderBy(rel.order)}`;
    const query = this.withCtes(select);
    return {
      label,
      kind: rel.kind,
      keys: [...rel.keys],
      grouped: rel.members !== undefined,
      sorted: rel.sorted,
      sql: query.sql,
      params: query.params,
      ...(withOrder ? { orderColumns: ordering } : {}),
    };
  }

  sequence(): CompiledSequence {
    const relations: Record<string, CompiledRelation> = {};
    for (const label of this.rels.keys()) relations[label] = this.relation(label);
    return { relations, labels: [...this.rels.keys()], derivedKeys: this.derivedKeys() };
  }

  /** Keys created so far (see CompiledSequence.derivedKeys), in creation order. */
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

  private compile(call: ToolCall, args: Args, initialization: boolean): Shape {
    if (call.name === INITIALIZE_TOOL) {
      if (!initialization) args.fail('unknown_tool', `${INITIALIZE_TOOL} is run by the system, not callable here`);
      const { shape, join: startingJoin } = initialize(this.db, this.options, args, call.label);
      this.joins.push(startingJoin);
      return shape;
    }
    if (initialization) args.fail('bad_value', `an initialization step must be ${INITIALIZE_TOOL}`);
    const offered = toolsOf(this.pool);
    const compileTool = toolCompiler(call.name);
    if (!compileTool) args.fail('unknown_tool', `unknown tool "${call.name}"; tools are ${allowed(offered)}`);
    if (!(offered as readonly string[]).includes(call.name)) {
      args.fail('not_in_pool', `tool "${call.name}" is not available; tools are ${allowed(offered)}`);
    }
    return compileTool(new CallScope(args, call.label, this.pool === 'paper', this.rels));
  }
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
