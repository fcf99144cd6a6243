import { z } from 'zod';
import type { SelBinding, SqlValue, ToolCall, ToolSpec } from '../core/model.js';
import { REFUSAL } from './negatives.js';
import type { ExportSample } from './sample.js';
import { bytesOf, checkedOncePerObject, perObject } from './shared-parts.js';
import type { Piece } from './writer.js';

/**
 * Samples in the form IBM published Live API-Bench in (SLOT-BIRD, SEL-BIRD, REST-BIRD; the
 * "data" records of its first generation, .scratch/live-api-bench-format.md), so that they
 * replay through the published runtime:
 *
 * - SLOT / SEL: `query`, `input`, `dataset_name` (the database), `sample_id`, `gold_answer`
 *   (squeezed as the published runtime returns answers), `initialization_step` (the published
 *   `initialize_active_data` object), `output` (the gold calls, keys renamed to the published
 *   names), `tools` (trimmed to `{description, name, arguments}`).
 * - REST: BIRD's own fields (`question_id`, `db_id`, `question`, `evidence`, `SQL`,
 *   `difficulty`) with `dataset_name`, `gold_answer`, `output` (the endpoint call) and
 *   `output_after_executing_api` (its response).
 *
 * Both carry what the published format lacks but a lossless round trip needs: `evidence`,
 * `difficulty` and `negative` (a negative expects no call and `expected_reply`, the refusal).
 * Files are one JSON array per database, written by `liveApiBenchJson`, which writes the
 * numbers the published runtime has as Python floats (`PyFloat`) as `5.0`.
 */

// ---------------------------------------------------------------------------------------
// Python floats

/**
 * A number that Python holds as a float: written `5.0`, not `5`, by `liveApiBenchJson`
 * (JSON.stringify cannot mark a whole number as a float). Plain JSON.stringify writes its value.
 */
export class PyFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

/** A whole number as a PyFloat; anything else unchanged (a fractional number is a float anyway). */
function asFloat<T>(value: T): T | PyFloat {
  return typeof value === 'number' && Number.isInteger(value) ? new PyFloat(value) : value;
}

/**
 * JSON as Python's `json.dump` writes it with its defaults (`, ` and `: ` separators, non-ASCII
 * escaped), PyFloats as floats. A value JSON cannot hold (NaN, a function) is written `null`
 * in a list and left out of an object, as JSON.stringify does.
 */
export function liveApiBenchJson(value: unknown): string {
  const { text, parts } = markedJson(value);
  return text
    .split(SPLICE)
    .map((piece, i) => (i % 2 === 1 ? parts[Number(piece)].text : piece))
    .join('');
}

/** liveApiBenchJson's text as the pieces a file is written from: its shared parts as their bytes, encoded once. */
export function liveApiBenchPieces(value: unknown): Piece[] {
  const { text, parts } = markedJson(value);
  return text.split(SPLICE).map((piece, i) => {
    if (i % 2 === 0) return piece;
    const part = parts[Number(piece)];
    return (part.bytes ??= bytesOf(part.text));
  });
}

/**
 * JSON.stringify (native, fast) with each PyFloat and each shared part as a marked string,
 * then one pass over the text: non-ASCII escaped, Python's separators outside strings, marked
 * strings back to float literals, and each shared part's place marked by SPLICE and its index.
 */
function markedJson(value: unknown): { text: string; parts: SharedText[] } {
  const parts: SharedText[] = [];
  const text =
    JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
      const raw = this[key];
      if (raw instanceof PyFloat) return FLOAT_MARK + floatText(raw.value);
      const part = key !== '' && raw !== null && typeof raw === 'object' ? partTexts.get(raw) : undefined;
      return part === undefined ? v : PART_MARK + (parts.push(part) - 1);
    }) ?? 'null';
  const marked = text
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/"(?:[^"\\]|\\.)*"|[,:]/g, (token) => {
      if (token === ',') return ', ';
      if (token === ':') return ': ';
      if (token.startsWith(MARKED_FLOAT)) return token.slice(MARKED_FLOAT.length, -1);
      if (token.startsWith(MARKED_PART)) return `${SPLICE}${token.slice(MARKED_PART.length, -1)}${SPLICE}`;
      return token;
    });
  return { text: marked, parts };
}

