import type { DatabaseInfo, SlotSequence, ToolCall, ToolPool, ToolSpec } from '../../core/model.js';
import {
  AGGREGATIONS,
  CAST_TYPES,
  choicesOf,
  CONDITIONS,
  INITIALIZE_TOOL,
  JOIN_TYPES,
  OPERATIONS,
  RUNNING_AGGREGATIONS,
  SET_OPERATIONS,
  toolsOf,
  type Choice,
  type OperationChoice,
  type SlotTool,
} from './catalog.js';
import { SHAPE_ARGS, SHAPE_REQUIRED } from './operations.js';
import { LruMap } from '../../core/lru.js';
import { SlotCompiler } from './compiler.js';
import { startingTableKeys, type StartingTableRef } from './keys.js';
import { compiledSequenceId } from './sequence-id.js';

/**
 * Model-facing descriptions of the SLOT tools (OpenAI function format) and their OpenAPI
 * rendering. Column-valued arguments carry an `enum` of the instance's keys, and their
 * description lists what each key means.
 */

export interface KeyDoc {
  key: string;
  description: string;
}

/**
 * Every stage of an item asks for its starting keys (sel.expand, verify, emit, the tool
 * registry), and the items of a database start from a few joins: described once per join.
 */
const initializationKeysMemo = new LruMap<string, readonly KeyDoc[]>(256);

/** Keys of the starting table(s), described from the dataset's column descriptions. */
export function keysForInitialization(db: DatabaseInfo, initialization: ToolCall[]): KeyDoc[] {
  const id = JSON.stringify([db.fingerprint, db.path, initialization]);
  return [...initializationKeysMemo.getOrSet(id, () => describeStartingKeys(db, initialization))];
}

function describeStartingKeys(db: DatabaseInfo, initialization: ToolCall[]): readonly KeyDoc[] {
  const docs: KeyDoc[] = [];
  const seen = new Set<string>();
  for (const init of initialization) {
    if (init.name !== INITIALIZE_TOOL) continue;
    const tables = (init.arguments.tables ?? []) as StartingTableRef[];
    for (const k of startingTableKeys(db, tables)) {
      if (seen.has(k.key)) continue;
      seen.add(k.key);
      const column = db.tables.find((t) => t.name === k.table)!.columns.find((c) => c.name === k.column)!;
      const description = column.description || column.name;
      docs.push(
        Object.freeze({
          key: k.key,
          description: column.valueDescription ? `${description} (${column.valueDescription})` : description,
        }),
      );
    }
  }
  return Object.freeze(docs);
}

/**
 * The key universe of a sequence: the starting keys plus the keys its calls derive
 * (transform_data results, per-group aggregates), so that every key the calls use is in
 * the specs' enums.
 */
export function keysForSequence(db: DatabaseInfo, seq: SlotSequence, pool: ToolPool): KeyDoc[] {
  const docs = keysForInitialization(db, seq.initialization);
  const seen = new Set(docs.map((d) => d.key));
  for (const derived of derivedKeysOf(db, seq, pool)) {
    if (seen.has(derived.key)) continue;
    seen.add(derived.key);
    docs.push({ key: derived.key, description: derived.description });
  }
  return docs;
}

/**
 * The pipeline asks for a sequence's keys several times (sel.expand, verify, emit) on fresh
 * copies of the same calls: compile each distinct sequence once.
 */
const derivedKeysMemo = new LruMap<string, readonly KeyDoc[]>(256);

function derivedKeysOf(db: DatabaseInfo, seq: SlotSequence, pool: ToolPool): readonly KeyDoc[] {
  return derivedKeysMemo.getOrSet(compiledSequenceId(db, pool, seq), () => {
    // Only the keys are wanted: define the calls, render no SQL.
    const compiler = new SlotCompiler(db, pool);
    for (const call of seq.initialization) compiler.define(call, { initialization: true });
    for (const call of seq.calls) compiler.define(call);
    return compiler.derivedKeys().map(({ key, description }) => ({ key, description }));
  });
}

