import type { SelBinding, ToolCall } from '../../core/model.js';
import {
  keyContextOf,
  NULL_TESTS,
  PUBLISHED_CONDITIONS,
  publishedKeyName,
} from '../../eval/predictions/published-names.js';

/**
 * A SEL sample's tools under the names the published runtime serves (IBM/m3-train-eval
 * invocable_api_hub/tool_calling/tools/sequencing_tools.py, and VAKRA's selection_tools.py):
 * `compute_data_<aggregate>` for nl2api's `aggregate_data_<aggregate>`, a getter
 * `get_<published key>s(data_source)` for nl2api's `get_<key>`, `transform_data_to_substring`,
 * and `truncate` / `select_unique_values` over a getter's list when the calls use them. A tool
 * the published runtime has no form for is not offered. A tool is given as its published
 * record's `{description, name, arguments}`.
 */

export interface NamedTool {
  description: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** The published form of one nl2api SEL tool, or undefined when the runtime has none. */
function publishedSelTool(tool: NamedTool, binding: SelBinding | undefined, init: ToolCall): NamedTool | undefined {
  if (!binding) return tool;
  const { data_source } = tool.arguments;
  const bound = binding.boundArguments;
  switch (binding.slotTool) {
    case 'aggregate_data': {
      if (!['min', 'max', 'sum', 'mean', 'count', 'std'].includes(String(bound.aggregation_type))) return undefined;
      const { limit: _limit, ...args } = tool.arguments;
      return { ...tool, name: `compute_data_${String(bound.aggregation_type)}`, arguments: args };
    }
    case 'retrieve_data': {
      const key = publishedKeyName(String(bound.key_name), keyContextOf(init));
      return { ...tool, name: `get_${key}s`, arguments: { data_source } };
    }
    case 'transform_data':
      return bound.operation_type === 'substring'
        ? {
            ...tool,
            name: 'transform_data_to_substring',
            arguments: {
              data_source,
              key_name: tool.arguments.key_name,
              start_index: { type: 'integer', description: 'The first character (0-based).' },
              end_index: { type: 'integer', description: 'The character after the last one.' },
            },
          }
        : undefined;
    case 'filter_data': {
      // A null test is a comparison with None there.
      const condition = NULL_TESTS[String(bound.condition)] ?? String(bound.condition);
      return PUBLISHED_CONDITIONS.has(condition) ? { ...tool, name: `select_data_${condition}` } : undefined;
    }
    case 'sort_data':
      return tool;
    default:
      return undefined;
  }
}

const LIST_TOOLS: Record<string, NamedTool> = {
  truncate: {
    name: 'truncate',
    description: 'Returns the first n elements of a list.',
    arguments: {
      truncate_array: { type: 'string', description: 'A list: "$<label>$" of a getter.' },
      n: { type: 'integer', description: 'How many elements to keep.' },
    },
  },
  select_unique_values: {
    name: 'select_unique_values',
    description: 'Returns only the unique values of a list, in the order they first occur.',
    arguments: { unique_array: { type: 'string', description: 'A list: "$<label>$" of a getter.' } },
  },
};

/** The tools a SEL record offers, as published: renamed, those with no published form left out, list tools its calls use added. */
export function publishedSelTools(
  tools: readonly NamedTool[],
  bindings: Record<string, SelBinding> | undefined,
  init: ToolCall,
  calls: readonly { name: string }[],
): NamedTool[] {
  const named = tools.flatMap((tool) => publishedSelTool(tool, bindings?.[tool.name], init) ?? []);
  const used = new Set(calls.map((call) => call.name));
  const extra = Object.values(LIST_TOOLS).filter((tool) => used.has(tool.name));
  const seen = new Set<string>();
  const offered = [...named, ...extra].filter((tool) => !seen.has(tool.name) && seen.add(tool.name));
  return [...offered, ...containsTools(offered, used)];
}

/**
 * `select_data_contains`, where the calls use it and the sample's tools lack it: the export
 * writes a `LIKE '%text%'` filter as it (dialects.ts), on the sample's `select_data_like`.
 */
function containsTools(offered: readonly NamedTool[], used: ReadonlySet<string>): NamedTool[] {
  const like = offered.find((tool) => tool.name === 'select_data_like');
  if (!used.has('select_data_contains') || !like || offered.some((tool) => tool.name === 'select_data_contains'))
    return [];
  return [
    {
      ...like,
      name: 'select_data_contains',
      description:
        'Filters a table: returns a table with only the rows where the column key_name contains the text value, ignoring case.',
    },
  ];
}
