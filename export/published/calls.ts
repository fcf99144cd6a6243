import type { SelBinding, ToolCall } from '../../core/model.js';
import {
  joinProblem,
  makeSafe,
  publishedInitialization,
  publishedKeyName,
  NULL_TESTS,
  PUBLISHED_CONDITIONS,
  REFERENCE,
  callContexts,
  sortedAliases,
  slotView,
  type KeyContext,
  type PublishedInitArguments,
} from '../../eval/predictions/published-names.js';
import type { Dialect } from './dialects.js';

/**
 * A SLOT or SEL sample's gold calls as a published runtime runs them: IBM VAKRA's capability-1
 * server, or the Live API-Bench runtime of IBM/m3-train-eval (`invocable_api_hub`). Both descend
 * from one set of pandas tools (filter_data, sort_data, retrieve_data, aggregate_data,
 * transform_data, concatenate_data; SEL's select_data_<condition>, sort_data_<direction>,
 * compute_data_<aggregate> and getters `get_<key>s`), so one translation serves both; where
 * they differ (how a call names another's output, argument names, which tools exist) the
 * dialect says (dialects.ts). Common to both:
 *
 * - `initialize_active_data` first, in the published shape (live-api-bench.ts).
 * - Keys are the published runtime's (`<table>_<safe column>`, bare for one unaliased table).
 *   Its transforms rewrite the column in place, so the key nl2api gives a transform's result
 *   is the transformed column's own name there, and reading the original after it is refused.
 * - nl2api's null tests are `equal_to` / `not_equal_to` with `value: null`.
 * - nl2api's distinct values of a key are `retrieve_data(distinct: true)` (SLOT).
 *
 * What the runtime cannot say is a `problem`: the sample is left out of that format, with the
 * reason. Where it departs from SQLite the answer stays SQLite's and the construct is listed.
 */

export interface PublishedCall {
  name: string;
  arguments: Record<string, unknown>;
  label: string;
}

export interface PublishedSequence {
  /** The starting table's `initialize_active_data` (as published). */
  init: PublishedCall;
  /** The gold calls (for a nested SELECT, its further starting tables first, where the dialect runs them). */
  calls: PublishedCall[];
  /** What the runtime answers the init and each call, as far as the export knows it: a table's handle (VAKRA) or null, a scalar or list whole. */
  responses: unknown[];
  /** Where the runtime departs from SQLite in what the calls use: the answer may differ there (SQLite's is kept). */
  departures: string[];
}

export type PublishedTranslation = PublishedSequence | { problem: string };

/** The first column of a table as SQLite lists it (PRAGMA table_info), for the handle of an unaliased table. */
export type FirstColumn = (table: string) => string | undefined;

export interface TranslatedItem {
  db: string;
  formulation: string;
  initialization: readonly ToolCall[];
  goldCalls: readonly ToolCall[];
  bindings?: Record<string, SelBinding>;
}

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

class Untranslatable extends Error {}
const refuse = (why: string): never => {
  throw new Untranslatable(why);
};

/** What a label stands for once translated: a table, a list, or a value. */
export type Made =
  | { kind: 'table'; label: string; handle?: string; firstKey: string }
  | { kind: 'list'; label: string; value: unknown }
  | { kind: 'value'; label: string; value: unknown };

export function publishedSequence(
  item: TranslatedItem,
  outputs: readonly unknown[],
  dialect: Dialect,
  firstColumn: FirstColumn,
): PublishedTranslation {
  try {
    return translate(item, outputs, dialect, firstColumn);
  } catch (error) {
    if (error instanceof Untranslatable) return { problem: error.message };
    throw error;
  }
}

function translate(
  item: TranslatedItem,
  outputs: readonly unknown[],
  dialect: Dialect,
  firstColumn: FirstColumn,
): PublishedSequence {
  const [first, ...nested] = item.initialization;
  if (!first) return refuse('no initialize_active_data');
  if (nested.length > 0 && !dialect.nestedStartingTables)
    refuse(`a nested SELECT starts from a second table; ${dialect.cannotNest}`);
  const scope: Scope = {
    sel: item.formulation === 'sel',
    dialect,
    names: new KeyNames(),
    made: new Map(),
    departures: new Set(),
    handles: new HandleCounter(),
    calls: [],
    responses: [],
  };
  const init = startingTable(first, item.db, dialect, scope, firstColumn);
  const start = scope.made.get(init.label) as Extract<Made, { kind: 'table' }>;
  scope.responses.push(dialect.handles ? { handle: start.handle } : null);
  for (const more of nested) {
    const call = startingTable(more, item.db, dialect, scope, firstColumn);
    scope.calls.push({ ...call, arguments: { ...call.arguments, database_path: dialect.nestedDatabasePath(item.db) } });
    scope.responses.push(null);
  }
  const contexts = callContexts(item.initialization, item.goldCalls);
  item.goldCalls.forEach((call, i) => {
    const view = slotView(call, item.bindings);
    scope.names.context = contexts[i];
    const made = translateCall(view.tool, view.arguments, call.label, outputs[i], scope);
    scope.made.set(call.label, made);
  });
  return { init, calls: scope.calls, responses: scope.responses, departures: [...scope.departures].sort() };
}