/** `keysForSequence`, or only the starting keys of a sequence that does not compile (its format check says why). */
export function keysForSequenceOrStart(db: DatabaseInfo, seq: SlotSequence, pool: ToolPool): KeyDoc[] {
  try {
    return keysForSequence(db, seq, pool);
  } catch {
    return keysForInitialization(db, seq.initialization);
  }
}

// Worded for every way a caller names outputs: a label it gave, a native tool call's id, the handle a result reported (eval/call-names.ts, MCP's nl2api/label).
const REFERENCE =
  'A reference "$LABEL$" to the output of an earlier call, LABEL the name that output goes by: the call\'s label, its tool call id, or the handle its result gave; the initial table is "$starting_table_var$".';

/**
 * A universe's key list, written once: every key-valued argument of every tool of the universe
 * describes all of its keys (tens of kB on a wide database), and its specs stay in memory as
 * long as its database is worked on (pipeline/tool-registry.ts). The descriptions embed this
 * one string rather than a copy each.
 */
const keyLists = new WeakMap<readonly KeyDoc[], string>();

function keyList(keys: readonly KeyDoc[]): string {
  let list = keyLists.get(keys);
  if (list === undefined) keyLists.set(keys, (list = keys.map((k) => `${k.key}: ${k.description}`).join('\n')));
  return list;
}

// A type, not an interface: it must stay assignable to Record<string, unknown>.
type KeySchema = { type: 'string'; enum: string[]; description: string };

function keySchema(keys: KeyDoc[], what: string, extra: KeyDoc[] = []): KeySchema {
  const all = [...extra, ...keys];
  // Concatenated, not joined: a join would copy the universe's list.
  const listed =
    extra.length === 0 ? keyList(keys) : keys.length === 0 ? keyList(extra) : `${keyList(extra)}\n${keyList(keys)}`;
  return { type: 'string', enum: all.map((k) => k.key), description: `${what}\nKeys:\n${listed}` };
}

function choiceSchema(choices: Choice[], what: string): Record<string, unknown> {
  return {
    type: 'string',
    enum: choices.map((c) => c.name),
    description: `${what}\n${choices.map((c) => `${c.name}: ${c.description}`).join('\n')}`,
  };
}

const SOURCE = { type: 'string', description: `The input table. ${REFERENCE}` };
const VALUE = {
  type: ['string', 'number', 'null'],
  description: 'A literal value, or a reference "$LABEL$" to a single value computed by an earlier call.',
};
const LIMIT = { type: 'integer', description: 'Keep only the first N rows (omit, or 0, for all).' };

function oneOrMoreKeys(keys: KeyDoc[], pool: ToolPool, what: string): Record<string, unknown> {
  const one = keySchema(keys, what);
  if (pool === 'paper') return one;
  const { description, ...single } = one;
  return {
    description: `${description}\nA list of keys is also accepted.`,
    anyOf: [single, { type: 'array', items: single, minItems: 1 }],
  };
}

interface OperationArgDoc {
  name: string;
  /** The operations it is for, as the SLOT spec names them. */
  of: string;
  schema: Record<string, unknown>;
  what: string;
}

/**
 * The arguments `operation_args` may hold: per argument, the operations it is for (as the SLOT
 * spec, listing all of them, prefixes it), its schema and what it is. `withKeys`: transform_data,
 * whose rows have keys; calculate's value has none.
 */