/**
 * What a PyFloat and a shared part are written as before the last pass (no SQL value starts
 * with two control characters), and how JSON writes those; where a part goes in the text
 * (JSON escapes every control character: none is left raw).
 */
const FLOAT_MARK = '\u0000\u0001';
const MARKED_FLOAT = '"\\u0000\\u0001';
const PART_MARK = '\u0000\u0002';
const MARKED_PART = '"\\u0000\\u0002';
const SPLICE = '\u0000';

/** A shared part's text, and its bytes once a file needs them. */
interface SharedText {
  text: string;
  bytes?: Uint8Array;
}

/** The texts of the parts many samples share (their tools), written once: liveApiBenchJson splices them. */
const partTexts = new WeakMap<object, SharedText>();

function sharedPart<T extends object>(part: T): T {
  partTexts.set(part, { text: liveApiBenchJson(part) });
  return part;
}

/** Python's float repr: `5.0`, `-0.0`, `1e+16` (exponent from 1e16 on), fractions as JavaScript writes them. */
function floatText(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (!Number.isInteger(value)) return JSON.stringify(value);
  if (Object.is(value, -0)) return '-0.0';
  return Math.abs(value) < 1e16 ? `${value}.0` : value.toExponential();
}

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
function contextKeyName(key: string, context: KeyContext): string | undefined {
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

const INITIALIZE = 'initialize_active_data' as const;

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

// ---------------------------------------------------------------------------------------
// Calls

/** A SEL call as the SLOT call it binds (SEL tool names bind categorical arguments). */
export function slotView(call: ToolCall, bindings: Record<string, SelBinding> | undefined) {
  const binding = bindings?.[call.name];
  return binding
    ? { tool: binding.slotTool, arguments: { ...binding.boundArguments, ...call.arguments } }
    : { tool: call.name, arguments: call.arguments };
}

const REFERENCE = /^\$([^$.]+)(?:\.(.+))?\$$/;

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
function callContexts(inits: readonly ToolCall[], calls: readonly ToolCall[]): KeyContext[] {
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
const KEY_ARGUMENTS = new Set(['key_name', 'partition_by']);

/**
 * Arguments with every key renamed by `rename`: `key_name` and `partition_by` at any depth
 * (operands are `{key_name}`), `new_key_name` (the key a call gives its new column, renamed as
 * later calls that name that column are), and the key of a `"$LABEL.key$"` reference (renamed
 * in the context of LABEL).
 */
function renameKeys(
  value: unknown,
  rename: (key: string) => string,
  referenceKey: (label: string, key: string) => string,
  field?: string,
): unknown {
  if (typeof value === 'string') {
    if (field && (KEY_ARGUMENTS.has(field) || field === 'new_key_name')) return rename(value);
    const reference = REFERENCE.exec(value);
    return reference?.[2] !== undefined ? `$${reference[1]}.${referenceKey(reference[1], reference[2])}$` : value;
  }
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, rename, referenceKey, field));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renameKeys(v, rename, referenceKey, k)]));
  return value;
}

/** The published runtime reads SQL literals as floats: a filter's whole-number value is written `5.0`. */
function floatLiterals(args: Record<string, unknown>): Record<string, unknown> {
  if (!('value' in args)) return args;
  const value = Array.isArray(args.value) ? args.value.map(asFloat) : asFloat(args.value);
  return { ...args, value };
}

interface RenamedCalls {
  calls: ToolCall[];
  /** Per nl2api key the calls use, its published names (one per starting table it is used in). */
  used: Map<string, Set<string>>;
}