interface Scope {
  sel: boolean;
  dialect: Dialect;
  names: KeyNames;
  made: Map<string, Made>;
  departures: Set<string>;
  handles: HandleCounter;
  calls: PublishedCall[];
  responses: unknown[];
}

/** A starting table's init call, in the order its runtime holds its arguments, and the table it makes. */
function startingTable(
  init: ToolCall,
  db: string,
  dialect: Dialect,
  scope: Scope,
  firstColumn: FirstColumn,
): PublishedCall {
  const published = publishedInitialization(init, db);
  const problem = joinProblem(published.arguments);
  if (problem) refuse(problem);
  const args = dialect.sortsAliases ? sortedAliases(published.arguments) : published.arguments;
  if (!args) return refuse('a joined table is not reached from the first alias');
  if (args.condition_sequence.some(([, , kind]) => kind !== 'INNER') && dialect.innerJoinsOnly)
    scope.departures.add(`LEFT JOIN: ${dialect.name} joins every table INNER`);
  const firstKey = startingFirstKey(args, firstColumn);
  scope.made.set(init.label, {
    kind: 'table',
    label: init.label,
    firstKey,
    handle: scope.handles.next('retrieved', firstKey),
  });
  return { name: published.name, arguments: args, label: init.label };
}

/** Adds the call (or calls) `tool` is in the runtime's vocabulary; returns what its label stands for. */
function translateCall(
  tool: string,
  args: Record<string, unknown>,
  label: string,
  output: unknown,
  scope: Scope,
): Made {
  switch (tool) {
    case 'filter_data':
      return filterCall(args, label, scope);
    case 'sort_data':
      return sortCall(args, label, scope);
    case 'retrieve_data':
      return retrieveCall(args, label, output, scope);
    case 'select_unique_values':
      if (Array.isArray(args.key_name)) refuse('distinct values of several keys have no published form');
      return retrieveCall(
        { data_source: args.data_source, key_name: args.key_name, distinct: true },
        label,
        output,
        scope,
      );
    case 'aggregate_data':
      return aggregateCall(args, label, output, scope);
    case 'transform_data':
      return transformCall(args, label, scope);
    case 'calculate':
      return calculatorCall(args, label, output, scope);
    case 'combine_data':
      return concatenateCall(args, label, scope);
    default:
      return refuse(`${scope.dialect.name} has no ${tool}`);
  }
}

function filterCall(args: Record<string, unknown>, label: string, scope: Scope): Made {
  const source = tableOf(args.data_source, scope);
  const written = String(args.condition);
  const condition = NULL_TESTS[written] ?? written;
  if (!PUBLISHED_CONDITIONS.has(condition)) refuse(`${scope.dialect.name}'s filter has no condition ${written}`);
  const given = condition === written ? valueOf(args.value, scope) : null;
  if (Array.isArray(given) || (given !== null && typeof given === 'object'))
    refuse(`${scope.dialect.name}'s filter compares with one value, not a list`);
  const key = scope.names.of(args.key_name);
  const filter = scope.dialect.filter(String(args.key_name), condition, given);
  for (const departure of filter.departures) scope.departures.add(departure);
  const { value } = filter;
  const data = { [scope.dialect.names.data]: tableArgument(source, scope) };
  const call = scope.sel
    ? { name: `select_data_${filter.condition}`, arguments: { ...data, key_name: key, value } }
    : { name: 'filter_data', arguments: { ...data, key_name: key, value, condition: filter.condition } };
  return addTable(call, label, source.firstKey, scope);
}

