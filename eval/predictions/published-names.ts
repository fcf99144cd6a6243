import type { SelBinding, ToolCall } from '../../core/model.js';

/**
 * How the published SLOT/SEL runtimes (Live API-Bench's and VAKRA's, one lineage of pandas
 * tools) name what nl2api names otherwise: column keys (`make_safe`, table prefixes, bare
 * columns of one unaliased table), the starting table's `initialize_active_data` arguments,
 * and a SEL call as the SLOT call it binds. Shared by every format that writes for them
 * (export/published/), by the reader of their agents' calls (vakra-keys.ts) and by
 * `nl2api mcp --protocol vakra`: so it sits in eval, the lowest of those layers.
 */

// ---------------------------------------------------------------------------------------
// Key names

/** The published runtime's `make_safe`, which it applies to every column name. */
export function makeSafe(name: string): string {
  return name
    .trim()
    .replaceAll(' ', '_')
    .replaceAll('(', '')
    .replaceAll(')', '')
    .replaceAll('/', '_')
    .replaceAll('-', '_');
}

/**
 * How one starting table's keys are renamed: nl2api keys its columns `<table>_<column>` (the
 * table's n-th occurrence in the join `<table>_<n>_<column>`, n = 2, 3, …); the published
 * runtime `<modified table name>_<safe column>` (second occurrence `<table>_1`, then `_2`, …)
 * or the bare safe column when the query names one table without an alias.
 */
interface KeyPrefix {
  nl2api: string;
  published: string;
}

/** The key names of one initialization's starting table; `prefixes` longest first (`Player_Attributes_` before `Player_`). */
export interface KeyContext {
  prefixes: readonly KeyPrefix[];
  /** Each table joined, with how many times. */
  tables: readonly { table: string; occurrences: number }[];
}