function publishedCalls(
  inits: readonly ToolCall[],
  calls: readonly ToolCall[],
  bindings: Record<string, SelBinding> | undefined,
): RenamedCalls {
  const contexts = callContexts(inits, calls);
  const byLabel = new Map<string, KeyContext>([
    ...inits.map((init) => [init.label, keyContextOf(init)] as const),
    ...calls.map((call, i) => [call.label, contexts[i]] as const),
  ]);
  const used = new Map<string, Set<string>>();
  const renamed = calls.map((call, i) => {
    const rename = (key: string) => {
      const name = publishedKeyName(key, contexts[i]);
      used.set(key, (used.get(key) ?? new Set()).add(name));
      return name;
    };
    const referenceKey = (label: string, key: string) => publishedKeyName(key, byLabel.get(label) ?? contexts[i]);
    const args = renameKeys(call.arguments, rename, referenceKey) as Record<string, unknown>;
    const isFilter = slotView(call, bindings).tool === 'filter_data';
    return { name: call.name, arguments: isFilter ? floatLiterals(args) : args, label: call.label };
  });
  return { calls: renamed, used };
}

// ---------------------------------------------------------------------------------------
// Answers

type Scalar = SqlValue | PyFloat;
export type PublishedAnswer = Scalar | Scalar[] | Scalar[][];

/**
 * Rows as the published runtime returns an answer: by column (column-major), a column of one
 * value squeezed to that value, a single column to itself. One value is a scalar, one column a
 * flat list, one row of several columns a flat list of its values, no rows `[]`. Columns
 * marked in `floats` have their whole numbers written as floats.
 */
export function squeezeAnswer(
  rows: readonly (readonly SqlValue[])[],
  floats: readonly boolean[] = [],
): PublishedAnswer {
  const width = rows[0]?.length ?? 0;
  if (rows.length === 0 || width === 0) return [];
  const columns = Array.from({ length: width }, (_, c) => rows.map((row) => (floats[c] ? asFloat(row[c]) : row[c])));
  const squeezed = columns.map((column) => (column.length === 1 ? column[0] : column));
  return squeezed.length === 1 ? squeezed[0] : (squeezed as Scalar[] | Scalar[][]);
}

/** Aggregates the published runtime returns as Python floats (`float(np.max(…))`); count and argmin/argmax stay ints. */
const FLOAT_AGGREGATES = new Set(['min', 'max', 'sum', 'mean', 'std']);

/** Per answer column: whether the call giving it is a float aggregate (answer_labels name one call per column). */
function floatColumns(sample: ExportSample): boolean[] {
  const { item } = sample;
  const labels = (item.published.answer_labels ?? []) as string[];
  if (labels.length !== (item.gold.rows[0]?.length ?? 0)) return [];
  const calls = new Map(item.goldCalls.map((call) => [call.label, call]));
  return labels.map((label) => {
    const call = calls.get(label);
    if (!call) return false;
    const view = slotView(call, item.bindings);
    return view.tool === 'aggregate_data' && FLOAT_AGGREGATES.has(String(view.arguments.aggregation_type));
  });
}

// ---------------------------------------------------------------------------------------
// Tools

export interface PublishedTool {
  description: string;
  name: string;
  /** The parameters' `properties`, as the published records trim a spec. */
  arguments: Record<string, unknown>;
}

/**
 * A description listing keys (`…\nKeys:\n<key>: <what it is>` lines, a description possibly
 * running over several lines): the text before the list, its entries and what follows it.
 * `known` (the keys of the enums) tells an entry's first line from a continuation.
 */
function keyListOf(text: string, known: ReadonlySet<string>): KeyList | undefined {
  const marker = text.indexOf(KEYS_HEADING);
  if (marker < 0) return undefined;
  const trailer = KEY_LIST_TRAILERS.find((t) => text.endsWith(t)) ?? '';
  const entries: KeyList['entries'] = [];
  for (const line of text.slice(marker + KEYS_HEADING.length, text.length - trailer.length).split('\n')) {
    const key = keyOfLine(line, known);
    if (key !== undefined || entries.length === 0) entries.push({ key, lines: [line] });
    else entries[entries.length - 1].lines.push(line);
  }
  return { head: text.slice(0, marker), entries, trailer };
}

