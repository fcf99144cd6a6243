import { z } from 'zod';
import type { SqlValue, ToolCall, ToolSpec } from '../core/model.js';
import { REFUSAL } from './negatives.js';
import { publishedSequence, type PublishedSequence, type PublishedTranslation } from './published/calls.js';
import { liveApiBenchDialect } from './published/dialects.js';
import { databaseFile } from './published/first-columns.js';
import { PANDAS_MISSING, type ColumnReading } from './published/pandas-reading.js';
import { publishedSelTools } from './published/sel-tools.js';
import {
  callContexts,
  contextKeyName,
  INITIALIZE,
  KEY_ARGUMENTS,
  keyEnums,
  joinProblem,
  keyContextOf,
  publishedInitialization,
  publishedKeyName,
  REFERENCE,
  slotView,
  type KeyContext,
} from '../eval/predictions/published-names.js';
import type { ExportSample } from './sample.js';
import { perObject } from '../core/per-object.js';
import { bytesOf, checkedOncePerObject } from './shared-parts.js';
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
  return jsonPieces(value)
    .map((piece) => (typeof piece === 'string' ? piece : piece.text))
    .join('');
}

/** liveApiBenchJson's text as the pieces a file is written from: its shared parts as their bytes, encoded once. */
export function liveApiBenchPieces(value: unknown): Piece[] {
  return jsonPieces(value).map((piece) => (typeof piece === 'string' ? piece : (piece.bytes ??= bytesOf(piece.text))));
}

/**
 * The text in one walk over the value, as JSON.stringify walks it (toJSON, the members it
 * leaves out), with Python's separators and escapes; each shared part (but the value itself)
 * as its text made once, apart.
 */
function jsonPieces(value: unknown): (string | SharedText)[] {
  const pieces: (string | SharedText)[] = [];
  let text = '';
  /** What JSON.stringify writes for `raw` under `key`: a PyFloat, a shared part, or the value (toJSON applied). */
  const resolve = (raw: unknown, key: string, root: boolean): unknown => {
    if (raw === null || typeof raw !== 'object' || raw instanceof PyFloat) return raw;
    const part = root ? undefined : partTexts.get(raw);
    if (part) return part;
    const toJSON = (raw as { toJSON?: unknown }).toJSON;
    return typeof toJSON === 'function' ? (toJSON as (key: string) => unknown).call(raw, key) : raw;
  };
  const omitted = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';
  const write = (v: unknown): void => {
    if (v instanceof PyFloat) text += floatText(v.value);
    else if (v instanceof SharedText) {
      pieces.push(text, v);
      text = '';
    } else if (typeof v === 'string') text += pythonString(v);
    else if (typeof v === 'number') text += Number.isFinite(v) ? String(v) : 'null';
    else if (typeof v === 'boolean') text += v ? 'true' : 'false';
    else if (v === null || typeof v !== 'object') text += 'null';
    else if (Array.isArray(v)) {
      text += '[';
      for (let i = 0; i < v.length; i++) {
        if (i > 0) text += ', ';
        const item = resolve(v[i], String(i), false);
        if (omitted(item)) text += 'null';
        else write(item);
      }
      text += ']';
    } else {
      text += '{';
      let first = true;
      for (const key of Object.keys(v)) {
        const member = resolve((v as Record<string, unknown>)[key], key, false);
        if (omitted(member)) continue;
        text += `${first ? '' : ', '}${pythonString(key)}: `;
        first = false;
        write(member);
      }
      text += '}';
    }
  };
  const top = resolve(value, '', true);
  if (omitted(top)) text += 'null';
  else write(top);
  pieces.push(text);
  return pieces;
}

