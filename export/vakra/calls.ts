import type { SelBinding, ToolCall } from '../../core/model.js';
import { vakraHandlePrefix } from '../../eval/predictions/vakra.js';
import {
  joinProblem,
  keyContextOf,
  makeSafe,
  publishedInitialization,
  publishedKeyName,
  slotView,
  type KeyContext,
  type PublishedInitArguments,
} from '../live-api-bench.js';

/**
 * A SLOT or SEL sample's gold calls in IBM VAKRA's vocabulary, as its capability-1 MCP server
 * runs them (IBM/vakra environment/m3/python_tools: mcp/mcp_server.py names the handles,
 * tools/slot_filling_tools.py and selection_tools.py are the tools, tool_registry.py and
 * pydantic_models.py their arguments):
 *
 * - `initialize_active_data` first, in the published shape (live-api-bench.ts); VAKRA's
 *   evaluator replaces it with `get_data(<uuid>)`, whose table is `retrieved_<s>_1`.
 * - Tables stay on the server: a call that reads one passes its handle as `data_label`
 *   (`data_label_1`/`_2` for `concatenate_data`). A handle is `<prefix>_<suffix>_<n>`: the prefix
 *   by the tool that made it, the suffix the text before the first `_` of the table's first
 *   column (`data` when it has none), n counting the tables of that prefix. VAKRA never resolves
 *   `$LABEL$`, so a scalar a later call uses is written in as its value.
 * - Keys are the published runtime's (`<table>_<safe column>`, bare for one unaliased table);
 *   VAKRA's transforms rewrite the column in place, so a transformed key keeps its name.
 * - SLOT: filter_data, sort_data, retrieve_data (a table), aggregate_data, transform_data,
 *   Calculator, concatenate_data. SEL: select_data_<condition>, sort_data_<direction>,
 *   compute_data_<aggregate>, transform_data_to_<operation>, Calculator, and getters
 *   `get_<key>s` (a list, no handle).
 *
 * What VAKRA's tools cannot say (a second starting table, grouping, set operations other than
 * UNION ALL, nl2api's extra conditions and operations, a getter with a limit, argmin/argmax,
 * a column reference) is a `problem`: the sample is left out of the format, with the reason.
 */

export interface VakraCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface VakraSequence {
  /** `initialize_active_data` (as published), then the gold calls. */
  calls: VakraCall[];
  /** What VAKRA's server answers each call, as far as the export knows it: a table's handle, a scalar or list whole. */
  responses: unknown[];
  /** The universe type VAKRA's router serves the sample with. */
  serverType: 'slot_filling' | 'selection';
  /** Where VAKRA's runtime departs from SQLite in what the calls use: the answer may differ there (SQLite's is kept). */
  departures: string[];
}

export type VakraTranslation = VakraSequence | { problem: string };

/** The first column of a table as SQLite lists it (PRAGMA table_info), for the handle of an unaliased table. */
export type FirstColumn = (table: string) => string | undefined;

const PAPER_CONDITIONS = new Set([
  'equal_to',
  'not_equal_to',
  'greater_than',
  'less_than',
  'greater_than_equal_to',
  'less_than_equal_to',
  'contains',
  'like',
]);
/** nl2api's null tests, which VAKRA's filter says as a comparison with None. */
const NULL_TESTS: Record<string, string> = { is_null: 'equal_to', is_not_null: 'not_equal_to' };
const AGGREGATES = new Set(['min', 'max', 'sum', 'mean', 'count', 'std']);
const ARITHMETIC = new Set(['add', 'subtract', 'multiply', 'divide']);
const DATE_PARTS = new Set(['%Y', '%m', '%d']);
const SEL_TRANSFORMS: Record<string, string> = {
  substring: 'transform_data_to_substring',
  abs: 'transform_data_to_absolute_value',
  datetime: 'transform_data_to_datetime_part',
};
/** SEL's end of a substring with no end (its `end_index` is a required int; Python slices past the end). */
const TO_THE_END = 2 ** 31 - 1;

const REFERENCE = /^\$([^$.]+)(?:\.(.+))?\$$/;

class Untranslatable extends Error {}
const refuse = (why: string): never => {
  throw new Untranslatable(why);
};

/** What a label stands for once translated: a table on the server, or a value written in where it is used. */
type Produced = { kind: 'table'; handle: string; firstKey: string } | { kind: 'value'; value: unknown };