interface KeyList {
  head: string;
  /** An entry's lines start with its key (undefined: a line of no known key). */
  entries: { key: string | undefined; lines: string[] }[];
  trailer: string;
}

/** A description's key list with each entry under its published names, entries of no name dropped. */
function renameKeyList(text: string, known: ReadonlySet<string>, names: (key: string) => string[]): string {
  const list = keyListOf(text, known);
  if (!list) return text;
  const body = list.entries.flatMap(({ key, lines }) => {
    if (key === undefined) return lines;
    const rest = lines.join('\n').slice(key.length);
    return names(key).map((name) => name + rest);
  });
  return `${list.head}${KEYS_HEADING}${body.join('\n')}${list.trailer}`;
}

/**
 * A spec with its descriptions' key lists taken out, and what those lists said of each key
 * (`key` → its description), once per spec: the conversation formats describe each key once
 * per example rather than once per key argument of every tool.
 */
export const keyListsApart = perObject((tool: ToolSpec): { spec: ToolSpec; keys: ReadonlyMap<string, string> } => {
  const known = new Set(keysOf(tool));
  if (known.size === 0) return { spec: tool, keys: new Map() };
  const keys = new Map<string, string>();
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([field, value]) => {
        const list = field === 'description' && typeof value === 'string' ? keyListOf(value, known) : undefined;
        if (!list) return [field, strip(value)];
        for (const { key, lines } of list.entries)
          if (key !== undefined && !keys.has(key)) keys.set(key, lines.join('\n').slice(key.length + 2));
        return [field, `${list.head}${list.trailer}`];
      }),
    );
  };
  const properties = strip(propertiesOf(tool)) as Record<string, unknown>;
  return {
    spec: { ...tool, function: { ...tool.function, parameters: { ...tool.function.parameters, properties } } },
    keys,
  };
});

/** How nl2api's key specs introduce the list of keys in a description, and what may follow it (runtime/slot/specs.ts). */
const KEYS_HEADING = '\nKeys:\n';
const KEY_LIST_TRAILERS = ['\nA list of keys is also accepted.'];

/** The known key a `<key>: <description>` line starts with (a key may itself hold ": "). */
function keyOfLine(line: string, known: ReadonlySet<string>): string | undefined {
  for (let at = line.indexOf(': '); at >= 0; at = line.indexOf(': ', at + 1)) {
    if (known.has(line.slice(0, at))) return line.slice(0, at);
  }
  return undefined;
}

/** The string values of the key enums (under `key_name` and `partition_by`, also in `anyOf` / `items`). */
function keyEnums(node: unknown, inKey = false): string[] {
  if (Array.isArray(node)) return node.flatMap((n) => keyEnums(n, inKey));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([field, value]) =>
    field === 'enum' && inKey && Array.isArray(value)
      ? value.filter((v): v is string => typeof v === 'string')
      : keyEnums(value, inKey || KEY_ARGUMENTS.has(field)),
  );
}

/** A spec's argument schemas with their key enums and the key lists of their descriptions renamed. */
function renameSchemaKeys(
  node: unknown,
  known: ReadonlySet<string>,
  names: (key: string) => string[],
  inKey = false,
): unknown {
  if (Array.isArray(node)) return node.map((n) => renameSchemaKeys(n, known, names, inKey));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([field, value]) => {
      if (field === 'enum' && inKey && Array.isArray(value))
        return [field, [...new Set((value as unknown[]).flatMap((v) => (typeof v === 'string' ? names(v) : [v])))]];
      if (field === 'description' && typeof value === 'string') return [field, renameKeyList(value, known, names)];
      return [field, renameSchemaKeys(value, known, names, inKey || KEY_ARGUMENTS.has(field))];
    }),
  );
}