function operationArgDocs(pool: ToolPool, withKeys: KeyDoc[] | undefined): OperationArgDoc[] {
  const operand = {
    type: 'object',
    description: withKeys
      ? 'The second operand: {"key_name": <key>} for another column of the row, or {"value": <literal or "$LABEL$">}.'
      : 'The second operand: {"value": <literal or "$LABEL$">}.',
  };
  const docs: OperationArgDoc[] = [
    {
      name: 'start_index',
      of: 'substring',
      schema: { type: 'integer' },
      what: 'first character, 0-based (negative counts from the end).',
    },
    {
      name: 'end_index',
      of: 'substring',
      schema: { type: 'integer' },
      what: 'end position, exclusive (omit for the rest of the text).',
    },
    {
      name: 'pattern',
      of: 'datetime',
      schema: { type: 'string' },
      what: "SQLite strftime pattern, e.g. '%Y' for the year.",
    },
  ];
  if (withKeys && pool === 'extended') docs.push(...windowArgDocs(withKeys, operand));
  if (pool === 'extended') {
    docs.push(
      { name: 'operand', of: '', schema: operand, what: operand.description },
      { name: 'to', of: 'cast', schema: { type: 'string', enum: [...CAST_TYPES] }, what: 'the target type.' },
      { name: 'digits', of: 'round', schema: { type: 'integer' }, what: 'number of decimal digits (default 0).' },
      { name: 'values', of: 'in / not_in', schema: { type: 'array' }, what: 'the values (or a "$LABEL$" of a list).' },
      { name: 'then', of: 'if_then_else', schema: operand, what: 'operand used where the key is true.' },
      { name: 'else', of: 'if_then_else', schema: operand, what: 'operand used otherwise (null if omitted).' },
      {
        name: 'start',
        of: 'substr',
        schema: operand,
        what: 'operand giving the first character, 1-based (negative counts from the end).',
      },
      {
        name: 'length',
        of: 'substr',
        schema: operand,
        what: 'operand giving the number of characters (negative: the characters before start; omit for the rest of the text).',
      },
      {
        name: 'modifiers',
        of: 'datetime',
        schema: { type: 'array', items: { type: 'string' } },
        what: "SQLite date/time modifiers applied in order before formatting, e.g. ['+1 day'], ['start of month', '-1 month'], ['weekday 0'] (not 'localtime' / 'utc').",
      },
    );
  }
  return docs;
}

/** The arguments of the window operations (transform_data only, extended pool). */
function windowArgDocs(keys: KeyDoc[], operand: Record<string, unknown>): OperationArgDoc[] {
  // Order items name a key by its enum only: the keys are described once, under key_name
  // (and partition_by), not again in every item list a tool shows.
  const orderItems = {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        key_name: { type: 'string', enum: keys.map((k) => k.key), description: 'A key (described under key_name).' },
        ascending: { type: 'boolean', description: 'true (default): the smallest value first; false: the largest.' },
      },
      required: ['key_name'],
      additionalProperties: false,
    },
  };
  return [
    {
      name: 'ascending',
      of: 'rank / row_number / ntile',
      schema: { type: 'boolean' },
      what: 'the smallest value first (default false: the largest).',
    },
    {
      name: 'dense',
      of: 'rank',
      schema: { type: 'boolean' },
      what: 'no gaps after tied rows (DENSE_RANK; default false: RANK).',
    },
    {
      name: 'partition_by',
      of: 'rank / row_number / ntile / lag / lead / running',
      schema: { type: 'array', items: keySchema(keys, 'A key whose rows are ranked among themselves.') },
      what: 'keys whose values divide the rows into groups ranked separately.',
    },
    {
      name: 'then_by',
      of: 'rank / row_number / ntile',
      schema: orderItems,
      what: 'further keys ordering the rows tied on key_name, in order; rows still tied keep the table order (rank: share a rank).',
    },
    {
      name: 'buckets',
      of: 'ntile',
      schema: { type: 'integer', minimum: 1 },
      what: 'the number of groups the ordered rows are split into.',
    },
    {
      name: 'order_by',
      of: 'lag / lead / running',
      schema: orderItems,
      what: 'the keys ordering the rows, in order; rows tied on them keep the table order.',
    },
    {
      name: 'offset',
      of: 'lag / lead',
      schema: { type: 'integer', minimum: 0 },
      what: 'how many rows before (lag) or after (lead) (default 1).',
    },
    {
      name: 'default',
      of: 'lag / lead',
      schema: operand,
      what: 'operand used where there is no such row (default null).',
    },
    {
      name: 'aggregation',
      of: 'running',
      schema: { type: 'string', enum: [...RUNNING_AGGREGATIONS] },
      what: 'the aggregate: sum, mean, count (non-missing values), count_rows (rows), min or max.',
    },
    {
      name: 'frame',
      of: 'running',
      schema: {
        type: 'object',
        properties: {
          preceding: { type: ['integer', 'null'], minimum: 0, description: 'rows before (null or omitted: all).' },
          following: {
            type: ['integer', 'null'],
            minimum: 0,
            description: 'rows after (omitted or 0: none; null: all).',
          },
        },
        additionalProperties: false,
      },
      what: 'aggregate over these rows around each row, counted in order_by then table order (omit: with order_by, the rows up to the current one and its ties; without, all rows).',
    },
  ];
}