export function vakraSequence(
  item: {
    db: string;
    formulation: string;
    initialization: readonly ToolCall[];
    goldCalls: readonly ToolCall[];
    bindings?: Record<string, SelBinding>;
  },
  outputs: readonly unknown[],
  firstColumn: FirstColumn,
): VakraTranslation {
  try {
    return translate(item, outputs, firstColumn);
  } catch (error) {
    if (error instanceof Untranslatable) return { problem: error.message };
    throw error;
  }
}

function translate(
  item: Parameters<typeof vakraSequence>[0],
  outputs: readonly unknown[],
  firstColumn: FirstColumn,
): VakraSequence {
  if (item.initialization.length !== 1)
    refuse("a nested SELECT starts from a second table; VAKRA's get_data loads one starting table");
  const published = publishedInitialization(item.initialization[0], item.db);
  const joined = joinProblem(published.arguments);
  if (joined) refuse(joined);
  const init = { ...published, arguments: inVakraOrder(published.arguments) };
  const sel = item.formulation === 'sel';
  const context = keyContextOf(item.initialization[0]);
  const names = new KeyNames(context);
  const handles = new HandleCounter();
  const produced = new Map<string, Produced>();
  const departures = new Set<string>(initDepartures(init.arguments));
  const startKey = startingFirstKey(init.arguments, firstColumn);
  produced.set(init.label, { kind: 'table', handle: handles.next('retrieved', startKey), firstKey: startKey });

  const calls: VakraCall[] = [{ name: init.name, arguments: init.arguments }];
  const responses: unknown[] = [{ handle: (produced.get(init.label) as { handle: string }).handle }];
  item.goldCalls.forEach((call, i) => {
    const view = slotView(call, item.bindings);
    const step = translateCall(view.tool, view.arguments, { sel, names, produced, departures });
    calls.push(step.call);
    if (step.table) {
      const prefix = vakraHandlePrefix(step.call.name) ?? 'result';
      const handle = handles.next(prefix, step.table.firstKey);
      produced.set(call.label, { kind: 'table', handle, firstKey: step.table.firstKey });
      responses.push({ handle });
    } else {
      const value = scalarOf(outputs[i]);
      if (view.tool === 'aggregate_data') for (const departure of aggregateDepartures(value)) departures.add(departure);
      produced.set(call.label, { kind: 'value', value });
      responses.push(outputs[i] ?? null);
    }
  });
  return {
    calls,
    responses,
    serverType: sel ? 'selection' : 'slot_filling',
    departures: [...departures].sort(),
  };
}

interface Scope {
  sel: boolean;
  names: KeyNames;
  produced: Map<string, Produced>;
  departures: Set<string>;
}

interface Step {
  call: VakraCall;
  /** Set when the call returns a table (kept on the server under a handle). */
  table?: { firstKey: string };
}

function translateCall(tool: string, args: Record<string, unknown>, scope: Scope): Step {
  switch (tool) {
    case 'filter_data':
      return filterCall(args, scope);
    case 'sort_data':
      return sortCall(args, scope);
    case 'retrieve_data':
      return retrieveCall(args, scope);
    case 'select_unique_values':
      return uniqueValuesCall(args, scope);
    case 'aggregate_data':
      return aggregateCall(args, scope);
    case 'transform_data':
      return transformCall(args, scope);
    case 'calculate':
      return calculatorCall(args, scope);
    case 'combine_data':
      return concatenateCall(args, scope);
    default:
      return refuse(`VAKRA has no ${tool}`);
  }
}

function filterCall(args: Record<string, unknown>, scope: Scope): Step {
  const source = tableOf(args.data_source, scope);
  const written = String(args.condition);
  const condition = NULL_TESTS[written] ?? written;
  if (!PAPER_CONDITIONS.has(condition)) refuse(`VAKRA's filter has no condition ${written}`);
  const value = condition === written ? valueOf(args.value, scope) : null;
  if (Array.isArray(value) || (value !== null && typeof value === 'object'))
    refuse("VAKRA's filter compares with one value, not a list");
  if (condition === 'contains') scope.departures.add('contains: VAKRA matches case-insensitively, as a regex');
  if (condition === 'like') scope.departures.add('like: VAKRA matches case-sensitively, as a regex');
  if (typeof value === 'number' && !Number.isInteger(value))
    scope.departures.add('fractional value: VAKRA truncates it when the column holds integers');
  const key = scope.names.of(args.key_name);
  const call = scope.sel
    ? { name: `select_data_${condition}`, arguments: { data_label: source.handle, key_name: key, value } }
    : { name: 'filter_data', arguments: { data_label: source.handle, key_name: key, value, condition } };
  return { call, table: { firstKey: source.firstKey } };
}