const propertiesOf = (tool: ToolSpec) =>
  (tool.function.parameters as { properties?: Record<string, unknown> }).properties ?? {};

/** A tool's keys (its key enums'; its descriptions list the same), once per spec. */
const keysOf = perObject((tool: ToolSpec): readonly string[] => [...new Set(keyEnums(propertiesOf(tool)))]);

/** A sample's names for a key, once per key: every tool lists the same keys, each in its enum and its description. */
function oncePerKey(names: (key: string) => string[]): (key: string) => string[] {
  const named = new Map<string, string[]>();
  return (key) => {
    let found = named.get(key);
    if (!found) named.set(key, (found = names(key)));
    return found;
  };
}

/** `build()` once per object (a tool spec, a tool list) and key. */
function memoPer<K extends object, T>(cache: WeakMap<K, Map<string, T>>, object: K, key: string, build: () => T): T {
  let byKey = cache.get(object);
  if (!byKey) cache.set(object, (byKey = new Map<string, T>()));
  let value = byKey.get(key);
  if (value === undefined) byKey.set(key, (value = build()));
  return value;
}

/**
 * A tool's properties with its keys renamed (or narrowed) for one sample: found once per spec
 * and `signature` (what the renaming depends on: the sample's starting tables and the keys its
 * calls use), built once per spec and the names its own keys get. Samples over other tables
 * that name this tool's keys alike share the very object (and so every text made of it); a
 * tool without keys is its own properties.
 */
function propertiesFor(tool: ToolSpec, signature: string, names: (key: string) => string[]): Record<string, unknown> {
  return memoPer(propertiesBySignature, tool, signature, () => {
    const keys = keysOf(tool);
    if (keys.length === 0) return propertiesOf(tool);
    return memoPer(propertiesByNames, tool, JSON.stringify(keys.map(names)), () => {
      const renamed = renameSchemaKeys(propertiesOf(tool), new Set(keys), names);
      return renamed as Record<string, unknown>;
    });
  });
}

const propertiesBySignature = new WeakMap<ToolSpec, Map<string, Record<string, unknown>>>();
const propertiesByNames = new WeakMap<ToolSpec, Map<string, Record<string, unknown>>>();

/** What a sample's key renaming depends on. */
function signatureOf(
  inits: readonly ToolCall[],
  used: RenamedCalls['used'],
  mode: 'own' | 'published',
  contextNames: (key: string) => string[],
): string {
  // Only the used keys the starting tables do not already name the same way change anything.
  const extra = [...used]
    .filter(([key, names]) => [...names].some((name) => !contextNames(key).includes(mode === 'own' ? key : name)))
    .map(([key, names]) => [key, [...names].sort()])
    .sort();
  return JSON.stringify([mode, inits.map((init) => init.arguments.tables), extra]);
}

/** A key's published names from the starting tables alone. */
function contextNamesOf(contexts: readonly KeyContext[]): (key: string) => string[] {
  return (key) => {
    if (key === '*') return [''];
    return contexts.flatMap((context) => (isLaterOccurrence(key, context) ? [] : (contextKeyName(key, context) ?? [])));
  };
}

/**
 * `<table>_<n>_…` for an occurrence of a table the sample joins fewer times: another sample's
 * self-join key (the database's tools list every sample's keys), not one of this sample's.
 */
function isLaterOccurrence(key: string, context: KeyContext): boolean {
  return context.tables.some(({ table, occurrences }) => {
    if (!key.toLowerCase().startsWith(`${table.toLowerCase()}_`)) return false;
    const n = /^(\d+)_/.exec(key.slice(table.length + 1))?.[1];
    return n !== undefined && Number(n) > occurrences;
  });
}

/**
 * The sample's tools as the published records carry them: `{description, name, arguments}`,
 * `initialize_active_data` left out (a replay runs it, a model never calls it). Key enums keep
 * the keys of the sample's own starting tables (and the keys derived from them), renamed, `"*"`
 * as `""`, and any other key its calls use; keys of the database's other tables are left out,
 * as the published records list only the sample's own keys.
 */
