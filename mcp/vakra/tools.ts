import type { ServerType } from './universes.js';
import { PUBLISHED_CONDITION_NAMES } from '../../eval/predictions/published-names.js';

/**
 * The tools VAKRA's capability-1 server lists (IBM/vakra environment/m3/python_tools:
 * tools/tool_registry.py for names, order and descriptions, tools/pydantic_models.py for the
 * arguments, mcp/mcp_server.py for how it lists them), with JSON schemas close to the ones
 * pydantic gives: a table argument (`data`, `data_1`, `data_2`) is listed as a handle string
 * (`data_label`, …), `initialize_active_data` is not listed, `get_data` comes last. A
 * selection universe lists a getter `get_<key>s` per key of its starting table first, as
 * VAKRA's router does.
 */

export interface VakraTool {
  name: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, object>;
    required?: string[];
    additionalProperties?: false;
  };
}

export const GET_DATA = 'get_data';

const HANDLE = {
  type: 'string',
  description:
    "Handle string referencing a stored data table (e.g. 'retrieved_data_1'). Pass the handle returned by a previous tool call.",
};

const CONDITIONS = PUBLISHED_CONDITION_NAMES;
export const AGGREGATIONS = ['min', 'max', 'sum', 'mean', 'count', 'std', 'argmin', 'argmax'] as const;
const AGGREGATION_WORDS: Record<(typeof AGGREGATIONS)[number], string> = {
  min: 'minimum',
  max: 'maximum',
  sum: 'sum',
  mean: 'mean',
  count: 'count',
  std: 'standard deviation',
  argmin: 'index of the minimum',
  argmax: 'index of the maximum',
};
const NUMBERS = {
  anyOf: [
    { type: 'integer' },
    { type: 'number' },
    { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'number' }, { type: 'null' }] } },
  ],
};

function tool(name: string, description: string, properties: Record<string, object>, required: string[]): VakraTool {
  return { name, description, inputSchema: { type: 'object', properties, required, additionalProperties: false } };
}

const keyName = (description: string) => ({ type: 'string', description });
const value = {
  anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'integer' }, { type: 'null' }],
  description: 'The value to compare against in the filtering operation.',
};

const calculator = tool(
  'Calculator',
  'Perform arithmetic operations on scalar or list inputs. Supports element-wise operations on lists and scalar-scalar operations.',
  {
    input_1: { ...NUMBERS, description: 'First operand (scalar or list of numeric values, may contain None)' },
    input_2: { ...NUMBERS, description: 'Second operand (scalar or list of numeric values, may contain None)' },
    operation: {
      type: 'string',
      enum: ['add', 'subtract', 'multiply', 'divide'],
      description: 'Arithmetic operation to perform.',
    },
  },
  ['input_1', 'input_2', 'operation'],
);
const concatenate = tool(
  'concatenate_data',
  'Concatenates two data tables along axis 0 (rows). ',
  { data_label_1: HANDLE, data_label_2: HANDLE },
  ['data_label_1', 'data_label_2'],
);
const uniqueValues = tool(
  'select_unique_values',
  'Returns only the unique values from the input array. ',
  {
    unique_array: { type: 'array', items: {}, description: 'Array of objects from which duplicates will be removed. ' },
  },
  ['unique_array'],
);
const getData = tool(
  GET_DATA,
  'Get the data from the server. Optionally switch to a different tool universe by providing tool_universe_id parameter. If the universe is switched, the active data for the new universe will be returned.',
  {
    tool_universe_id: {
      anyOf: [{ type: 'string' }, { type: 'null' }],
      default: null,
      description:
        'Optional tool universe ID to switch to before retrieving data. If provided and different from current universe, the server will reload active_data for the specified universe before returning it.',
    },
  },
  [],
);

