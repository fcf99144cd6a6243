import type { DatabaseInfo } from '../../core/model.js';
import type { Args } from './args.js';
import { allowed } from './errors.js';
import { startingTableKeys, type StartingTableRef } from './keys.js';
import { ascending, type Shape, type StartingBody } from './relation.js';
import { ident, join, quoteIdent, raw, sql, type Frag } from './sqlfrag.js';

/**
 * initialize_active_data: the starting table, a join of the database's tables. Its rows
 * carry the hidden identity (rowids, or primary keys) that union_data matches on, and its
 * order is the order SQLite enumerates the join in (docs/TOOLS.md, "Runtime notes").
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

/** Names SQLite accepts for the rowid; a column of the same name shadows one. */
const ROWID_NAMES = ['rowid', '_rowid_', 'oid'];

export function initialize(
  db: DatabaseInfo,
  options: CompileOptions,
  args: Args,
  label: string,
): { shape: Shape; join: StartingJoin } {
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
    keys = startingTableKeys(db, refs);
  } catch (error) {
    args.fail('bad_value', `${(error as Error).message}; tables are ${allowed(db.tables.map((t) => t.name))}`);
  }
  const aliases = new Map<string, string>(); // lower-case alias -> table name
  for (const ref of refs) {
    if (aliases.has(ref.alias.toLowerCase())) args.fail('bad_value', `alias "${ref.alias}" is used twice`);
    aliases.set(ref.alias.toLowerCase(), db.tables.find((t) => t.name.toLowerCase() === ref.table.toLowerCase())!.name);
  }
  const joins = args.raw('joins') ?? [];
  if (!Array.isArray(joins) || joins.length !== refs.length - 1) {
    args.fail('bad_value', `"joins" must be a list with one entry per table after the first (${refs.length - 1})`);
  }
  const column = (qualified: unknown, where: string): Frag => {
    if (typeof qualified !== 'string' || !qualified.includes('.'))
      args.fail('wrong_type', `${where} must be "<alias>.<column>"`);
    const dot = qualified.indexOf('.');
    const alias = qualified.slice(0, dot);
    const table = aliases.get(alias.toLowerCase());
    if (!table) args.fail('bad_value', `${where}: unknown alias "${alias}"`);
    const info = db.tables.find((t) => t.name === table)!;
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
    if (!spec || (spec.type !== 'inner' && spec.type !== 'left'))
      args.fail('bad_value', `joins[${i}].type must be "inner" or "left"`);
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
    keys
      .filter((k) => used(k.key))
      .map((k) => raw(`${quoteIdent(k.alias)}.${quoteIdent(k.column)} AS ${quoteIdent(k.key)}`));
  const aliasList = refs.map((r) => r.alias);
  const startingJoin = { from: from.sql, aliases: aliasList };
  const ids = rowIdentity(db, options, refs, aliases);
  const base = {
    kind: 'table' as const,
    keys: keys.map((k) => k.key),
    origin: label,
    orderToken: label,
    sorted: false,
  };
  const body =
    (idColumns: Frag[]): StartingBody =>
    (used) =>
      sql`SELECT ${join([...idColumns, ...columns(used)], ', ')} FROM ${from}`;
  if (!ids) {
    // Some table has neither a rowid nor a primary key: number the joined rows instead.
    const numbered = body([raw('ROW_NUMBER() OVER () AS "__rid"')]);
    return {
      join: startingJoin,
      shape: {
        ...base,
        columns: ['__rid', ...base.keys],
        identity: ['__rid'],
        order: ascending(['__rid']),
        body: numbered,
      },
    };
  }
  const identity = ids.map((id) => id.column);
  // Source order: the rowids, outermost loop of the planner's join first, which is the
  // order SQLite enumerates the join in (inner loops find their matches in rowid order).
  const nesting = options.sourceOrders?.get(from.sql);
  const rank = (table: number): number => (nesting ? nesting.indexOf(aliasList[table].toLowerCase()) : table);
  const complete = !nesting || aliasList.every((a) => nesting.includes(a.toLowerCase()));
  const order = complete ? [...ids].sort((x, y) => rank(x.table) - rank(y.table)).map((id) => id.column) : identity;
  const idColumns = ids.map((id) => raw(`${id.expression} AS ${quoteIdent(id.column)}`));
  return {
    join: startingJoin,
    shape: { ...base, columns: [...identity, ...base.keys], identity, order: ascending(order), body: body(idColumns) },
  };
}

/**
 * Hidden identity columns of a starting table: per joined table (in join order) its
 * rowid, or its primary key if it has no rowid; undefined if a table has neither.
 */
function rowIdentity(
  db: DatabaseInfo,
  options: CompileOptions,
  refs: StartingTableRef[],
  aliases: Map<string, string>,
): { column: string; expression: string; table: number }[] | undefined {
  const ids: { column: string; expression: string; table: number }[] = [];
  for (const [i, ref] of refs.entries()) {
    const info = db.tables.find((t) => t.name === aliases.get(ref.alias.toLowerCase()))!;
    const alias = quoteIdent(ref.alias);
    const taken = new Set(info.columns.map((c) => c.name.toLowerCase()));
    const rowid = options.withoutRowid?.has(info.name.toLowerCase())
      ? undefined
      : ROWID_NAMES.find((name) => !taken.has(name));
    if (rowid) ids.push({ column: `__rid_${i + 1}`, expression: `${alias}.${rowid}`, table: i });
    else if (info.primaryKey.length) {
      info.primaryKey.forEach((pk, j) =>
        ids.push({ column: `__rid_${i + 1}_${j + 1}`, expression: `${alias}.${quoteIdent(pk)}`, table: i }),
      );
    } else return undefined;
  }
  return ids;
}