const NEW_KEY_NAME = { type: 'string', description: 'Key of the new column (optional).' };

/**
 * The `operation_args` schema: of every operation (the SLOT tool, whose operation_type is an
 * argument), or of `op` alone (a SEL tool binding it): only that operation's arguments, those
 * it needs required and no others, as the runtime checks them (operations.ts). Listing every
 * operation's arguments in each SEL tool cost about a thousand tokens a tool on BIRD (the
 * rank arguments' key list among them), for arguments the tool refuses.
 */
function operationArgs(pool: ToolPool, withKeys: KeyDoc[] | undefined, op?: OperationChoice): Record<string, unknown> {
  const docs = operationArgDocs(pool, withKeys);
  const properties: Record<string, unknown> = {};
  if (op === undefined) {
    for (const doc of docs) {
      properties[doc.name] =
        doc.name === 'operand' ? doc.schema : { ...doc.schema, description: `${doc.of}: ${doc.what}` };
      if (doc.name === 'pattern' && withKeys) properties.new_key_name = NEW_KEY_NAME;
    }
    return { type: 'object', description: 'Arguments of the operation (see operation_type).', properties };
  }
  for (const name of SHAPE_ARGS[op.shape]) {
    const doc = docs.find((d) => d.name === name);
    if (doc) properties[name] = { ...doc.schema, description: capitalized(doc.what) };
  }
  if (withKeys) properties.new_key_name = NEW_KEY_NAME;
  const required = SHAPE_REQUIRED[op.shape].filter((name) => name in properties);
  return {
    type: 'object',
    description:
      Object.keys(properties).length === 0
        ? `${op.name} takes no arguments: omit operation_args, or pass {}.`
        : `Arguments of ${op.name}.`,
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function fn(name: string, description: string, properties: Record<string, unknown>, required: string[]): ToolSpec {
  return {
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required, additionalProperties: false } },
  };
}

/**
 * A SLOT tool's spec. `operation` (transform_data and calculate): the spec a SEL tool binding
 * that operation_type starts from, its operation_args those of that operation only, and
 * required when the operation needs some.
 */