function sortCall(args: Record<string, unknown>, scope: Scope): Step {
  const source = tableOf(args.data_source, scope);
  if (positive(args.limit) || positive(args.offset)) refuse("VAKRA's sort keeps every row (no limit or offset)");
  scope.departures.add('sort: VAKRA puts NULLs last in both directions, SQLite first when ascending');
  const key = scope.names.of(args.key_name);
  const ascending = args.ascending === true;
  const call = scope.sel
    ? {
        name: ascending ? 'sort_data_ascending' : 'sort_data_descending',
        arguments: { data_label: source.handle, key_name: key },
      }
    : { name: 'sort_data', arguments: { data_label: source.handle, key_name: key, ascending } };
  return { call, table: { firstKey: source.firstKey } };
}

function retrieveCall(args: Record<string, unknown>, scope: Scope): Step {
  const source = tableOf(args.data_source, scope);
  if (positive(args.offset)) refuse("VAKRA's retrieve_data has no offset");
  const keys = (Array.isArray(args.key_name) ? args.key_name : [args.key_name]).map((k) => scope.names.of(k));
  const distinct = args.distinct === true;
  const limit = positive(args.limit) ? (args.limit as number) : undefined;
  if (scope.sel) {
    if (distinct || limit !== undefined)
      refuse("VAKRA's getters return the whole column (a distinct or limited one needs a list written in)");
    if (keys.length !== 1) refuse("VAKRA's getters return one column");
    return { call: { name: `get_${keys[0]}s`, arguments: { data_label: source.handle } } };
  }
  if (distinct && keys.length > 1) refuse("VAKRA's retrieve_data ignores distinct for several keys");
  const call = {
    name: 'retrieve_data',
    arguments: {
      data_label: source.handle,
      key_name: keys.length === 1 ? keys[0] : keys,
      ...(distinct ? { distinct } : {}),
      ...(limit !== undefined ? { limit } : {}),
    },
  };
  return { call, table: { firstKey: keys[0] } };
}

/** nl2api's distinct values of a key: VAKRA's select_unique_values takes a literal list, its retrieve_data a distinct key. */
function uniqueValuesCall(args: Record<string, unknown>, scope: Scope): Step {
  if (scope.sel)
    refuse("VAKRA's selection tools have no distinct column but select_unique_values over a written-in list");
  if (Array.isArray(args.key_name)) refuse("VAKRA's retrieve_data ignores distinct for several keys");
  return retrieveCall({ data_source: args.data_source, key_name: args.key_name, distinct: true }, scope);
}

function aggregateCall(args: Record<string, unknown>, scope: Scope): Step {
  const source = tableOf(args.data_source, scope);
  const operation = String(args.aggregation_type);
  if (!AGGREGATES.has(operation)) refuse(`VAKRA's ${operation} is not nl2api's (an index, not a row)`);
  if (scope.sel && positive(args.limit)) refuse("VAKRA's compute_data_* aggregate every row (limit is -1)");
  const counted = args.key_name === '*' || args.key_name === undefined;
  if (counted && operation !== 'count') refuse(`${operation} of every column has no VAKRA form`);
  if (operation === 'count' && !counted) scope.departures.add('count of a key: VAKRA counts NULLs, SQLite does not');
  if (operation === 'std') scope.departures.add("std: VAKRA's is the population deviation, SQLite's the sample's");
  // VAKRA checks a key_name against the table's keys, so a count of rows leaves it out.
  const key = counted ? {} : { key_name: scope.names.of(args.key_name) };
  const distinct = args.distinct === true;
  const call = scope.sel
    ? { name: `compute_data_${operation}`, arguments: { data_label: source.handle, ...key, distinct } }
    : {
        name: 'aggregate_data',
        arguments: {
          data_label: source.handle,
          aggregation_operation: operation,
          ...key,
          distinct,
          ...(positive(args.limit) ? { limit: args.limit } : {}),
        },
      };
  return { call };
}