function sortCall(args: Record<string, unknown>, label: string, scope: Scope): Made {
  const source = tableOf(args.data_source, scope);
  if (positive(args.limit) || positive(args.offset))
    refuse(`${scope.dialect.name}'s sort keeps every row (no limit or offset)`);
  scope.departures.add(`sort: ${scope.dialect.name} puts NULLs last in both directions, SQLite first when ascending`);
  const key = scope.names.of(args.key_name);
  const ascending = args.ascending === true;
  const data = { [scope.dialect.names.data]: tableArgument(source, scope) };
  const call = scope.sel
    ? { name: ascending ? 'sort_data_ascending' : 'sort_data_descending', arguments: { ...data, key_name: key } }
    : { name: 'sort_data', arguments: { ...data, key_name: key, ascending } };
  return addTable(call, label, source.firstKey, scope);
}

function retrieveCall(args: Record<string, unknown>, label: string, output: unknown, scope: Scope): Made {
  const source = tableOf(args.data_source, scope);
  if (positive(args.offset)) refuse(`${scope.dialect.name}'s retrieve_data has no offset`);
  const keys = (Array.isArray(args.key_name) ? args.key_name : [args.key_name]).map((k) => scope.names.of(k));
  const distinct = args.distinct === true;
  const limit = positive(args.limit) ? (args.limit as number) : undefined;
  const data = { [scope.dialect.names.data]: tableArgument(source, scope) };
  if (scope.sel) return getterCalls(keys, data, { distinct, limit }, label, output, scope);
  if (distinct && keys.length > 1) refuse('the published retrieve_data ignores distinct for several keys');
  const call = {
    name: 'retrieve_data',
    arguments: {
      ...data,
      key_name: keys.length === 1 ? keys[0] : keys,
      ...(distinct ? { distinct } : {}),
      ...(limit !== undefined ? { limit } : {}),
    },
  };
  return addTable(call, label, keys[0], scope);
}

/**
 * SEL's column: a getter `get_<key>s` (the whole column, a list); a distinct or limited one is
 * then select_unique_values and truncate over it, where the dialect lets them read the list.
 */
function getterCalls(
  keys: string[],
  data: Record<string, unknown>,
  { distinct, limit }: { distinct: boolean; limit: number | undefined },
  label: string,
  output: unknown,
  scope: Scope,
): Made {
  if (keys.length !== 1) refuse('a getter returns one column');
  const steps = [
    ...(distinct ? [{ name: 'select_unique_values', argument: 'unique_array', extra: {} }] : []),
    ...(limit !== undefined ? [{ name: 'truncate', argument: 'truncate_array', extra: { n: limit } }] : []),
  ];
  if (steps.length > 0 && !scope.dialect.listsByReference)
    refuse(
      `${scope.dialect.name}'s getters return the whole column (its ${steps[0].name} takes a list written in, not a handle)`,
    );
  const labels = [...steps.map((_, i) => `${label}_${i === 0 ? 'COLUMN' : `STEP_${i}`}`), label];
  scope.calls.push({ name: `get_${keys[0]}s`, arguments: data, label: labels[0] });
  scope.responses.push(steps.length === 0 ? (output ?? null) : null);
  steps.forEach((step, i) => {
    scope.calls.push({
      name: step.name,
      arguments: { [step.argument]: `$${labels[i]}$`, ...step.extra },
      label: labels[i + 1],
    });
    scope.responses.push(i === steps.length - 1 ? (output ?? null) : null);
  });
  return { kind: 'list', label, value: output };
}

