import type { SlotSequence, ToolCall, ToolSpec } from '../../core/model.js';
import { checkFormat } from '../../verifiers/format.js';

const KEYS = ['book_title', 'book_Price (USD)', 'author_last_name'];

const tools: ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'filter_data',
      description: 'Keeps the rows where key <condition> value.',
      parameters: {
        type: 'object',
        properties: {
          data_source: { type: 'string', description: 'a $LABEL$' },
          key_name: { type: 'string', enum: KEYS },
          value: { type: ['string', 'number', 'array', 'null'] },
          condition: { type: 'string', enum: ['equal_to', 'greater_than', 'in', 'is_null'] },
        },
        required: ['data_source', 'key_name', 'condition'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'aggregate_data',
      description: 'Aggregates a column.',
      parameters: {
        type: 'object',
        properties: {
          data_source: { type: 'string' },
          key_name: { type: 'string', enum: [...KEYS, '*'] },
          aggregation_type: { type: 'string', enum: ['min', 'max', 'count', 'mean'] },
          distinct: { type: 'boolean' },
          limit: { type: 'integer' },
        },
        required: ['data_source', 'key_name', 'aggregation_type'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'calculate',
      description: 'Applies an operation to one value.',
      parameters: {
        type: 'object',
        properties: {
          value: { type: 'number' },
          operation_type: { type: 'string', enum: ['multiply', 'divide'] },
          operation_args: {
            type: 'object',
            properties: { operand: { type: 'object', properties: { value: { type: 'number' } } } },
          },
        },
        required: ['value', 'operation_type'],
        additionalProperties: false,
      },
    },
  },
];

const init: ToolCall = {
  name: 'initialize_active_data',
  label: 'starting_table_var',
  arguments: {
    database: 'bookstore',
    tables: [
      { alias: 'T1', table: 'book' },
      { alias: 'T2', table: 'author' },
    ],
    joins: [{ type: 'inner', alias: 'T2', on: [{ left: 'T1.author_id', right: 'T2.author_id' }] }],
  },
};

function valid(): SlotSequence {
  return {
    initialization: [structuredClone(init)],
    calls: [
      {
        name: 'filter_data',
        label: 'cheap',
        arguments: {
          data_source: '$starting_table_var$',
          key_name: 'book_Price (USD)',
          value: 10,
          condition: 'greater_than',
        },
      },
      {
        name: 'aggregate_data',
        label: 'n',
        arguments: { data_source: '$cheap$', key_name: '*', aggregation_type: 'count' },
      },
      {
        name: 'calculate',
        label: 'pct',
        arguments: { value: '$n$', operation_type: 'multiply', operation_args: { operand: { value: 100 } } },
      },
    ],
    answerLabels: ['pct'],
  };
}

describe('checkFormat', () => {
  it('accepts a well-formed sequence', () => {
    expect(checkFormat(valid(), tools)).toMatchObject({ ok: true, category: 'format_ok' });
  });

  it('accepts extra sequence fields (a SEL sequence) and a reference where the schema wants a number', () => {
    const seq = { ...valid(), tools, bindings: {} };
    expect(checkFormat(seq, tools).ok).toBe(true);
  });

  it('format:schema for malformed sequences and labels', () => {
    expect(checkFormat({ calls: [] } as unknown as SlotSequence, tools)).toMatchObject({ category: 'format:schema' });
    const badLabel = valid();
    badLabel.calls[0].label = '1st';
    expect(checkFormat(badLabel, tools)).toMatchObject({ ok: false, category: 'format:schema' });
    const dashed = valid();
    dashed.calls[0].label = 'a-b';
    expect(checkFormat(dashed, tools)).toMatchObject({ category: 'format:schema' });
    const noArgs = valid();
    (noArgs.calls[0] as unknown as Record<string, unknown>).arguments = 'x';
    expect(checkFormat(noArgs, tools)).toMatchObject({ category: 'format:schema' });
  });

  it('format:schema as zod reads a sequence: holes, arguments that are no plain record, symbol keys, empty names', () => {
    const withCall = (change: (call: Record<string, unknown>) => void) => {
      const seq = valid();
      change(seq.calls[0] as unknown as Record<string, unknown>);
      return checkFormat(seq, tools);
    };
    class Arguments {
      data_source = '$starting_table_var$';
    }
    expect(withCall((call) => (call.arguments = new Arguments()))).toMatchObject({ category: 'format:schema' });
    expect(withCall((call) => (call.arguments = new Map()))).toMatchObject({ category: 'format:schema' });
    expect(withCall((call) => (call.arguments = ['x']))).toMatchObject({ category: 'format:schema' });
    expect(withCall((call) => (call.arguments = { [Symbol('s')]: 1 }))).toMatchObject({ category: 'format:schema' });
    expect(withCall((call) => (call.name = ''))).toMatchObject({ category: 'format:schema' });
    const holed = valid();
    holed.calls.length = 4; // a hole after the three calls
    expect(checkFormat(holed, tools)).toMatchObject({ category: 'format:schema' });
    const holedLabels = valid();
    holedLabels.answerLabels = new Array<string>(1);
    expect(checkFormat(holedLabels, tools)).toMatchObject({ category: 'format:schema' });
    // A record zod accepts: no prototype at all.
    const bare = valid();
    bare.calls[1].arguments = Object.assign(Object.create(null) as Record<string, unknown>, bare.calls[1].arguments);
    expect(checkFormat(bare, tools)).toMatchObject({ ok: true, category: 'format_ok' });
  });

  it('format:duplicate_label, also across initialization and calls', () => {
    const seq = valid();
    seq.calls[1].label = 'cheap';
    expect(checkFormat(seq, tools)).toMatchObject({ ok: false, category: 'format:duplicate_label' });
    const seq2 = valid();
    seq2.calls[0].label = 'starting_table_var';
    expect(checkFormat(seq2, tools)).toMatchObject({ category: 'format:duplicate_label' });
  });

  it('format:unknown_tool', () => {
    const seq = valid();
    seq.calls[0].name = 'filter_rows';
    expect(checkFormat(seq, tools)).toMatchObject({ ok: false, category: 'format:unknown_tool' });
    const asCall = valid();
    asCall.calls.unshift({ ...structuredClone(init), label: 'again' });
    expect(checkFormat(asCall, tools)).toMatchObject({ category: 'format:unknown_tool' });
    const badInit = valid();
    badInit.initialization[0].name = 'filter_data';
    expect(checkFormat(badInit, tools)).toMatchObject({ category: 'format:unknown_tool' });
  });

  it('format:arguments for enums, required, types and additional properties', () => {
    const cases: [(s: SlotSequence) => void, string][] = [
      [(s) => (s.calls[0].arguments.condition = 'bigger'), 'allowed values'],
      [(s) => (s.calls[0].arguments.key_name = 'book_price'), 'book_price'],
      [(s) => delete s.calls[0].arguments.key_name, 'required property "key_name"'],
      [(s) => (s.calls[1].arguments.distinct = 'yes'), 'Expected "boolean"'],
      [(s) => (s.calls[1].arguments.limit = 2.5), 'Expected "integer"'],
      [(s) => (s.calls[1].arguments.extra = 1), 'unknown argument "extra"'],
      [(s) => (s.calls[2].arguments.operation_args = { operand: { value: 'ten' } }), 'operation_args.operand.value'],
    ];
    for (const [mutate, text] of cases) {
      const seq = valid();
      mutate(seq);
      const v = checkFormat(seq, tools);
      expect(v).toMatchObject({ ok: false, category: 'format:arguments' });
      expect(v.message).toContain(text);
    }
  });

  it('format:arguments for a malformed initialization', () => {
    const noJoin = valid();
    noJoin.initialization[0].arguments.joins = [];
    expect(checkFormat(noJoin, tools)).toMatchObject({ category: 'format:arguments' });
    const badType = valid();
    (badType.initialization[0].arguments.joins as { type: string }[])[0].type = 'outer';
    expect(checkFormat(badType, tools)).toMatchObject({ category: 'format:arguments' });
    const single = valid();
    single.initialization[0].arguments = { database: 'bookstore', tables: [{ alias: 'T1', table: 'book' }], joins: [] };
    expect(checkFormat(single, tools).ok).toBe(true);
  });

  it('format:reference for unknown, forward, self and nested references', () => {
    const unknown = valid();
    unknown.calls[1].arguments.data_source = '$nope$';
    expect(checkFormat(unknown, tools)).toMatchObject({ ok: false, category: 'format:reference' });
    const forward = valid();
    forward.calls[0].arguments.value = '$n$';
    expect(checkFormat(forward, tools)).toMatchObject({ category: 'format:reference' });
    const self = valid();
    self.calls[1].arguments.data_source = '$n$';
    expect(checkFormat(self, tools)).toMatchObject({ category: 'format:reference' });
    const nested = valid();
    nested.calls[2].arguments.operation_args = { operand: { value: '$later$' } };
    const v = checkFormat(nested, tools);
    expect(v).toMatchObject({ category: 'format:reference' });
    expect(v.message).toContain('arguments.operation_args.operand.value');
    const inList = valid();
    inList.calls[0].arguments = {
      data_source: '$starting_table_var$',
      key_name: 'book_title',
      condition: 'in',
      value: ['x', '$ghost.book_title$'],
    };
    expect(checkFormat(inList, tools)).toMatchObject({ category: 'format:reference' });
  });

  it('resolves $LABEL.key$ references with keys holding spaces and punctuation', () => {
    const seq = valid();
    seq.calls[2].arguments.value = '$cheap.book_Price (USD)$';
    expect(checkFormat(seq, tools).ok).toBe(true);
    // A dollar amount is a literal, not a reference.
    seq.calls[0].arguments.value = '$5';
    expect(checkFormat(seq, tools).ok).toBe(true);
  });

  it('format:answer', () => {
    const none = valid();
    none.answerLabels = [];
    expect(checkFormat(none, tools)).toMatchObject({ ok: false, category: 'format:answer' });
    const missing = valid();
    missing.answerLabels = ['pct', 'total'];
    expect(checkFormat(missing, tools)).toMatchObject({ category: 'format:answer' });
  });

  // Validators are compiled once per tool list; the time that saves is measured by `npm run bench` (bench/micro.ts).
  it('gives the same verdicts on repeated and copied tool lists', () => {
    const copy = structuredClone(tools);
    for (let i = 0; i < 200; i++) expect(checkFormat(valid(), i % 2 ? tools : copy).ok).toBe(true);
  });
});