function transformCall(args: Record<string, unknown>, scope: Scope): Step {
  const source = tableOf(args.data_source, scope);
  const operation = String(args.operation_type);
  const operationArgs = (args.operation_args ?? {}) as Record<string, unknown>;
  const key = scope.names.of(args.key_name);
  let vakraArgs: Record<string, unknown>;
  if (operation === 'substring') {
    const start = operationArgs.start_index ?? 0;
    const end = operationArgs.end_index;
    if (!Number.isInteger(start) || (end !== undefined && !Number.isInteger(end)))
      refuse("VAKRA's substring takes constant bounds");
    vakraArgs = { start_index: start, end_index: end ?? (scope.sel ? TO_THE_END : null) };
  } else if (operation === 'abs') {
    vakraArgs = {};
  } else if (operation === 'datetime') {
    const pattern = String(operationArgs.pattern);
    if (!DATE_PARTS.has(pattern) || operationArgs.modifiers !== undefined)
      refuse(`VAKRA's datetime gives a year, month or day only (not ${pattern})`);
    scope.departures.add('datetime: VAKRA gives a number (9), SQLite text (09)');
    vakraArgs = { pattern };
  } else {
    return refuse(`VAKRA's transform_data has no operation ${operation}`);
  }
  // VAKRA rewrites the column in place: the key nl2api gives the result is the same column there.
  scope.names.transformed(args.key_name, derivedKey(args), key);
  const call = scope.sel
    ? {
        name: SEL_TRANSFORMS[operation],
        arguments: {
          data_label: source.handle,
          key_name: key,
          ...(operation === 'datetime' ? { datetime_pattern: vakraArgs.pattern } : vakraArgs),
        },
      }
    : {
        name: 'transform_data',
        arguments: { data_label: source.handle, key_name: key, operation_type: operation, operation_args: vakraArgs },
      };
  return { call, table: { firstKey: source.firstKey } };
}

/** The key nl2api gives a transform's new column (docs/TOOLS.md: `new_key_name`, else `<key>_<operation>`). */
function derivedKey(args: Record<string, unknown>): string {
  const named = (args.operation_args as { new_key_name?: unknown } | undefined)?.new_key_name;
  return typeof named === 'string' ? named : `${String(args.key_name)}_${String(args.operation_type)}`;
}

function calculatorCall(args: Record<string, unknown>, scope: Scope): Step {
  const operation = String(args.operation_type);
  if (!ARITHMETIC.has(operation)) refuse(`VAKRA's Calculator has no ${operation}`);
  const operand = (args.operation_args as { operand?: { value?: unknown; key_name?: unknown } } | undefined)?.operand;
  if (!operand || !('value' in operand)) refuse("VAKRA's Calculator takes two values");
  const input1 = valueOf(args.value, scope);
  const input2 = valueOf(operand!.value, scope);
  if (typeof input1 !== 'number' || typeof input2 !== 'number') refuse("VAKRA's Calculator takes numbers");
  if (operation === 'divide')
    scope.departures.add(
      'divide: VAKRA divides as floats and gives NaN for a divisor ≤ 0, SQLite divides integers whole',
    );
  return { call: { name: 'Calculator', arguments: { input_1: input1, input_2: input2, operation } } };
}

function concatenateCall(args: Record<string, unknown>, scope: Scope): Step {
  if (args.operation !== 'union_all') refuse(`VAKRA concatenates (UNION ALL) only, not ${String(args.operation)}`);
  const first = tableOf(args.data_source, scope);
  const second = tableOf(args.other_data_source, scope);
  return {
    call: { name: 'concatenate_data', arguments: { data_label_1: first.handle, data_label_2: second.handle } },
    table: { firstKey: first.firstKey },
  };
}

// ---------------------------------------------------------------------------------------
// Arguments

function tableOf(value: unknown, scope: Scope): { handle: string; firstKey: string } {
  const reference = typeof value === 'string' ? REFERENCE.exec(value) : null;
  if (!reference || reference[2] !== undefined)
    return refuse('a call reads a column of another call; VAKRA passes tables only');
  const produced = scope.produced.get(reference[1]);
  if (produced?.kind !== 'table')
    return refuse("a call reads a list or a value as its table; VAKRA's handles are tables");
  return produced;
}