function publishedTools(
  tools: readonly ToolSpec[],
  inits: readonly ToolCall[],
  used: RenamedCalls['used'],
): PublishedTool[] {
  const contexts = inits.map(keyContextOf);
  const fromTables = contextNamesOf(contexts);
  const signature = signatureOf(inits, used, 'published', fromTables);
  const names = oncePerKey((key: string): string[] => [...new Set([...fromTables(key), ...(used.get(key) ?? [])])]);
  const offered = tools.filter((tool) => tool.function.name !== INITIALIZE);
  return offered.map((tool) => publishedTool(tool, propertiesFor(tool, signature, names)));
}

/** One published tool per spec and properties: samples that name its keys alike share it, and its text. */
function publishedTool(tool: ToolSpec, properties: Record<string, unknown>): PublishedTool {
  return memoPer(publishedSpecs, properties, '', () =>
    sharedPart({ description: tool.function.description, name: tool.function.name, arguments: properties }),
  );
}

const publishedSpecs = new WeakMap<Record<string, unknown>, Map<string, PublishedTool>>();

/**
 * The sample's own tools in nl2api's names, for the conversation formats: each key enum (and
 * each description's key list) narrowed to the keys of the sample's starting tables
 * (`startKeys`), `*` and any key its calls use, nothing renamed. A database's tools list every
 * key of every table and every key any of its samples derives: tens of thousands of tokens a
 * model need not read to answer one question, and other samples' keys besides.
 */
export function ownTools(sample: ExportSample): ToolSpec[] {
  const { item } = sample;
  if (item.formulation === 'rest' || item.initialization.length === 0) return sample.tools;
  const { used } = publishedCalls(item.initialization, sample.negative ? [] : item.goldCalls, item.bindings);
  const start = new Set(sample.startKeys);
  const fromTables = (key: string): string[] => (key === '*' || start.has(key) ? [key] : []);
  const own = oncePerKey((key: string): string[] => (used.has(key) ? [key] : fromTables(key)));
  const signature = signatureOf(item.initialization, used, 'own', fromTables);
  // The same spec objects, and the same list, for the same narrowing: the formats write each once (shared-parts.ts).
  return memoPer(ownLists, sample.tools, signature, () => {
    const narrowed = sample.tools.map((tool) => ownSpec(tool, propertiesFor(tool, signature, own)));
    return memoPer(canonicalLists, sample.tools, narrowed.map(objectId).join(','), () => narrowed);
  });
}

/** One spec per tool and narrowed properties (a tool without keys is itself). */
function ownSpec(tool: ToolSpec, properties: Record<string, unknown>): ToolSpec {
  if (properties === propertiesOf(tool)) return tool;
  return memoPer(ownSpecs, properties, '', () => ({
    ...tool,
    function: { ...tool.function, parameters: { ...tool.function.parameters, properties } },
  }));
}

const ownSpecs = new WeakMap<Record<string, unknown>, Map<string, ToolSpec>>();
const ownLists = new WeakMap<readonly ToolSpec[], Map<string, ToolSpec[]>>();

/** One array per distinct list of spec objects (by their ids): what is memoized per list (a prompt, a tools string) is found for it too. */
const canonicalLists = new WeakMap<readonly ToolSpec[], Map<string, ToolSpec[]>>();
let objectIds = 0;
const objectId = perObject<ToolSpec, number>(() => ++objectIds);

// ---------------------------------------------------------------------------------------
// Examples

/** `"12"` → 12 (the published ids are numbers); an id that is not a plain non-negative integer stays a string. */
function sampleIdOf(id: string): number | string {
  return /^(0|[1-9]\d*)$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : id;
}