const SLOT_FILLING: VakraTool[] = [
  tool(
    'aggregate_data',
    'Apply a specified aggregation operation to the values in a single key of the input data. ',
    {
      data_label: HANDLE,
      key_name: { ...keyName('The key on which the aggregation will be applied.'), default: '' },
      aggregation_operation: {
        type: 'string',
        enum: [...AGGREGATIONS],
        description: `Aggregation operation to perform. Available operations: ${AGGREGATIONS.join(', ')}`,
      },
      distinct: { type: 'boolean', default: false, description: 'Whether to aggregate only unique values. ' },
      limit: {
        type: 'integer',
        default: -1,
        description:
          'The maximum number of entries to include in the aggregation (default=-1 includes all available entries)',
      },
    },
    ['data_label', 'aggregation_operation'],
  ),
  calculator,
  concatenate,
  tool(
    'filter_data',
    'This function applies a filter on the given key of the input data, based on the provided condition and value. ',
    {
      data_label: HANDLE,
      key_name: keyName('The key on which the filter will be applied.'),
      value,
      condition: { type: 'string', enum: [...CONDITIONS], description: 'Condition used in the filter.' },
    },
    ['data_label', 'key_name', 'value', 'condition'],
  ),
  tool(
    'retrieve_data',
    'This function selects the values corresponding to the given key or keys from the input data. ',
    {
      data_label: HANDLE,
      key_name: {
        anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
        description: 'The key or keys to retrieve the values of from the specified data path. ',
      },
      distinct: { type: 'boolean', default: false, description: 'whether to return only distinct values' },
      limit: {
        type: 'integer',
        default: -1,
        description: "only return the first 'limit' elements, (-1) indicates no limit on number of returned items",
      },
    },
    ['data_label', 'key_name'],
  ),
  uniqueValues,
  tool(
    'sort_data',
    'Sort the input data in either descending (default) or ascending order. ',
    {
      data_label: HANDLE,
      key_name: {
        ...keyName('The key on which the sort will be applied. Not required if ranking_array is provided.'),
        default: '',
      },
      ascending: {
        type: 'boolean',
        default: false,
        description: 'Sort from smallest to largest (default is largest to smallest). ',
      },
      ranking_array: {
        anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'null' }],
        default: null,
        description: 'Optional array of numeric values to use for sorting.',
      },
    },
    ['data_label'],
  ),
  tool(
    'transform_data',
    'This function applies the specified transformation to the given key of the input data. ',
    {
      data_label: HANDLE,
      key_name: keyName('The key specifying which values the transformation will be applied to.'),
      operation_type: {
        type: 'string',
        enum: ['substring', 'abs', 'datetime'],
        description:
          "Type of transformation to apply: 'substring' (operation_args={'start_index': int, 'end_index': int}), 'abs', 'datetime' (operation_args={'pattern': 'ISO Pattern'}).",
      },
      operation_args: {
        anyOf: [{ type: 'object' }, { type: 'null' }],
        default: null,
        description: 'Dictionary of keywords args required by the transformation, if any. ',
      },
    },
    ['data_label', 'key_name', 'operation_type'],
  ),
];

const filterBy = (condition: string) =>
  tool(
    `select_data_${condition}`,
    `Filters rows where the column's value is ${condition.replaceAll('_', ' ')} the given value.`,
    { data_label: HANDLE, key_name: keyName('The key on which the filter will be applied.'), value },
    ['data_label', 'key_name', 'value'],
  );
const sortBy = (direction: 'ascending' | 'descending') =>
  tool(
    `sort_data_${direction}`,
    `Sort data in ${direction} order by the values associated with the chosen key='key_name'`,
    { data_label: HANDLE, key_name: { ...keyName('name of key to sort by'), default: '' } },
    ['data_label'],
  );
const compute = (operation: (typeof AGGREGATIONS)[number]) =>
  tool(
    `compute_data_${operation}`,
    `Return the ${AGGREGATION_WORDS[operation]} of the input data over the specified key.`,
    {
      data_label: HANDLE,
      key_name: { ...keyName(`name of key to apply ${operation}`), default: '' },
      distinct: {
        type: 'boolean',
        default: false,
        description: `whether to apply ${operation} to only distinct values`,
      },
    },
    ['data_label'],
  );
const transformTo = (name: string, description: string, properties: Record<string, object>) =>
  tool(name, description, { data_label: HANDLE, key_name: keyName('Name of key to transform.'), ...properties }, [
    'data_label',
    'key_name',
    ...Object.keys(properties),
  ]);

const SELECTION: VakraTool[] = [
  calculator,
  concatenate,
  uniqueValues,
  transformTo('transform_data_to_substring', 'Transform list of string values by taking substrings.', {
    start_index: { type: 'integer', description: 'Start index of substring.' },
    end_index: { type: 'integer', description: 'End index of substring. Must be >= start_index.' },
  }),
  transformTo('transform_data_to_absolute_value', 'Transform numeric values into their absolute value.', {}),
  transformTo('transform_data_to_datetime_part', 'Transform list of datetime strings into specified subpart.', {
    datetime_pattern: {
      type: 'string',
      description: "ISO datetime pattern to extract (e.g., '%Y' for year, '%m' for month, '%d' for day).",
    },
  }),
  tool(
    'truncate',
    'Return the first n elements of a list-like object.',
    {
      truncate_array: { type: 'array', items: {}, description: 'A list-like object or table to truncate.' },
      n: { type: 'integer', minimum: 0, description: 'The number of rows/elements to return. Must be non-negative.' },
    },
    ['truncate_array', 'n'],
  ),
  ...CONDITIONS.map(filterBy),
  sortBy('ascending'),
  sortBy('descending'),
  ...AGGREGATIONS.map(compute),
];

/** A selection universe's getter of a key (tools/sql_tools.py `create_getter`). */
export const getterName = (key: string) => `get_${key}s`;

function getter(key: string): VakraTool {
  return tool(
    getterName(key),
    `Lookup data ${key}: Column ${key}`,
    { data_label: { ...HANDLE, description: `Table data containing ${key}. ${HANDLE.description}` } },
    ['data_label'],
  );
}

/** The tools of a universe, in VAKRA's order; `keys` are its starting table's (the getters of a selection universe). */
export function vakraTools(serverType: ServerType, keys: readonly string[]): VakraTool[] {
  if (serverType === 'slot_filling') return [...SLOT_FILLING, getData];
  return [...keys.map(getter), ...SELECTION, getData];
}
