/**
 * The tools IBM VAKRA's capability-1 MCP server serves, written down from its own files
 * (IBM/vakra environment/m3/python_tools/tools/tool_registry.py for the names per universe,
 * pydantic_models.py for each input model's fields, required ones first; mcp_server.py renames
 * `data`/`data_1`/`data_2` to `data_label`/`_1`/`_2`). Kept apart from the exporter so that a
 * test holds the export to VAKRA's vocabulary, not to itself.
 */

interface ToolShape {
  required: string[];
  optional: string[];
  enums?: Record<string, readonly string[]>;
}

const CONDITIONS = [
  'equal_to',
  'not_equal_to',
  'greater_than',
  'less_than',
  'greater_than_equal_to',
  'less_than_equal_to',
  'contains',
  'like',
] as const;
const AGGREGATIONS = ['min', 'max', 'sum', 'mean', 'count', 'std', 'argmin', 'argmax'] as const;

const SHARED: Record<string, ToolShape> = {
  Calculator: {
    required: ['input_1', 'input_2', 'operation'],
    optional: [],
    enums: { operation: ['add', 'subtract', 'multiply', 'divide'] },
  },
  concatenate_data: { required: ['data_label_1', 'data_label_2'], optional: [] },
  select_unique_values: { required: ['unique_array'], optional: [] },
};

const SLOT_FILLING: Record<string, ToolShape> = {
  ...SHARED,
  filter_data: {
    required: ['data_label', 'key_name', 'value', 'condition'],
    optional: [],
    enums: { condition: CONDITIONS },
  },
  sort_data: { required: ['data_label'], optional: ['key_name', 'ascending', 'ranking_array'] },
  retrieve_data: { required: ['data_label', 'key_name'], optional: ['distinct', 'limit'] },
  aggregate_data: {
    required: ['data_label', 'aggregation_operation'],
    optional: ['key_name', 'distinct', 'limit'],
    enums: { aggregation_operation: AGGREGATIONS },
  },
  transform_data: {
    required: ['data_label', 'key_name', 'operation_type'],
    optional: ['operation_args'],
    enums: { operation_type: ['substring', 'abs', 'datetime'] },
  },
};

const SELECTION: Record<string, ToolShape> = {
  ...SHARED,
  ...Object.fromEntries(
    CONDITIONS.map((c) => [`select_data_${c}`, { required: ['data_label', 'key_name', 'value'], optional: [] }]),
  ),
  sort_data_ascending: { required: ['data_label'], optional: ['key_name', 'ranking_array'] },
  sort_data_descending: { required: ['data_label'], optional: ['key_name', 'ranking_array'] },
  ...Object.fromEntries(
    AGGREGATIONS.map((a) => [`compute_data_${a}`, { required: ['data_label'], optional: ['key_name', 'distinct'] }]),
  ),
  truncate: { required: ['truncate_array', 'n'], optional: [] },
  transform_data_to_substring: { required: ['data_label', 'key_name', 'start_index', 'end_index'], optional: [] },
  transform_data_to_absolute_value: { required: ['data_label', 'key_name'], optional: [] },
  transform_data_to_datetime_part: { required: ['data_label', 'key_name', 'datetime_pattern'], optional: [] },
};

/** Why VAKRA's server would refuse this call's name or arguments (undefined: it is in its vocabulary). */
export function vakraVocabularyProblem(
  call: { name: string; arguments: Record<string, unknown> },
  selection: boolean,
): string | undefined {
  // Getters are made per key of the universe's table (sql_tools.py create_getter): `get_<key>s(data)`.
  const shape =
    (selection ? SELECTION : SLOT_FILLING)[call.name] ??
    (selection && /^get_.+s$/.test(call.name) ? { required: ['data_label'], optional: [] } : undefined);
  if (!shape) return `${call.name} is not served in a ${selection ? 'selection' : 'slot-filling'} universe`;
  const names = Object.keys(call.arguments);
  const missing = shape.required.filter((name) => !names.includes(name));
  if (missing.length) return `${call.name} lacks ${missing.join(', ')}`;
  const unknown = names.filter((name) => !shape.required.includes(name) && !shape.optional.includes(name));
  if (unknown.length) return `${call.name} has no argument ${unknown.join(', ')}`;
  for (const [name, allowed] of Object.entries(shape.enums ?? {}))
    if (name in call.arguments && !allowed.includes(call.arguments[name] as string))
      return `${call.name}: ${name} ${JSON.stringify(call.arguments[name])} is not one of ${allowed.join(', ')}`;
  return undefined;
}
