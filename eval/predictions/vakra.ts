import type { RecordCalls } from './formats.js';

/**
 * IBM VAKRA's runner output read as nl2api calls (facts from IBM/vakra: benchmark/
 * runner_helpers.py writes the record; environment/m3/python_tools/mcp/mcp_server.py names
 * the handles). A record is `{uuid, domain, status, error, duration_s, output: [{turn_id,
 * query, answer, sequence: {tool_call: [{name, arguments}]}}]}`: one turn, the calls in the
 * order the agent made them, failed ones included, with no ids and no labels; the runner's own
 * `get_data` (which loads the item's starting table) is not recorded. The item is the record's
 * `uuid`; VAKRA's text answer is not scored (an nl2api answer is the outputs no later call uses).
 *
 * VAKRA's servers keep tables under handles (`filtered_superhero_1`) that a later call passes
 * as `data_label`. A handle is `<prefix>_<suffix>_<n>`: the prefix says which kind of tool
 * made it, `n` counts the tables that prefix has made (the suffix, from the table's first
 * column, adds nothing), so a handle is resolved without running anything: `retrieved_*_1`
 * is the starting table, the n-th table-making call of a prefix made `<prefix>_*_<n>`.
 * One assumption: every recorded call succeeded in the agent's run (a failed call made no
 * handle there; the record does not say which failed).
 *
 * Tools map onto nl2api's of the same family: arguments `data_label` / `data_label_1` →
 * `data_source`, `data_label_2` → `other_data_source`, `aggregation_operation` →
 * `aggregation_type`; SEL's `compute_data_<agg>` → `aggregate_data_<agg>`, getters
 * `get_<key>s` → `get_<key>`, `transform_data_to_<op>` → `transform_data_<op>`;
 * `concatenate_data` → `combine_data` (union all); `Calculator` → `calculate`; a comparison
 * with None → a null test. Keys pass as written here; once the record's item is known they are
 * put in nl2api's names (vakra-keys.ts). `select_unique_values` over a
 * literal list and `truncate` have no nl2api form: they are kept as written, and refused when
 * replayed, as any unknown tool is. REST calls (capability 2) are an operationId and its
 * query parameters, nl2api's own form.
 */

export interface VakraCall {
  name: string;
  arguments: Record<string, unknown>;
}

export function vakraRecordCalls(record: unknown): RecordCalls {
  if (record === null || typeof record !== 'object') return { error: 'not an object' };
  const r = record as { uuid?: unknown; output?: unknown };
  if (typeof r.uuid !== 'string') return { error: 'no "uuid"' };
  const turns = r.output;
  if (!Array.isArray(turns)) return { error: `"${r.uuid}": no "output" list of turns` };
  // An errored run (a timeout) records no turn, or a turn with no calls: the agent made none that count.
  const last = turns[turns.length - 1] as { sequence?: { tool_call?: unknown } } | undefined;
  const written = last === undefined ? [] : last.sequence?.tool_call;
  if (!Array.isArray(written)) return { error: `"${r.uuid}": its turn has no "sequence.tool_call" list` };
  if (!written.every(isVakraCall)) return { error: `"${r.uuid}": a tool call is not {name, arguments: {...}}` };
  return { id: r.uuid, calls: nl2apiCalls(written) };
}

function isVakraCall(value: unknown): value is VakraCall {
  const call = value as Partial<VakraCall> | null;
  return (
    typeof call?.name === 'string' &&
    call.arguments !== null &&
    typeof call.arguments === 'object' &&
    !Array.isArray(call.arguments)
  );
}

const STARTING_TABLE = 'starting_table_var';

/** A record's calls in nl2api's tools, labelled `call_<i>`, handles turned into references. */
function nl2apiCalls(
  calls: readonly VakraCall[],
): { name: string; arguments: Record<string, unknown>; label: string }[] {
  const sel = calls.some((c) => SEL_ONLY.test(c.name));
  // The runner's get_data made the first `retrieved` table.
  const counters = new Map<string, number>([['retrieved', 1]]);
  const handles = new Map<string, string>([['retrieved#1', STARTING_TABLE]]);
  const mapped: { name: string; arguments: Record<string, unknown>; label: string }[] = [];
  calls.forEach((call, i) => {
    const label = `call_${i}`;
    if (call.name !== 'get_data') mapped.push({ ...mapCall(call, sel, (value) => reference(value, handles)), label });
    const prefix = vakraHandlePrefix(call.name);
    if (prefix === undefined) return;
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    handles.set(`${prefix}#${n}`, call.name === 'get_data' ? STARTING_TABLE : label);
  });
  return mapped;
}

/** Tools only VAKRA's selection (SEL) universe has. */
const SEL_ONLY = /^(select_data_|compute_data_|sort_data_(ascending|descending)$|transform_data_to_|get_(?!data$))/;

/**
 * The handle prefix of a tool that returns a table (mcp_server.py: its own tools, `result`
 * for any other), or undefined: a scalar or a list gets no handle. nl2api's names of the same
 * tools (`aggregate_data_<agg>`, `get_<key>`, `calculate`) get the same answer.
 */