function aggregateCall(args: Record<string, unknown>, label: string, output: unknown, scope: Scope): Made {
  const source = tableOf(args.data_source, scope);
  const operation = String(args.aggregation_type);
  if (!AGGREGATES.has(operation)) refuse(`the published ${operation} is not nl2api's (an index, not a row)`);
  if (scope.sel && positive(args.limit)) refuse('the published compute_data_* aggregate every row (limit is -1)');
  const counted = args.key_name === '*' || args.key_name === undefined;
  if (counted && operation !== 'count') refuse(`${operation} of every column has no published form`);
  if (operation === 'count' && !counted)
    scope.departures.add(`count of a key: ${scope.dialect.name} counts NULLs, SQLite does not`);
  if (operation === 'std')
    scope.departures.add(`std: ${scope.dialect.name}'s is the population deviation, SQLite's the sample's`);
  const value = scalarOf(output);
  if (value === null)
    scope.departures.add(`aggregate of no rows: ${scope.dialect.name} fails or answers 0 where SQLite answers NULL`);
  if (typeof value === 'string')
    scope.departures.add(`min/max of text: ${scope.dialect.name} computes them as numbers and fails`);
  if (scope.dialect.minMaxAsIntegers && (operation === 'min' || operation === 'max') && !isWhole(value))
    scope.departures.add(`min/max of fractions: ${scope.dialect.name} truncates them to integers`);
  if (typeof value === 'number' && !Number.isInteger(value) && (operation === 'sum' || operation === 'mean'))
    scope.departures.add(
      `${operation} of fractions: ${scope.dialect.name} adds in another order than SQLite (the last digits differ)`,
    );
  const key = counted ? scope.dialect.countRows : { key_name: scope.names.of(args.key_name) };
  const distinct = args.distinct === true;
  const data = { [scope.dialect.names.data]: tableArgument(source, scope) };
  const call = scope.sel
    ? { name: `compute_data_${operation}`, arguments: { ...data, ...key, distinct } }
    : {
        name: 'aggregate_data',
        arguments: {
          ...data,
          [scope.dialect.names.aggregation]: operation,
          ...key,
          distinct,
          ...(positive(args.limit) ? { limit: args.limit } : {}),
        },
      };
  scope.calls.push({ ...call, label });
  scope.responses.push(output ?? null);
  return { kind: 'value', label, value };
}

function transformCall(args: Record<string, unknown>, label: string, scope: Scope): Made {
  const source = tableOf(args.data_source, scope);
  const operation = String(args.operation_type);
  const operationArgs = (args.operation_args ?? {}) as Record<string, unknown>;
  if (!(scope.sel ? scope.dialect.selTransforms : scope.dialect.slotTransforms).has(operation))
    refuse(
      `${scope.dialect.name}'s ${scope.sel ? 'selection tools have' : 'transform_data has'} no operation ${operation}`,
    );
  const key = scope.names.of(args.key_name);
  let published: Record<string, unknown> = {};
  if (operation === 'substring') {
    const start = operationArgs.start_index ?? 0;
    const end = operationArgs.end_index;
    if (!Number.isInteger(start) || (end !== undefined && !Number.isInteger(end)))
      refuse('the published substring takes constant bounds');
    published = { start_index: start, end_index: end ?? (scope.sel ? TO_THE_END : null) };
  } else if (operation === 'datetime') {
    const pattern = String(operationArgs.pattern);
    if (!DATE_PARTS.has(pattern) || operationArgs.modifiers !== undefined)
      refuse(`${scope.dialect.name}'s datetime gives a year, month or day only (not ${pattern})`);
    scope.departures.add(`datetime: ${scope.dialect.name} gives a number (9), SQLite text (09)`);
    published = { pattern };
  }
  scope.names.transformed(args.key_name, derivedKey(args), key);
  const data = { [scope.dialect.names.data]: tableArgument(source, scope) };
  const call = scope.sel
    ? {
        name: SEL_TRANSFORMS[operation],
        arguments: {
          ...data,
          key_name: key,
          ...(operation === 'datetime' ? { datetime_pattern: published.pattern } : published),
        },
      }
    : {
        name: 'transform_data',
        arguments: { ...data, key_name: key, operation_type: operation, operation_args: published },
      };
  return addTable(call, label, source.firstKey, scope);
}

/** The key nl2api gives a transform's new column (docs/TOOLS.md: `new_key_name`, else `<key>_<operation>`). */
function derivedKey(args: Record<string, unknown>): string {
  const named = (args.operation_args as { new_key_name?: unknown } | undefined)?.new_key_name;
  return typeof named === 'string' ? named : `${String(args.key_name)}_${String(args.operation_type)}`;
}

function calculatorCall(args: Record<string, unknown>, label: string, output: unknown, scope: Scope): Made {
  if (!scope.dialect.calculator) refuse(`${scope.dialect.name} has no calculator`);
  const operation = String(args.operation_type);
  if (!ARITHMETIC.has(operation)) refuse(`the Calculator has no ${operation}`);
  const operand = (args.operation_args as { operand?: { value?: unknown } } | undefined)?.operand;
  if (!operand || !('value' in operand)) refuse('the Calculator takes two values');
  const input1 = valueOf(args.value, scope);
  const input2 = valueOf(operand!.value, scope);
  if (typeof input1 !== 'number' || typeof input2 !== 'number') refuse('the Calculator takes numbers');
  if (operation === 'divide')
    scope.departures.add(
      `divide: ${scope.dialect.name} divides as floats and gives NaN for a divisor ≤ 0, SQLite divides integers whole`,
    );
  scope.calls.push({ name: 'Calculator', arguments: { input_1: input1, input_2: input2, operation }, label });
  scope.responses.push(output ?? null);
  return { kind: 'value', label, value: scalarOf(output) };
}