export function slotToolSpec(tool: SlotTool, keys: KeyDoc[], pool: ToolPool, operation?: OperationChoice): ToolSpec {
  const key = (what: string) => keySchema(keys, what);
  // operation_args is required where the bound operation's schema requires some of it (calculate lists no window's).
  const withArgs = (schema: Record<string, unknown>): string[] => ('required' in schema ? ['operation_args'] : []);
  switch (tool) {
    case 'filter_data':
      return fn(
        tool,
        'Filters a table: returns a table with only the rows where the column key_name satisfies the condition against value (rows where the comparison is unknown, e.g. a missing value, are dropped).',
        {
          data_source: SOURCE,
          key_name: key('The column to test.'),
          value:
            pool === 'paper'
              ? VALUE
              : {
                  ...VALUE,
                  type: ['string', 'number', 'null', 'array'],
                  description: `${VALUE.description} For in / not_in: a list of values or a "$LABEL$" of a list.`,
                },
          condition: choiceSchema(choicesOf(CONDITIONS, pool), 'How key_name is compared with value:'),
        },
        pool === 'paper' ? ['data_source', 'key_name', 'value', 'condition'] : ['data_source', 'key_name', 'condition'],
      );
    case 'sort_data':
      return fn(
        tool,
        'Sorts a table by the column key_name and returns the sorted table. The sort is stable: to sort by k1 then k2, sort by k2 first, then by k1. Missing values come first in ascending order and last in descending order.',
        {
          data_source: SOURCE,
          key_name: key('The column to sort by.'),
          ascending: { type: 'boolean', description: 'true for ascending (default), false for descending.' },
          ...(pool === 'extended'
            ? {
                limit: {
                  ...LIMIT,
                  description: 'Keep only the first N rows of the sorted table (omit, or 0, for all).',
                },
                offset: {
                  type: 'integer',
                  description: 'Skip the first N rows of the sorted table (applied before limit).',
                },
              }
            : {}),
        },
        ['data_source', 'key_name', 'ascending'],
      );
    case 'retrieve_data':
      return fn(
        tool,
        'Returns the values of the column key_name of a table as a list, in row order.',
        {
          data_source: SOURCE,
          key_name: key('The column to return.'),
          distinct: { type: 'boolean', description: 'true to keep only the first occurrence of each value.' },
          limit: LIMIT,
          ...(pool === 'extended'
            ? { offset: { type: 'integer', description: 'Skip the first N values (applied before limit).' } }
            : {}),
        },
        ['data_source', 'key_name'],
      );
    case 'aggregate_data':
      return fn(
        tool,
        'Aggregates the column key_name of a table. On a plain table returns a single value (argmin / argmax return the row holding the minimum / maximum, as a one-row table). On a grouped table (from group_data_by) returns the grouped table with one more column holding the aggregate of each group, keyed "<aggregation_type>_<key_name>". Missing values are ignored.',
        {
          data_source: SOURCE,
          key_name: keySchema(keys, 'The column to aggregate.', [
            { key: '*', description: 'all rows (only with count)' },
          ]),
          aggregation_type: choiceSchema(choicesOf(AGGREGATIONS, pool), 'The aggregate:'),
          distinct: { type: 'boolean', description: 'true to aggregate distinct values only.' },
          limit: { ...LIMIT, description: 'Aggregate only the first N rows (omit, or 0, for all).' },
        },
        ['data_source', 'key_name', 'aggregation_type'],
      );
    case 'group_data_by':
      return fn(
        tool,
        'Groups the rows of a table by key_name: returns a grouped table with one row per distinct value (a missing value is a group of its own) and the group key as its column. Use aggregate_data on it to compute a value per group.',
        { data_source: SOURCE, key_name: oneOrMoreKeys(keys, pool, 'The column to group by.') },
        ['data_source', 'key_name'],
      );
    case 'select_unique_values':
      return fn(
        tool,
        pool === 'paper'
          ? 'Returns the list of distinct values of the column key_name, in order of first occurrence.'
          : 'Returns the list of distinct values of the column key_name, in order of first occurrence; given a list of keys, returns a table of their distinct combinations.',
        { data_source: SOURCE, key_name: oneOrMoreKeys(keys, pool, 'The column whose distinct values to return.') },
        ['data_source', 'key_name'],
      );
    case 'transform_data': {
      const transformArgs = operationArgs(pool, keys, operation);
      return fn(
        tool,
        'Computes a new column from the column key_name of each row and returns the table with that column added; its key is operation_args.new_key_name if given, else "<key_name>_<operation_type>".',
        {
          data_source: SOURCE,
          key_name: key('The column to transform.'),
          operation_type: choiceSchema(choicesOf(OPERATIONS, pool), 'The operation:'),
          operation_args: transformArgs,
        },
        ['data_source', 'key_name', 'operation_type', ...withArgs(transformArgs)],
      );
    }
    case 'union_data':
      return fn(
        tool,
        'Returns the rows that are in either of two tables derived from the same source table (e.g. two filters of it), each row once, in source order: the OR of two filters.',
        { data_source: SOURCE, other_data_source: { ...SOURCE, description: `The other table. ${REFERENCE}` } },
        ['data_source', 'other_data_source'],
      );
    case 'calculate': {
      const calculateArgs = operationArgs(pool, undefined, operation);
      return fn(
        tool,
        'Applies an operation to a single value and returns the resulting value.',
        {
          value: VALUE,
          operation_type: choiceSchema(choicesOf(OPERATIONS, pool), 'The operation:'),
          operation_args: calculateArgs,
        },
        ['value', 'operation_type', ...withArgs(calculateArgs)],
      );
    }
    case 'combine_data':
      return fn(
        tool,
        'Combines two lists (or tables) with the same number of columns, matched by position, as SQL UNION / UNION ALL / INTERSECT / EXCEPT. Returns a list when both inputs are lists, else a table, with the column keys of data_source. Except for union_all, duplicate rows are removed and rows come ordered by their values; union_all keeps the rows of data_source in order, then those of other_data_source.',
        {
          data_source: { ...SOURCE, description: `The first list or table. ${REFERENCE}` },
          other_data_source: { ...SOURCE, description: `The second list or table. ${REFERENCE}` },
          operation: choiceSchema(choicesOf(SET_OPERATIONS, pool), 'How the rows are combined:'),
          key_name: oneOrMoreKeys(
            keys,
            pool,
            "The columns of data_source to combine, in order (omit for all); they are the output's keys.",
          ),
          other_key_name: oneOrMoreKeys(
            keys,
            pool,
            'The columns of other_data_source to combine, as many as key_name (omit for all).',
          ),
        },
        ['data_source', 'other_data_source', 'operation'],
      );
    case 'join_data':
      return fn(
        tool,
        "Joins two tables on keys: rows match where key_name of data_source equals other_key_name of other_data_source (each pair, for lists of keys; a missing value matches nothing). inner / left return the matching pairs of rows, with data_source's columns then other_data_source's (a key already taken gets a suffix _2, _3, ...), in data_source's row order; semi / anti return the rows of data_source that match some / no row, unchanged.",
        {
          data_source: { ...SOURCE, description: `The first table. ${REFERENCE}` },
          other_data_source: { ...SOURCE, description: `The table joined to it. ${REFERENCE}` },
          key_name: oneOrMoreKeys(keys, pool, 'The column(s) of data_source to match.'),
          other_key_name: oneOrMoreKeys(
            keys,
            pool,
            'The column(s) of other_data_source to match, as many as key_name.',
          ),
          type: choiceSchema(choicesOf(JOIN_TYPES, pool), 'Which rows the join returns:'),
        },
        ['data_source', 'other_data_source', 'key_name', 'other_key_name', 'type'],
      );
  }
}

