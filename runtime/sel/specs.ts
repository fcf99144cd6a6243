import type { SelBinding, ToolPool, ToolSpec } from '../../core/model.js';
import {
  AGGREGATIONS,
  CONDITIONS,
  JOIN_TYPES,
  OPERATIONS,
  SET_OPERATIONS,
  type Choice,
  type OperationChoice,
  type SlotTool,
} from '../slot/catalog.js';
import { slotToolSpec, type KeyDoc } from '../slot/specs.js';

/**
 * SEL tool specs: the SLOT tool's spec without its bound arguments, renamed, with a
 * description that states what the binding fixes. A tool binding an operation_type
 * (transform_data_<o>, calculate_<o>) describes only that operation's operation_args.
 */
export function selToolSpec(name: string, binding: SelBinding, keys: KeyDoc[], pool: ToolPool): ToolSpec {
  const slot = slotToolSpec(binding.slotTool as SlotTool, keys, pool, boundOperation(binding)).function;
  const parameters = slot.parameters as { properties: Record<string, unknown>; required: string[] };
  const bound = Object.keys(binding.boundArguments);
  const properties = Object.fromEntries(Object.entries(parameters.properties).filter(([p]) => !bound.includes(p)));
  const required = parameters.required.filter((p) => !bound.includes(p));
  return {
    type: 'function',
    function: {
      name,
      description: describe(binding, keys, slot.description),
      parameters: { ...parameters, properties, required },
    },
  };
}

/** The operation a transform_data / calculate binding fixes (undefined if it is none the catalog has). */
function boundOperation(binding: SelBinding): OperationChoice | undefined {
  if (binding.slotTool !== 'transform_data' && binding.slotTool !== 'calculate') return undefined;
  const operation = binding.boundArguments.operation_type;
  return OPERATIONS.find((op) => op.name === operation);
}

function describe(binding: SelBinding, keys: KeyDoc[], slotDescription: string): string {
  const [argument, value] = Object.entries(binding.boundArguments)[0] ?? [];
  const choice = (choices: readonly Choice[]) => choices.find((c) => c.name === value)?.description ?? String(value);
  switch (argument) {
    case 'key_name': {
      const doc = keys.find((k) => k.key === value);
      return `Returns the values of "${String(value)}"${doc ? ` (${doc.description})` : ''} of a table as a list, in row order.`;
    }
    case 'condition':
      return `Filters a table: returns a table with only the rows where the column key_name satisfies: ${choice(CONDITIONS)}.`;
    case 'ascending':
      return `${slotDescription} This tool sorts in ${value ? 'ascending' : 'descending'} order.`;
    case 'aggregation_type':
      return `${slotDescription} This tool computes the ${String(value)}: ${choice(AGGREGATIONS)}.`;
    case 'operation_type':
      return `${slotDescription} This tool's operation is ${String(value)}: ${choice(OPERATIONS)}.`;
    case 'operation':
      return `${slotDescription} This tool's operation is ${String(value)}: ${choice(SET_OPERATIONS)}.`;
    case 'type':
      return `${slotDescription} This tool's join is ${String(value)}: ${choice(JOIN_TYPES)}.`;
    default:
      return slotDescription;
  }
}

/** Specs of a SEL tool universe, in the order of `bindings`. */
export function selToolSpecs(bindings: Record<string, SelBinding>, keys: KeyDoc[], pool: ToolPool): ToolSpec[] {
  return Object.entries(bindings).map(([name, binding]) => selToolSpec(name, binding, keys, pool));
}