function sequenceExample(sample: ExportSample): SequenceExample {
  const { item } = sample;
  const [first, ...more] = item.initialization;
  if (!first)
    throw new Error(`${sample.key}: a ${item.formulation.toUpperCase()} sample without initialize_active_data`);
  const calls = sample.negative ? [] : item.goldCalls;
  const renamed = publishedCalls(item.initialization, calls, item.bindings);
  return {
    query: item.sql,
    input: item.question,
    dataset_name: item.db,
    sample_id: sampleIdOf(item.id),
    gold_answer: squeezeAnswer(item.gold.rows, floatColumns(sample)),
    initialization_step: publishedInitialization(first, item.db),
    // A nested SELECT's own starting tables come first in `output`, as the published runtime runs any init call.
    output: sample.negative ? [] : [...more.map((init) => publishedInitialization(init, item.db)), ...renamed.calls],
    tools: publishedTools(sample.tools, item.initialization, renamed.used),
    evidence: item.evidence,
    difficulty: item.difficulty,
    negative: sample.negative,
    ...(sample.negative ? { expected_reply: REFUSAL } : {}),
  };
}

function restExample(sample: ExportSample): RestExample {
  const { item } = sample;
  const id = sampleIdOf(item.id);
  return {
    question_id: id,
    sample_id: id,
    db_id: item.db,
    question: item.question,
    evidence: item.evidence,
    SQL: item.sql,
    difficulty: item.difficulty,
    dataset_name: item.db,
    // As BIRD gives a gold answer: the SQL's rows.
    gold_answer: item.gold.rows.map((row) => [...row]),
    output: sample.negative ? [] : item.goldCalls.map((call) => ({ name: call.name, arguments: call.arguments })),
    output_after_executing_api: sample.negative ? null : (item.published.output_after_executing_api ?? null),
    negative: sample.negative,
    // A negative's endpoints are the database's less those that answer it: named here, the specs are the database's.
    ...(sample.negative ? { expected_reply: REFUSAL, tools: sample.tools.map((tool) => tool.function.name) } : {}),
  };
}

/**
 * One sample in the published form: a SLOT / SEL record, or a REST-BIRD record. `index` (the
 * position in the export, as every line format is given) is not used: the sample keeps its own id.
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function liveApiBenchExample(sample: ExportSample, index?: number): LiveApiBenchExample {
  return sample.item.formulation === 'rest' ? restExample(sample) : sequenceExample(sample);
}

/**
 * Why the published format cannot hold this sample, if it cannot: a starting table whose
 * joins the published init object has no form for (two column equalities in one join, a
 * cycle, a join without an equality). REST samples always fit.
 */
export function liveApiBenchUnsupported(sample: ExportSample): string | undefined {
  if (sample.item.formulation === 'rest') return undefined;
  for (const init of sample.item.initialization) {
    const problem = joinProblem(publishedInitialization(init, sample.item.db).arguments);
    if (problem) return `${init.label}: ${problem}`;
  }
  return undefined;
}

/** A database's REST endpoints in OpenAI function format: the published per-database tool list. */
export function liveApiBenchRestTools(tools: readonly ToolSpec[]): ToolSpec[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters,
    },
  }));
}

// ---------------------------------------------------------------------------------------
// Schema

const ScalarSchema = z.union([z.string(), z.number(), z.null(), z.instanceof(PyFloat)]);
/** Squeezed: a list of one value would have been that value. */
const AnswerSchema = z
  .union([ScalarSchema, z.array(ScalarSchema), z.array(z.array(ScalarSchema))])
  .refine(
    (answer) =>
      !Array.isArray(answer) || (answer.length !== 1 && answer.every((a) => !Array.isArray(a) || a.length > 1)),
    {
      message: 'gold_answer is not squeezed: a list of one value stands for that value',
    },
  );

const SampleIdSchema = z.union([z.number().int().min(0), z.string().min(1)]);
const LabelSchema = z.string().min(1);
const CallSchema = z
  .object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()), label: LabelSchema })
  .strict();