export function vakraHandlePrefix(name: string): string | undefined {
  if (NO_TABLE.test(name)) return undefined;
  if (name.startsWith('select_data_') || name === 'filter_data') return 'filtered';
  if (name.startsWith('sort_data')) return 'sorted';
  if (name === 'get_data' || name === 'retrieve_data') return 'retrieved';
  if (name.startsWith('transform_data')) return 'transformed';
  if (name === 'concatenate_data') return 'concatenated';
  if (name === 'group_data_by') return 'grouped';
  return 'result';
}

/** VAKRA's tools that answer with a scalar or a list: aggregates, the calculator, unique values, getters. */
const NO_TABLE = /^(aggregate_data|compute_data_|Calculator$|calculate|select_unique_values$|truncate$|get_(?!data$))/;

/**
 * One VAKRA call as nl2api's (module comment); `table` turns a `data_label*` argument (a
 * handle) into what nl2api passes as `data_source` (a `$LABEL$` reference). Shared with
 * `nl2api mcp --protocol vakra`, which runs VAKRA's calls on nl2api's runtime.
 */
export function mapCall(call: VakraCall, sel: boolean, table: (handle: unknown) => unknown): VakraCall {
  const args: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(call.arguments)) {
    const renamed = ARGUMENTS[name] ?? name;
    args[renamed] = renamed.endsWith('data_source') ? table(value) : value;
  }
  // VAKRA's defaults, which nl2api asks for: "no limit", a descending sort, a count of rows.
  if (args.limit === -1) delete args.limit;
  const name = call.name;
  if (name === 'sort_data' && !('ascending' in args)) args.ascending = false;
  if ((name === 'aggregate_data' || name.startsWith('compute_data_')) && !('key_name' in args)) args.key_name = '*';
  let match: RegExpExecArray | null;
  // VAKRA's comparison with None is a null test (as nl2api's export writes one).
  if (args.value === null && name === 'filter_data' && NULL_TESTS[String(args.condition)])
    return { name, arguments: { ...without(args, 'value'), condition: NULL_TESTS[String(args.condition)] } };
  if (args.value === null && (match = /^select_data_(\w+)$/.exec(name)) && NULL_TESTS[match[1]])
    return { name: `select_data_${NULL_TESTS[match[1]]}`, arguments: without(args, 'value') };
  if ((match = /^compute_data_(\w+)$/.exec(name)))
    return { name: `aggregate_data_${match[1]}`, arguments: without(args, 'aggregation_type') };
  if (name.startsWith('select_data_')) return { name, arguments: without(args, 'condition') };
  if (/^sort_data_(ascending|descending)$/.test(name)) return { name, arguments: without(args, 'ascending') };
  if ((match = /^transform_data_to_(\w+)$/.exec(name))) {
    const op = TRANSFORMS[match[1]] ?? match[1];
    const { data_source, key_name, ...operationArgs } = args;
    const named = op === 'datetime' ? { pattern: operationArgs.datetime_pattern } : operationArgs;
    return { name: `transform_data_${op}`, arguments: { data_source, key_name, operation_args: named } };
  }
  if (name === 'concatenate_data') return { name: 'combine_data', arguments: { ...args, operation: 'union_all' } };
  if (name === 'Calculator') {
    const { input_1, input_2, operation } = args;
    const operation_args = { operand: { value: input_2 } };
    return sel
      ? { name: `calculate_${String(operation)}`, arguments: { value: input_1, operation_args } }
      : { name: 'calculate', arguments: { value: input_1, operation_type: operation, operation_args } };
  }
  if ((match = /^get_(?!data$)(\w+?)s$/.exec(name))) return { name: `get_${match[1]}`, arguments: args };
  return { name, arguments: args };
}

/** VAKRA's comparisons that, with None, are nl2api's null tests. */
const NULL_TESTS: Record<string, string> = { equal_to: 'is_null', not_equal_to: 'is_not_null' };

const ARGUMENTS: Record<string, string> = {
  data_label: 'data_source',
  data_label_1: 'data_source',
  data_label_2: 'other_data_source',
  aggregation_operation: 'aggregation_type',
};

/** VAKRA's transform operations by their SEL tool names. */
const TRANSFORMS: Record<string, string> = { substring: 'substring', absolute_value: 'abs', datetime_part: 'datetime' };

/** A handle as a reference to the call that made it; anything else as written (the runtime says what is wrong). */
function reference(value: unknown, handles: ReadonlyMap<string, string>): unknown {
  if (typeof value !== 'string') return value;
  const handle = /^([a-z]+)_.*_(\d+)$/.exec(value);
  const label = handle && handles.get(`${handle[1]}#${handle[2]}`);
  return label ? `$${label}$` : value;
}

function without(args: Record<string, unknown>, name: string): Record<string, unknown> {
  const { [name]: _dropped, ...rest } = args;
  return rest;
}