/** A string as JSON writes it, non-ASCII escaped as Python does. */
function pythonString(value: string): string {
  const json = JSON.stringify(value);
  return NON_ASCII.test(json)
    ? json.replace(NON_ASCII_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : json;
}

const NON_ASCII = /[\u007f-\uffff]/;
const NON_ASCII_ALL = /[\u007f-\uffff]/g;

/** A shared part's text, and its bytes once a file needs them. */
class SharedText {
  bytes?: Uint8Array;
  constructor(readonly text: string) {}
}

/** The texts of the parts many samples share (their tools), written once: liveApiBenchJson splices them. */
const partTexts = new WeakMap<object, SharedText>();

export function sharedPart<T extends object>(part: T): T {
  partTexts.set(part, new SharedText(liveApiBenchJson(part)));
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
// Calls

/** The keys an argument names: under `key_name`, `partition_by` and `new_key_name`, at any depth (operands are `{key_name}`). */
function keysIn(value: unknown, field?: string): string[] {
  if (typeof value === 'string') return field && KEY_ARGUMENTS.has(field) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((v) => keysIn(v, field));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => keysIn(v, k));
  return [];
}

/** Per nl2api key the calls use, its published names (one per starting table it is used in): what a record's tools must offer. */
type UsedKeys = Map<string, Set<string>>;

function usedKeys(inits: readonly ToolCall[], calls: readonly ToolCall[]): UsedKeys {
  const contexts = callContexts(inits, calls);
  const used: UsedKeys = new Map();
  calls.forEach((call, i) => {
    for (const key of keysIn(call.arguments))
      used.set(key, (used.get(key) ?? new Set()).add(publishedKeyName(key, contexts[i])));
  });
  return used;
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

/**
 * Per answer column, how the runtime types its numbers: `known` when the export knows it (an
 * aggregate, or a stored column its pandas read: pandas-reading.ts), `floats` when it gives whole
 * numbers as floats (a float aggregate, or a stored column with a NULL or a fraction anywhere).
 * answer_labels name one call per column.
 */
function answerColumnTypes(sample: ExportSample): { known: boolean; floats: boolean }[] {
  const { item } = sample;
  const calls = new Map(item.goldCalls.map((call) => [call.label, call]));
  return ((item.published.answer_labels ?? []) as string[]).map((label) => {
    const call = calls.get(label);
    if (!call) return { known: false, floats: false };
    const view = slotView(call, item.bindings);
    if (view.tool === 'aggregate_data')
      return { known: true, floats: FLOAT_AGGREGATES.has(String(view.arguments.aggregation_type)) };
    const reading = RETRIEVALS.has(view.tool) ? readingOf(sample, view.arguments.key_name) : undefined;
    return { known: reading !== undefined, floats: reading?.floats === true };
  });
}

/** Per answer column: whether its whole numbers are written as floats (answerColumnTypes), when the labels name every column. */
function floatColumns(sample: ExportSample): boolean[] {
  const types = answerColumnTypes(sample);
  return types.length === (sample.item.gold.rows[0]?.length ?? 0) ? types.map((t) => t.floats) : [];
}

const RETRIEVALS = new Set(['retrieve_data', 'select_unique_values']);

/** How the runtime reads back the stored column a starting key names (undefined: not a starting key, or not known). */
const readingOf = (sample: ExportSample, key: unknown): ColumnReading | undefined =>
  typeof key === 'string' ? sample.pandas?.columns[key] : undefined;

/**
 * The answer's rows in the order the runtime gives them. An answer of several columns is
 * several calls' outputs side by side, which the published runtime compares column by column
 * in order (np.array_equal): without an ORDER BY, SQL's rows have no order, so they are written
 * in the runtime's (its joins nested in join order: pandas-reading.ts), else in the order the
 * recorded outputs give them. Either only when it holds the very rows of the answer.
 */
function answerRows(sample: ExportSample): readonly (readonly SqlValue[])[] {
  const { item } = sample;
  const gold = item.gold.rows;
  const joinOrder = sample.pandas?.joinOrderRows;
  if (joinOrder && sameRows(joinOrder, gold)) return joinOrder;
  const labels = (item.published.answer_labels ?? []) as string[];
  const parts = item.published.output_after_executing_api;
  const width = gold[0]?.length ?? 0;
  if (labels.length < 2 || labels.length !== width || !Array.isArray(parts) || parts.length !== width) return gold;
  const columns = parts.map((part) => (Array.isArray(part) ? (part as SqlValue[]) : [part as SqlValue]));
  if (columns.some((column) => column.length !== gold.length)) return gold;
  return gold.map((_, i) => columns.map((column) => column[i]));
}

/** The same rows, in any order. */
function sameRows(a: readonly (readonly SqlValue[])[], b: readonly (readonly SqlValue[])[]): boolean {
  if (a.length !== b.length) return false;
  const counts = new Map<string, number>();
  for (const row of a) counts.set(JSON.stringify(row), (counts.get(JSON.stringify(row)) ?? 0) + 1);
  for (const row of b) {
    const n = counts.get(JSON.stringify(row)) ?? 0;
    if (n === 0) return false;
    counts.set(JSON.stringify(row), n - 1);
  }
  return true;
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
 * `known` (the keys of the enums) tells an entry's first line from a continuation. Read once
 * per description and key set (`knownKeys`: one set per spec): every sample renaming a spec's
 * keys renames the same entries.
 */
function keyListOf(text: string, known: ReadonlySet<string>): KeyList | null {
  return memoPer(keyLists, known, text, () => {
    const marker = text.indexOf(KEYS_HEADING);
    if (marker < 0) return null;
    const trailer = KEY_LIST_TRAILERS.find((t) => text.endsWith(t)) ?? '';
    const entries: { key: string | undefined; lines: string[] }[] = [];
    for (const line of text.slice(marker + KEYS_HEADING.length, text.length - trailer.length).split('\n')) {
      const key = keyOfLine(line, known);
      if (key !== undefined || entries.length === 0) entries.push({ key, lines: [line] });
      else entries[entries.length - 1].lines.push(line);
    }
    return {
      head: text.slice(0, marker),
      entries: entries.map(({ key, lines }) => ({ key, text: lines.join('\n') })),
      trailer,
    };
  });
}

const keyLists = new WeakMap<ReadonlySet<string>, Map<string, KeyList | null>>();

interface KeyList {
  head: string;
  /** An entry's text (its lines) starts with its key (undefined: a line of no known key). */
  entries: { key: string | undefined; text: string }[];
  trailer: string;
}

/** A description's key list with each entry under its published names, entries of no name dropped. */
function renameKeyList(text: string, known: ReadonlySet<string>, names: (key: string) => string[]): string {
  const list = keyListOf(text, known);
  if (!list) return text;
  const body = list.entries.flatMap(({ key, text: entry }) => {
    if (key === undefined) return [entry];
    const rest = entry.slice(key.length);
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
  const known = knownKeys(tool);
  if (known.size === 0) return { spec: tool, keys: new Map() };
  const keys = new Map<string, string>();
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([field, value]) => {
        const list = field === 'description' && typeof value === 'string' ? keyListOf(value, known) : undefined;
        if (!list) return [field, strip(value)];
        for (const { key, text } of list.entries)
          if (key !== undefined && !keys.has(key)) keys.set(key, text.slice(key.length + 2));
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

/** keysOf as a set, once per spec: what tells its descriptions' key lines apart (keyListOf). */
const knownKeys = perObject((tool: ToolSpec): ReadonlySet<string> => new Set(keysOf(tool)));

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
      const renamed = renameSchemaKeys(propertiesOf(tool), knownKeys(tool), names);
      return renamed as Record<string, unknown>;
    });
  });
}

const propertiesBySignature = new WeakMap<ToolSpec, Map<string, Record<string, unknown>>>();
const propertiesByNames = new WeakMap<ToolSpec, Map<string, Record<string, unknown>>>();

/** What a sample's key renaming depends on. */
function signatureOf(
  inits: readonly ToolCall[],
  used: UsedKeys,
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
function publishedTools(tools: readonly ToolSpec[], inits: readonly ToolCall[], used: UsedKeys): PublishedTool[] {
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
  const used = usedKeys(item.initialization, sample.negative ? [] : item.goldCalls);
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
  const [first] = item.initialization;
  if (!first)
    throw new Error(`${sample.key}: a ${item.formulation.toUpperCase()} sample without initialize_active_data`);
  const calls = sample.negative ? [] : item.goldCalls;
  const translated = sample.negative ? undefined : (translationOf(sample) as PublishedSequence);
  const output = translated?.calls ?? [];
  const used = usedKeys(item.initialization, calls);
  const tools = publishedTools(sample.tools, item.initialization, used);
  return {
    query: item.sql,
    input: item.question,
    dataset_name: item.db,
    sample_id: sampleIdOf(item.id),
    // A negative has no answer its tools can give: its expected reply is the refusal.
    gold_answer: sample.negative ? null : squeezeAnswer(answerRows(sample), floatColumns(sample)),
    initialization_step: publishedInitialization(first, item.db),
    // A nested SELECT's own starting tables come first in `output`, as the published runtime runs any init call.
    output,
    tools: item.formulation === 'sel' ? publishedSelTools(tools, item.bindings, first, output) : tools,
    evidence: item.evidence,
    difficulty: item.difficulty,
    negative: sample.negative,
    ...(sample.negative ? { expected_reply: REFUSAL } : {}),
  };
}

/** The gold calls in the published runtime's vocabulary (export/published/calls.ts), once per sample. */
const translations = new WeakMap<ExportSample, PublishedTranslation>();
function translationOf(sample: ExportSample): PublishedTranslation {
  let translated = translations.get(sample);
  if (!translated) {
    const { databases } = sample.source;
    // A nested SELECT's further init call keeps its path (the runtime rewrites only the first's): the database's own file.
    const dialect = liveApiBenchDialect(
      (db) => databaseFile(databases, db) ?? `${db}/${db}.sqlite`,
      sample.pandas?.columns,
    );
    // Its outputs pass by label, so no handle needs a table's first column.
    translated = publishedSequence(sample.item, sample.outputs, dialect, () => '');
    translations.set(sample, translated);
  }
  return translated;
}

/** Where the published runtime departs from SQLite in what a sample's calls use (none for REST and negatives). */
export function liveApiBenchDepartures(sample: ExportSample): string[] {
  if (sample.item.formulation === 'rest' || sample.negative) return [];
  const translated = translationOf(sample);
  return 'departures' in translated ? [...translated.departures, ...answerDepartures(sample)] : [];
}

/**
 * What an answer meets of the runtime's CSV round trip (every call's table is written to a CSV
 * and read back by pandas: text of digits comes back as numbers, a numeric column with a NULL
 * or a fraction anywhere as floats) and of its comparison (several columns are compared in
 * order with np.array_equal, where NaN equals nothing). SQLite's values are kept; whole
 * numbers are written as floats where the runtime's reading of their column is known
 * (floatColumns), and the rows of several columns in the runtime's order (answerRows).
 */
function answerDepartures(sample: ExportSample): string[] {
  const { item } = sample;
  const rows = item.gold.rows;
  const values = rows.flat();
  const departures: string[] = [];
  if (values.some((v) => typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())))
    departures.push('digit text: the runtime reads it back from CSV as a number');
  if (values.some((v) => typeof v === 'string' && PANDAS_MISSING.has(v)))
    departures.push("text pandas reads as missing ('N/A', '', 'null', …): the runtime reads it back from CSV as NaN");
  const types = answerColumnTypes(sample);
  if (rows.some((row) => row.some((v, c) => !types[c]?.known && typeof v === 'number' && Number.isInteger(v))))
    departures.push('integers: the runtime reads a column that holds a NULL anywhere back from CSV as floats');
  const width = rows[0]?.length ?? 0;
  if (width > 1 && values.includes(null))
    departures.push('NULL beside other columns: the runtime compares NaN, which equals nothing');
  if (width > 1 && rows.length > 1 && !/\border\s+by\b/i.test(item.sql)) {
    const joinOrder = sample.pandas?.joinOrderRows;
    if (!joinOrder || !sameRows(joinOrder, rows))
      departures.push('several columns, no ORDER BY: the runtime compares rows in its order, which is not SQL');
    else if (startingTables(item) > 1)
      departures.push(
        sample.pandas?.pandas === '1.5'
          ? "several columns of a join: pandas 2.2 and later keep the left table's order, not the merge's by key"
          : "several columns of a join: pandas before 2.2 orders a merge's rows by key, not as the left table",
      );
  }
  return departures;
}

/** How many tables the sample's first starting table joins. */
const startingTables = (item: ExportSample['item']): number =>
  ((item.initialization[0]?.arguments.tables ?? []) as unknown[]).length;

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
 * cycle, a join without an equality), or calls the published runtime has no tools for
 * (export/published/calls.ts says which). REST samples always fit.
 */
export function liveApiBenchUnsupported(sample: ExportSample): string | undefined {
  if (sample.item.formulation === 'chain') return 'Live API-Bench has no multi-hop samples (VAKRA capability 3 has)';
  if (sample.item.formulation === 'rest') return undefined;
  for (const init of sample.item.initialization) {
    const problem = joinProblem(publishedInitialization(init, sample.item.db).arguments);
    if (problem) return `${init.label}: ${problem}`;
  }
  if (sample.negative) return undefined;
  const translated = translationOf(sample);
  return 'problem' in translated ? translated.problem : undefined;
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

export type SequenceExample = z.infer<typeof SequenceExampleSchema>;
type RestExample = z.infer<typeof RestExampleSchema>;
export type LiveApiBenchExample = z.infer<typeof LiveApiBenchExampleSchema>;
