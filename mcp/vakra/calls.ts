import { mapCall, type VakraCall } from '../../eval/predictions/vakra.js';

/**
 * A VAKRA capability-1 call as the nl2api call that computes it, on nl2api's runtime (so with
 * SQLite's semantics, not VAKRA's pandas ones). Selection tools are first said as the
 * slot-filling call they bind (`select_data_<c>` is `filter_data(condition=c)`, …), which
 * eval/predictions/vakra.ts `mapCall` turns into nl2api's vocabulary (the one mapping of VAKRA's
 * names onto nl2api's, shared with the reader of VAKRA's runner output); keys are renamed from
 * VAKRA's (`<table>_<safe column>`, or bare) to nl2api's by the table the call reads.
 */

/** A table kept under a handle: the nl2api label holding it, and its keys as VAKRA names them, with nl2api's. */
export interface HeldTable {
  label: string;
  keys: readonly (readonly [vakra: string, nl2api: string])[];
}

export type Translation =
  | {
      name: string;
      arguments: Record<string, unknown>;
      /** What VAKRA answers: a table (under a handle), a list (a getter's values), a scalar. */
      answer: 'table' | 'list' | 'scalar';
      /** A transform: the VAKRA key rewritten in place (nl2api adds a column instead). */
      transformed?: string;
      /** Python's type of a scalar VAKRA answers whatever the value (a mean is a float). */
      float?: boolean;
    }
  | { refused: string };

const refused = (why: string): Translation => ({ refused: why });

/** A selection tool as the slot-filling call it binds; getters and slot-filling calls as they are. */
export function slotFillingForm(call: VakraCall): VakraCall {
  const { name, arguments: args } = call;
  let match: RegExpExecArray | null;
  if ((match = /^select_data_(\w+)$/.exec(name)))
    return { name: 'filter_data', arguments: { ...args, condition: match[1] } };
  if ((match = /^sort_data_(ascending|descending)$/.exec(name)))
    return { name: 'sort_data', arguments: { ...args, ascending: match[1] === 'ascending' } };
  if ((match = /^compute_data_(\w+)$/.exec(name)))
    return { name: 'aggregate_data', arguments: { ...args, aggregation_operation: match[1] } };
  if (name === 'transform_data_to_substring') {
    const { start_index, end_index, ...rest } = args;
    return transform(rest, 'substring', { start_index, end_index });
  }
  if (name === 'transform_data_to_absolute_value') return transform(args, 'abs', {});
  if (name === 'transform_data_to_datetime_part') {
    const { datetime_pattern, ...rest } = args;
    return transform(rest, 'datetime', { pattern: datetime_pattern });
  }
  return call;
}

function transform(
  args: Record<string, unknown>,
  operation: string,
  operationArgs: Record<string, unknown>,
): VakraCall {
  return { name: 'transform_data', arguments: { ...args, operation_type: operation, operation_args: operationArgs } };
}

/**
 * A slot-filling call (or a getter, `getterKey` its VAKRA key) in nl2api's tools: `tables`
 * holds the handles its `data_label*` arguments name (checked by the caller), keys are
 * renamed by the first one's. What nl2api's tools do not say as VAKRA means it is refused.
 */
export function nl2apiForm(call: VakraCall, tables: ReadonlyMap<string, HeldTable>, getterKey?: string): Translation {
  const source = tables.get(String(call.arguments.data_label ?? call.arguments.data_label_1));
  const key = (vakra: unknown) => source?.keys.find(([name]) => name === vakra)?.[1] ?? vakra;
  const table = (handle: unknown) => `$${tables.get(String(handle))?.label}$`;
  if (getterKey !== undefined)
    return {
      name: 'retrieve_data',
      arguments: { data_source: table(call.arguments.data_label), key_name: key(getterKey) },
      answer: 'list',
    };
  const args = { ...call.arguments };
  if (typeof args.key_name === 'string' || Array.isArray(args.key_name))
    args.key_name = Array.isArray(args.key_name) ? args.key_name.map(key) : key(args.key_name);
  switch (call.name) {
    case 'aggregate_data': {
      const operation = String(args.aggregation_operation);
      if (operation === 'argmin' || operation === 'argmax')
        return refused(`nl2api has no ${operation} as VAKRA defines it (the index of the extreme value, not a row)`);
      const mapped = mapCall({ name: call.name, arguments: args }, false, table);
      return { ...mapped, answer: 'scalar', float: operation === 'mean' || operation === 'std' };
    }
    case 'sort_data':
      if (args.ranking_array !== undefined && args.ranking_array !== null)
        return refused('nl2api sorts by a key, not by a ranking_array');
      return {
        ...mapCall({ name: call.name, arguments: without(args, 'ranking_array') }, false, table),
        answer: 'table',
      };
    case 'retrieve_data':
      return retrieve(args, table);
    case 'transform_data': {
      const operationArgs = { ...((args.operation_args ?? {}) as Record<string, unknown>) };
      // VAKRA's substring without an end slices to the end, as nl2api's does without one.
      if (operationArgs.end_index === null || operationArgs.end_index === undefined) delete operationArgs.end_index;
      const mapped = mapCall({ name: call.name, arguments: { ...args, operation_args: operationArgs } }, false, table);
      return { ...mapped, answer: 'table', transformed: String(call.arguments.key_name) };
    }
    case 'Calculator':
      if (Array.isArray(args.input_1) || Array.isArray(args.input_2))
        return refused("nl2api's calculate takes two numbers, not lists");
      return {
        ...mapCall({ name: call.name, arguments: args }, false, table),
        answer: 'scalar',
        float: args.operation === 'divide',
      };
    case 'filter_data':
    case 'concatenate_data':
      return { ...mapCall({ name: call.name, arguments: args }, false, table), answer: 'table' };
    default:
      return refused(`nl2api has no ${call.name}`);
  }
}

/**
 * VAKRA's retrieve_data is a table of the keys asked for: nl2api's retrieve_data gives one
 * key's values (kept as a one-key table), select_unique_values several keys' distinct rows.
 */
function retrieve(args: Record<string, unknown>, table: (handle: unknown) => unknown): Translation {
  const keys = Array.isArray(args.key_name) ? args.key_name : [args.key_name];
  if (keys.length === 1) {
    const mapped = mapCall({ name: 'retrieve_data', arguments: { ...args, key_name: keys[0] } }, false, table);
    return { ...mapped, answer: 'table' };
  }
  if (args.distinct !== true)
    return refused("nl2api's retrieve_data gives one key; several keys only distinct (select_unique_values)");
  if (typeof args.limit === 'number' && args.limit > 0)
    return refused('nl2api limits the distinct rows of several keys only after a sort');
  return {
    name: 'select_unique_values',
    arguments: { data_source: table(args.data_label), key_name: keys },
    answer: 'table',
  };
}

function without(args: Record<string, unknown>, name: string): Record<string, unknown> {
  const { [name]: _dropped, ...rest } = args;
  return rest;
}