/** A literal, or a reference to a value, written in (VAKRA resolves no `$LABEL$`). */
function valueOf(value: unknown, scope: Scope): unknown {
  if (typeof value !== 'string') return value;
  const reference = REFERENCE.exec(value);
  if (!reference) return value;
  if (reference[2] !== undefined) refuse('a value is a column of another call; VAKRA takes one value');
  const produced = scope.produced.get(reference[1]);
  if (produced?.kind !== 'value') return refuse('a value is a table of another call');
  if (produced.value === undefined) return refuse('a value another call computes is not known to the export');
  return produced.value;
}

/** A call's output as one value (a scalar, or a list of one value). */
function scalarOf(output: unknown): unknown {
  if (Array.isArray(output)) return output.length === 1 && !Array.isArray(output[0]) ? output[0] : output;
  return output;
}

/** What an aggregate's value shows of VAKRA's departures: no rows, or a minimum or maximum of text. */
function aggregateDepartures(value: unknown): string[] {
  if (value === null) return ['aggregate of no rows: VAKRA fails or answers 0 where SQLite answers NULL'];
  if (typeof value === 'string') return ['min/max of text: VAKRA computes them as numbers and fails'];
  return [];
}

const positive = (value: unknown) => typeof value === 'number' && value > 0;

/**
 * The init arguments in the order VAKRA's universes hold them: its mapping script writes them
 * with PyYAML's `yaml.dump`, which sorts keys, so `alias_to_table_dict` comes back sorted by
 * alias (every entry of VAKRA's own mapping is). VAKRA's initialize_active_data starts FROM the
 * first alias and joins each condition's table that is not joined yet, so the conditions are
 * put in an order that reaches each table from those joined before it.
 */
function inVakraOrder(args: PublishedInitArguments): PublishedInitArguments {
  const aliases = Object.keys(args.alias_to_table_dict).sort();
  const joined = new Set(aliases.slice(0, 1));
  const pending = [...args.condition_sequence];
  const ordered: PublishedInitArguments['condition_sequence'] = [];
  while (pending.length > 0) {
    const next = pending.findIndex(([left, right]) => joined.has(aliasOf(left)) || joined.has(aliasOf(right)));
    if (next < 0) return refuse('a joined table is not reached from the first alias');
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

const aliasOf = (qualified: string) => qualified.slice(0, qualified.indexOf('.'));

/** The departures a starting table brings: VAKRA's initialize_active_data joins INNER whatever the SQL says. */
function initDepartures(args: PublishedInitArguments): string[] {
  return args.condition_sequence.some(([, , kind]) => kind !== 'INNER')
    ? ['LEFT JOIN: VAKRA joins every table INNER']
    : [];
}

/** The first key of VAKRA's starting table: its first table's first column, prefixed unless the query names one unaliased table. */
function startingFirstKey(args: PublishedInitArguments, firstColumn: FirstColumn): string {
  const [alias, table] = Object.entries(args.alias_to_table_dict)[0];
  if (alias !== '') return `${table.modified_table_name}_`;
  const column = firstColumn(table.original_table_name);
  if (column === undefined) return refuse(`the database has no table ${table.original_table_name}`);
  return makeSafe(column);
}

/** nl2api keys as VAKRA names them, following VAKRA's in-place transforms. */
class KeyNames {
  private readonly renamed = new Map<string, string>();
  private readonly overwritten = new Set<string>();

  constructor(private readonly context: KeyContext) {}

  of(key: unknown): string {
    if (typeof key !== 'string') return refuse('a key is not a string');
    if (this.overwritten.has(key)) refuse(`${key} is read after VAKRA's transform rewrote it in place`);
    return this.renamed.get(key) ?? publishedKeyName(key, this.context);
  }

  transformed(original: unknown, derived: string, vakraKey: string): void {
    this.overwritten.add(String(original));
    this.renamed.set(derived, vakraKey);
  }
}

/** Handles as VAKRA's server counts them: per prefix, tables only. */
class HandleCounter {
  private readonly counts = new Map<string, number>();

  next(prefix: string, firstKey: string): string {
    const n = (this.counts.get(prefix) ?? 0) + 1;
    this.counts.set(prefix, n);
    const suffix = firstKey.includes('_') ? firstKey.slice(0, firstKey.indexOf('_')) : 'data';
    return `${prefix}_${suffix}_${n}`;
  }
}