const InitSchema = z
  .object({
    name: z.literal(INITIALIZE),
    arguments: z
      .object({
        condition_sequence: z.array(z.tuple([z.string().regex(/\./), z.string().regex(/\./), z.string().min(1)])),
        alias_to_table_dict: z.record(
          z.string(),
          z.object({ original_table_name: z.string().min(1), modified_table_name: z.string().min(1) }).strict(),
        ),
        database_path: z.string().min(1),
      })
      .strict(),
    label: LabelSchema,
  })
  .strict();
const ToolSchema = checkedOncePerObject(
  z.object({ description: z.string(), name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }).strict(),
);

const SequenceExampleSchema = z
  .object({
    query: z.string().min(1),
    input: z.string().min(1),
    dataset_name: z.string().min(1),
    sample_id: SampleIdSchema,
    gold_answer: AnswerSchema,
    initialization_step: InitSchema,
    output: z.array(CallSchema),
    tools: z.array(ToolSchema),
    evidence: z.string(),
    difficulty: z.string().nullable(),
    negative: z.boolean(),
    expected_reply: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((example, ctx) => {
    const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (example.negative !== (example.expected_reply !== undefined))
      problem('a negative (and only a negative) has an expected_reply');
    if (example.negative ? example.output.length > 0 : example.output.length === 0)
      problem(example.negative ? 'a negative expects no call' : 'a sample needs its gold calls');
    const inits = [example.initialization_step, ...example.output.filter((call) => call.name === INITIALIZE)];
    for (const init of inits) {
      const parsed = InitSchema.safeParse(init);
      if (!parsed.success) problem(`${init.label}: not an initialization object`);
      else if (joinProblem(parsed.data.arguments)) problem(`${init.label}: ${joinProblem(parsed.data.arguments)}`);
    }
    const undefinedReference = referenceProblem(example.initialization_step.label, example.output);
    if (undefinedReference) problem(undefinedReference);
  });

/** A call reading a label no earlier call has, or a label used twice. */
function referenceProblem(start: string, calls: readonly { arguments: unknown; label: string }[]): string | undefined {
  const defined = new Set([start]);
  const references = (value: unknown): string[] => {
    if (typeof value === 'string') return REFERENCE.exec(value)?.slice(1, 2) ?? [];
    if (Array.isArray(value)) return value.flatMap(references);
    if (value && typeof value === 'object') return Object.values(value).flatMap(references);
    return [];
  };
  for (const call of calls) {
    const missing = references(call.arguments).find((label) => !defined.has(label));
    if (missing) return `${call.label} reads "$${missing}$", which no earlier call defines`;
    if (defined.has(call.label)) return `label ${call.label} is used twice`;
    defined.add(call.label);
  }
  return undefined;
}

const RestExampleSchema = z
  .object({
    question_id: SampleIdSchema,
    sample_id: SampleIdSchema,
    db_id: z.string().min(1),
    question: z.string().min(1),
    evidence: z.string(),
    SQL: z.string().min(1),
    difficulty: z.string().nullable(),
    dataset_name: z.string().min(1),
    gold_answer: z.array(z.array(ScalarSchema)),
    output: z.array(z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }).strict()),
    output_after_executing_api: z.unknown(),
    negative: z.boolean(),
    expected_reply: z.string().min(1).optional(),
    tools: z.array(z.string()).optional(),
  })
  .strict()
  .superRefine((example, ctx) => {
    const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (example.db_id !== example.dataset_name) problem('dataset_name is the database: db_id and dataset_name differ');
    if (example.negative !== (example.expected_reply !== undefined))
      problem('a negative (and only a negative) has an expected_reply');
    if (example.negative ? example.output.length > 0 : example.output.length === 0)
      problem(example.negative ? 'a negative expects no call' : 'a sample needs its endpoint call');
  });

export const LiveApiBenchExampleSchema = z.union([SequenceExampleSchema, RestExampleSchema]);

type SequenceExample = z.infer<typeof SequenceExampleSchema>;
type RestExample = z.infer<typeof RestExampleSchema>;
export type LiveApiBenchExample = z.infer<typeof LiveApiBenchExampleSchema>;
