import type { SelBinding, ToolCall } from '../../core/model.js';

/**
 * How a SLOT call maps onto a SEL tool (docs/TOOLS.md, "SEL formulation"): the categorical
 * argument it binds and the SEL name it asks for (before sanitizing). `undefined` when the
 * categorical argument is not a literal of the expected type.
 */
export interface SelShape {
  desiredName: string;
  binding: SelBinding;
  /** retrieve_data: the key its getter returns. */
  getterKey?: string;
}

export function selShapeOf(call: ToolCall): SelShape | undefined {
  const args = call.arguments;
  const bind = (desiredName: string, boundArguments: Record<string, unknown>): SelShape => ({
    desiredName,
    binding: { slotTool: call.name, boundArguments },
  });
  switch (call.name) {
    case 'filter_data':
      return typeof args.condition === 'string'
        ? bind(`select_data_${args.condition}`, { condition: args.condition })
        : undefined;
    case 'sort_data': {
      const ascending = args.ascending ?? true;
      if (typeof ascending !== 'boolean') return undefined;
      return bind(ascending ? 'sort_data_ascending' : 'sort_data_descending', { ascending });
    }
    case 'aggregate_data':
      return typeof args.aggregation_type === 'string'
        ? bind(`aggregate_data_${args.aggregation_type}`, { aggregation_type: args.aggregation_type })
        : undefined;
    case 'transform_data':
      return typeof args.operation_type === 'string'
        ? bind(`transform_data_${args.operation_type}`, { operation_type: args.operation_type })
        : undefined;
    case 'calculate':
      return typeof args.operation_type === 'string'
        ? bind(`calculate_${args.operation_type}`, { operation_type: args.operation_type })
        : undefined;
    case 'combine_data':
      return typeof args.operation === 'string'
        ? bind(`combine_data_${args.operation}`, { operation: args.operation })
        : undefined;
    case 'join_data':
      return typeof args.type === 'string' ? bind(`join_data_${args.type}`, { type: args.type }) : undefined;
    case 'retrieve_data':
      return typeof args.key_name === 'string' ? { ...getterShape(args.key_name) } : undefined;
    case 'group_data_by':
    case 'select_unique_values':
    case 'union_data':
      return bind(call.name, {});
    default:
      return undefined;
  }
}

export function getterShape(key: string): SelShape {
  return {
    desiredName: `get_${key}`,
    binding: { slotTool: 'retrieve_data', boundArguments: { key_name: key } },
    getterKey: key,
  };
}