/** The pool's tools, specified for an instance whose key universe is `keys`. */
export function slotToolSpecs(keys: KeyDoc[], pool: ToolPool): ToolSpec[] {
  return toolsOf(pool).map((tool) => slotToolSpec(tool, keys, pool));
}

const OUTPUT_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      properties: { kind: { const: 'scalar' }, value: { type: ['string', 'number', 'null'] } },
      required: ['kind', 'value'],
    },
    {
      type: 'object',
      properties: { kind: { const: 'list' }, values: { type: 'array', items: { type: ['string', 'number', 'null'] } } },
      required: ['kind', 'values'],
    },
    {
      type: 'object',
      properties: {
        kind: { const: 'table' },
        columns: { type: 'array', items: { type: 'string' } },
        rows: { type: 'array', items: { type: 'array', items: { type: ['string', 'number', 'null'] } } },
      },
      required: ['kind', 'columns', 'rows'],
    },
  ],
};

/** An OpenAPI 3.1 document: one `POST /tools/{name}` per tool. */
export function toOpenApi(tools: ToolSpec[], info: { title: string; version: string }): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const tool of tools) {
    const { name, description, parameters } = tool.function;
    paths[`/tools/${name}`] = {
      post: {
        operationId: name,
        summary: description.split(/(?<=\.)\s/)[0],
        description,
        requestBody: { required: true, content: { 'application/json': { schema: parameters } } },
        responses: {
          '200': {
            description: 'The tool output.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ToolOutput' } } },
          },
          '400': {
            description: 'The call was invalid.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { code: { type: 'string' }, message: { type: 'string' } },
                  required: ['code', 'message'],
                },
              },
            },
          },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    paths,
    components: { schemas: { ToolOutput: OUTPUT_SCHEMA } },
  };
}