function concatenateCall(args: Record<string, unknown>, label: string, scope: Scope): Made {
  if (args.operation !== 'union_all')
    refuse(`the published concatenate_data is UNION ALL, not ${String(args.operation)}`);
  if (args.key_name !== undefined || args.other_key_name !== undefined)
    refuse('the published concatenate_data stacks whole tables, not columns picked from them');
  const first = tableOf(args.data_source, scope);
  const second = tableOf(args.other_data_source, scope);
  const { data1, data2 } = scope.dialect.names;
  const call = {
    name: 'concatenate_data',
    arguments: { [data1]: tableArgument(first, scope), [data2]: tableArgument(second, scope) },
  };
  return addTable(call, label, first.firstKey, scope);
}

// ---------------------------------------------------------------------------------------
// Outputs and arguments

/** Adds a call that makes a table (VAKRA keeps it under a handle named after its first key). */
function addTable(
  call: { name: string; arguments: Record<string, unknown> },
  label: string,
  firstKey: string,
  scope: Scope,
): Made {
  const handle = scope.dialect.handles
    ? scope.handles.next(scope.dialect.handlePrefix(call.name), firstKey)
    : undefined;
  scope.calls.push({ ...call, label });
  scope.responses.push(handle ? { handle } : null);
  return { kind: 'table', label, handle, firstKey };
}

function tableOf(value: unknown, scope: Scope): Extract<Made, { kind: 'table' }> {
  const reference = typeof value === 'string' ? REFERENCE.exec(value) : null;
  if (!reference || reference[2] !== undefined)
    return refuse('a call reads a column of another call; the published tools pass tables');
  const made = scope.made.get(reference[1]);
  if (made?.kind !== 'table') return refuse('a call reads a list or a value as its table');
  return made;
}

const tableArgument = (table: Extract<Made, { kind: 'table' }>, scope: Scope): string =>
  scope.dialect.handles ? table.handle! : `$${table.label}$`;

/** A literal, or another call's value: by reference where the runtime resolves one, else written in. */
function valueOf(value: unknown, scope: Scope): unknown {
  if (typeof value !== 'string') return value;
  const reference = REFERENCE.exec(value);
  if (!reference) return value;
  if (reference[2] !== undefined) refuse('a value is a column of another call');
  const made = scope.made.get(reference[1]);
  if (made?.kind !== 'value') return refuse('a value is a table or a list of another call');
  if (!scope.dialect.handles) return `$${made.label}$`;
  if (made.value === undefined) return refuse('a value another call computes is not known to the export');
  return made.value;
}

/** A call's output as one value (a scalar, or a list of one value). */
function scalarOf(output: unknown): unknown {
  if (Array.isArray(output)) return output.length === 1 && !Array.isArray(output[0]) ? output[0] : output;
  return output;
}

const positive = (value: unknown) => typeof value === 'number' && value > 0;
const isWhole = (value: unknown) => typeof value !== 'number' || Number.isInteger(value);

/** The first key of a starting table: its first table's prefix, or the first column when the query names one unaliased table. */
function startingFirstKey(args: PublishedInitArguments, firstColumn: FirstColumn): string {
  const [alias, table] = Object.entries(args.alias_to_table_dict)[0];
  if (alias !== '') return `${table.modified_table_name}_`;
  const column = firstColumn(table.original_table_name);
  if (column === undefined) return refuse(`the database has no table ${table.original_table_name}`);
  return makeSafe(column);
}

/**
 * nl2api keys as the runtime names them: in the context of the starting table a call's input
 * descends from (`context`, set per call from callContexts: a nested SELECT has several),
 * following the runtime's in-place transforms.
 */
class KeyNames {
  context: KeyContext = { prefixes: [], tables: [] };
  private readonly renamed = new Map<string, string>();
  private readonly overwritten = new Set<string>();

  of(key: unknown): string {
    if (typeof key !== 'string') return refuse('a key is not a string');
    if (this.overwritten.has(key)) refuse(`${key} is read after the runtime's transform rewrote it in place`);
    return this.renamed.get(key) ?? publishedKeyName(key, this.context);
  }

  transformed(original: unknown, derived: string, publishedKey: string): void {
    this.overwritten.add(String(original));
    this.renamed.set(derived, publishedKey);
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