interface StartingTable {
  alias: string;
  table: string;
  /** 1 for the table's first occurrence in the join, 2 for its second, … */
  occurrence: number;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function startingTables(init: ToolCall): StartingTable[] {
  const refs = (init.arguments.tables ?? []) as { alias: string; table: string }[];
  const seen = new Map<string, number>();
  return refs.map((ref) => {
    const occurrence = (seen.get(ref.table.toLowerCase()) ?? 0) + 1;
    seen.set(ref.table.toLowerCase(), occurrence);
    return { alias: ref.alias, table: ref.table, occurrence };
  });
}

/** `FROM t` (nl2api writes alias t): the published runtime names this table's alias "" and its keys bare. */
function isAliasless(tables: readonly StartingTable[]): boolean {
  return tables.length === 1 && same(tables[0].alias, tables[0].table);
}

/** The published `modified_table_name`: the table, then `<table>_1`, `<table>_2` for its later occurrences. */
function modifiedName(table: StartingTable): string {
  return table.occurrence === 1 ? table.table : `${table.table}_${table.occurrence - 1}`;
}

export function keyContextOf(init: ToolCall): KeyContext {
  const tables = startingTables(init);
  const aliasless = isAliasless(tables);
  const prefixes = tables.map((t) => ({
    nl2api: t.occurrence === 1 ? `${t.table}_` : `${t.table}_${t.occurrence}_`,
    // A joined table's columns are made safe after the prefix is added, a single table's before.
    published: aliasless ? '' : `${tables.length > 1 ? makeSafe(modifiedName(t)) : modifiedName(t)}_`,
  }));
  const occurrences = new Map<string, { table: string; occurrences: number }>();
  for (const t of tables) occurrences.set(t.table.toLowerCase(), { table: t.table, occurrences: t.occurrence });
  return { prefixes: prefixes.sort((a, b) => b.nl2api.length - a.nl2api.length), tables: [...occurrences.values()] };
}

/** nl2api's key of a per-group aggregate (`count_<key>`, `sum_distinct_<key>`): the aggregate keeps its name, the key is renamed. */
const AGGREGATE_KEY = /^((?:min|max|sum|mean|count|std|argmin|argmax)(?:_distinct)?_)(.+)$/;

/** The published name of a key of this context's tables (or derived from one), undefined for any other key. */
export function contextKeyName(key: string, context: KeyContext): string | undefined {
  const lower = key.toLowerCase();
  const prefix = context.prefixes.find((p) => lower.startsWith(p.nl2api.toLowerCase()) && key.length > p.nl2api.length);
  if (prefix) return prefix.published + makeSafe(key.slice(prefix.nl2api.length));
  const aggregate = AGGREGATE_KEY.exec(key);
  if (!aggregate) return undefined;
  const inner = contextKeyName(aggregate[2], context);
  return inner === undefined ? undefined : aggregate[1] + inner;
}

/**
 * The published runtime's name for an nl2api key in the starting table `context`: `"*"`
 * (count rows) is `""`; a column key `<table>[_<n>]_<column>` is re-prefixed and its column
 * made safe; anything else (a key a call derives, such as `count_rows`) is made safe as a whole.
 */
export function publishedKeyName(key: string, context: KeyContext): string {
  if (key === '*') return '';
  return contextKeyName(key, context) ?? makeSafe(key);
}

// ---------------------------------------------------------------------------------------
// The initialization

export const INITIALIZE = 'initialize_active_data' as const;

interface JoinSpec {
  type: 'inner' | 'left';
  alias: string;
  on: { left: string; right: string }[];
}

/** The published arguments of `initialize_active_data` (a type, not an interface: it must stay assignable to Record<string, unknown>). */
export type PublishedInitArguments = {
  /** Per join condition: `[left "alias.column", right "alias.column", kind]`, the newly joined table on the right. */
  condition_sequence: [string, string, string][];
  alias_to_table_dict: Record<string, { original_table_name: string; modified_table_name: string }>;
  database_path: string;
};

const aliasOf = (qualified: string) => qualified.slice(0, qualified.indexOf('.'));

/**
 * nl2api's `initialize_active_data(database, tables, joins)` as the published init object. The
 * published runtime merges each condition's right-hand table into the tables joined so far, so
 * a condition is turned to have the table it joins on the right. A join on several equalities
 * gives one condition each, which the published runtime cannot replay (the schema refuses it).
 * The database path is relative to the folder holding the databases (`<db>/<db>.sqlite`, as in
 * BIRD's `dev_databases`): a replay points it at its own copy, as the published scripts do.
 */
export function publishedInitialization(
  init: ToolCall,
  db: string,
): { name: typeof INITIALIZE; arguments: PublishedInitArguments; label: string } {
  const tables = startingTables(init);
  const aliasless = isAliasless(tables);
  const joins = (init.arguments.joins ?? []) as JoinSpec[];
  // SQL aliases ignore case, the published alias_to_table_dict does not: each side as the alias is declared.
  const declared = new Map(tables.map((t) => [t.alias.toLowerCase(), t.alias]));
  const side = (qualified: string) => {
    const alias = aliasOf(qualified);
    return `${declared.get(alias.toLowerCase()) ?? alias}${qualified.slice(alias.length)}`;
  };
  const conditions = joins.flatMap((join) =>
    join.on.map(({ left, right }): [string, string, string] => {
      const flip = same(aliasOf(left), join.alias) && !same(aliasOf(right), join.alias);
      return [side(flip ? right : left), side(flip ? left : right), join.type.toUpperCase()];
    }),
  );
  const aliases = Object.fromEntries(
    tables.map((t) => [
      aliasless ? '' : t.alias,
      { original_table_name: t.table, modified_table_name: modifiedName(t) },
    ]),
  );
  return {
    name: INITIALIZE,
    arguments: { condition_sequence: conditions, alias_to_table_dict: aliases, database_path: `${db}/${db}.sqlite` },
    label: init.label,
  };
}

/** Why the published runtime cannot build this starting table (undefined: it can). */
export function joinProblem(args: PublishedInitArguments): string | undefined {
  const aliases = Object.keys(args.alias_to_table_dict);
  const joined = new Set<string>();
  for (const [i, [left, right]] of args.condition_sequence.entries()) {
    const [l, r] = [aliasOf(left), aliasOf(right)];
    if (!(l in args.alias_to_table_dict) || !(r in args.alias_to_table_dict))
      return `condition ${i} names an alias that alias_to_table_dict lacks`;
    if (i === 0) joined.add(l);
    if (!joined.has(l)) return `condition ${i}: ${left} is not of a table joined before it`;
    if (joined.has(r))
      return `condition ${i}: ${right} is of a table joined before it (a join on several equalities, or a cycle, has no published form)`;
    joined.add(r);
  }
  const unjoined = aliases.filter((a) => !joined.has(a));
  if (aliases.length > 1 && unjoined.length > 0)
    return `${unjoined.map((a) => JSON.stringify(a)).join(', ')} never joined (a join without a column equality has no published form)`;
  return undefined;
}

/** A SEL call as the SLOT call it binds (SEL tool names bind categorical arguments). */
export function slotView(call: ToolCall, bindings: Record<string, SelBinding> | undefined) {
  const binding = bindings?.[call.name];
  return binding
    ? { tool: binding.slotTool, arguments: { ...binding.boundArguments, ...call.arguments } }
    : { tool: call.name, arguments: call.arguments };
}

/** The filter conditions the published runtimes have. */
export const PUBLISHED_CONDITION_NAMES = [
  'equal_to',
  'not_equal_to',
  'greater_than',
  'less_than',
  'greater_than_equal_to',
  'less_than_equal_to',
  'contains',
  'like',
] as const;
export const PUBLISHED_CONDITIONS: ReadonlySet<string> = new Set(PUBLISHED_CONDITION_NAMES);
/** nl2api's null tests, which the published filter says as a comparison with None. */
export const NULL_TESTS: Record<string, string> = { is_null: 'equal_to', is_not_null: 'not_equal_to' };

/**
 * The init arguments with aliases sorted, as VAKRA's universes hold them (its mapping script
 * writes them with PyYAML's `yaml.dump`, which sorts keys; every entry of VAKRA's own mapping
 * is sorted). Its initialize_active_data starts FROM the first alias and joins each
 * condition's table not joined yet, so the conditions are ordered to reach each table from
 * those joined before it; undefined when a joined table is not reached from the first alias.
 */
export function sortedAliases(args: PublishedInitArguments): PublishedInitArguments | undefined {
  const aliases = Object.keys(args.alias_to_table_dict).sort();
  const joined = new Set(aliases.slice(0, 1));
  const pending = [...args.condition_sequence];
  const ordered: PublishedInitArguments['condition_sequence'] = [];
  while (pending.length > 0) {
    const next = pending.findIndex(([left, right]) => joined.has(aliasOf(left)) || joined.has(aliasOf(right)));
    if (next < 0) return undefined;
    const [condition] = pending.splice(next, 1);
    joined.add(aliasOf(condition[0])).add(aliasOf(condition[1]));
    ordered.push(condition);
  }
  return {
    ...args,
    condition_sequence: ordered,
    alias_to_table_dict: Object.fromEntries(aliases.map((alias) => [alias, args.alias_to_table_dict[alias]])),
  };
}

/** A `"$LABEL$"` or `"$LABEL.key$"` reference. */
export const REFERENCE = /^\$([^$.]+)(?:\.(.+))?\$$/;

/** The label a call reads its table from: `data_source`'s, else its first reference. */
function sourceLabel(call: ToolCall): string | undefined {
  const first = (value: unknown): string | undefined => {
    if (typeof value === 'string') return REFERENCE.exec(value)?.[1];
    if (Array.isArray(value)) return value.map(first).find((label) => label !== undefined);
    if (value && typeof value === 'object')
      return Object.values(value)
        .map(first)
        .find((l) => l !== undefined);
    return undefined;
  };
  return first(call.arguments.data_source) ?? first(call.arguments);
}

/**
 * Each call's key context: that of the initialization its input descends from (a sample with
 * a nested SELECT has several starting tables, each keyed on its own).
 */
export function callContexts(inits: readonly ToolCall[], calls: readonly ToolCall[]): KeyContext[] {
  const byLabel = new Map(inits.map((init) => [init.label, keyContextOf(init)]));
  const fallback: KeyContext = inits.length > 0 ? keyContextOf(inits[0]) : { prefixes: [], tables: [] };
  return calls.map((call) => {
    const source = sourceLabel(call);
    const context = (source !== undefined ? byLabel.get(source) : undefined) ?? fallback;
    byLabel.set(call.label, context);
    return context;
  });
}

/** Argument names whose strings (or lists of strings) are keys. */
export const KEY_ARGUMENTS: ReadonlySet<string> = new Set(['key_name', 'partition_by', 'new_key_name']);

/** The string values of the key enums in a spec (under `key_name` and `partition_by`, also in `anyOf` / `items`). */
export function keyEnums(node: unknown, inKey = false): string[] {
  if (Array.isArray(node)) return node.flatMap((n) => keyEnums(n, inKey));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([field, value]) =>
    field === 'enum' && inKey && Array.isArray(value)
      ? value.filter((v): v is string => typeof v === 'string')
      : keyEnums(value, inKey || KEY_ARGUMENTS.has(field)),
  );
}
