import type { ToolCall, ToolSpec } from '../../core/model.js';
import { alignCalls, alignSequences, precisionRecall } from '../../eval/metrics/alignment.js';
import { bfclCategory } from '../../eval/metrics/bfcl.js';
import { mulberry32 } from '../../core/random.js';
import { bootstrapInterval } from '../../eval/metrics/bootstrap.js';
import { reactStats } from '../../eval/metrics/react.js';
import { sequenceMatch } from '../../eval/metrics/sequence.js';
import { electionStability } from '../../eval/metrics/stability.js';

/** The evaluation metrics on examples worked out by hand (the expected numbers are in the comments). */

const call = (name: string, label: string, args: Record<string, unknown>): ToolCall => ({
  name,
  label,
  arguments: args,
});
const S = '$starting_table_var$';

// Gold: filter, then retrieve from the filter's output.
const gold = [
  call('filter_data', 'FILTER_1', { data_source: S, key_name: 'city', condition: 'equal_to', value: 'Oslo' }),
  call('retrieve_data', 'SELECT_1', { data_source: '$FILTER_1$', key_name: 'name', distinct: false }),
];

describe('intent and slot metrics', () => {
  test('a perfect answer under other labels scores 1 everywhere', () => {
    const predicted = [
      call('filter_data', 'f', { data_source: S, key_name: 'city', condition: 'equal_to', value: 'Oslo' }),
      call('retrieve_data', 'r', { data_source: '$f$', key_name: 'name', distinct: false }),
    ];
    const { intent, slot } = alignSequences(predicted, gold);
    expect(intent).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(slot).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(sequenceMatch(predicted, gold)).toEqual({ full: true, partial: 1 });
  });

  test('one wrong value, one extra call', () => {
    const predicted = [
      call('sort_data', 's', { data_source: S, key_name: 'city', ascending: true }),
      call('filter_data', 'f', { data_source: '$s$', key_name: 'city', condition: 'equal_to', value: 'Rome' }),
      call('retrieve_data', 'r', { data_source: '$f$', key_name: 'name', distinct: false }),
    ];
    const { pairs, intent, slot } = alignSequences(predicted, gold);
    expect(pairs).toEqual([
      [1, 0],
      [2, 1],
    ]);
    // Intents: 2 matched of 3 predicted and 2 gold: P 2/3, R 1, F1 0.8.
    expect(intent.precision).toBeCloseTo(2 / 3);
    expect(intent.recall).toBe(1);
    expect(intent.f1).toBeCloseTo(0.8);
    // Slots of the matched calls: filter 4 predicted, right: key_name, condition (data_source
    // points at the sort, value differs) = 2; retrieve 3 of 3 right ($f$ is FILTER_1). 5/7 both ways.
    expect(slot.precision).toBeCloseTo(5 / 7);
    expect(slot.recall).toBeCloseTo(5 / 7);
    // NESTFUL: only the retrieve matches exactly: partial 1/2, not full.
    expect(sequenceMatch(predicted, gold)).toEqual({ full: false, partial: 0.5 });
  });

  test('repeated tools count per invocation, in order', () => {
    const named = (...names: string[]) => names.map((n, i) => call(n, `L${i}`, {}));
    expect(alignCalls(named('a', 'b', 'a'), named('a', 'a'))).toEqual([
      [0, 0],
      [2, 1],
    ]);
    expect(alignCalls(named('b', 'a'), named('a', 'b'))).toHaveLength(1);
    // Equally long, equally good: the earliest.
    expect(alignCalls(named('a'), named('a', 'a'))).toEqual([[0, 0]]);
    // A dropped call: nothing predicted for the retrieve.
    const { intent } = alignSequences([gold[0]], gold);
    expect(intent).toEqual({ precision: 1, recall: 0.5, f1: 2 / 3 });
  });

  // Gold: sort by year, then by name, then retrieve.
  const sortTwice = [
    call('sort_data', 'SORT_1', { data_source: S, key_name: 'year', ascending: true }),
    call('sort_data', 'SORT_2', { data_source: '$SORT_1$', key_name: 'name', ascending: true }),
    call('retrieve_data', 'SELECT_1', { data_source: '$SORT_2$', key_name: 'name', distinct: false }),
  ];

  test('of equally long alignments, the one with more equal arguments', () => {
    // The first sort misnamed: the second sort can pair with either gold sort (2 intents both
    // ways); with SORT_2 its three arguments agree (its input is the misnamed call's output,
    // which stands for SORT_1), with SORT_1 only `ascending`.
    const predicted = [
      call('fetch_everything_now', 'call_0', { data_source: S, key_name: 'year', ascending: true }),
      call('sort_data', 'call_1', { data_source: '$call_0$', key_name: 'name', ascending: true }),
      call('retrieve_data', 'call_2', { data_source: '$call_1$', key_name: 'name', distinct: false }),
    ];
    const { pairs, intent, slot } = alignSequences(predicted, sortTwice);
    expect(pairs).toEqual([
      [1, 1],
      [2, 2],
    ]);
    // Intents 2 of 3 both ways; slots 6 of 6 predicted, 6 of 6 gold on the matched calls.
    expect(intent.f1).toBeCloseTo(2 / 3);
    expect(slot).toEqual({ precision: 1, recall: 1, f1: 1 });
  });

  test('the arguments decide even when the better pair comes first', () => {
    // One sort predicted, by name: it is gold's second sort, not the earliest one.
    const predicted = [
      call('sort_data', 'a', { data_source: S, key_name: 'name', ascending: true }),
      call('retrieve_data', 'b', { data_source: '$a$', key_name: 'name', distinct: false }),
    ];
    expect(alignCalls(predicted, sortTwice)).toEqual([
      [0, 1],
      [1, 2],
    ]);
    // sort: key_name and ascending right, data_source not (S is not SORT_1's output): 2 of 3;
    // retrieve: 3 of 3. Slots 5/6 both ways.
    const { slot } = alignSequences(predicted, sortTwice);
    expect(slot.precision).toBeCloseTo(5 / 6);
    expect(slot.recall).toBeCloseTo(5 / 6);
  });

  test('references to an unmatched call stand for the gold call at its place', () => {
    // Every call renamed but the last: the retrieve still reads the output that stands for SORT_2.
    const predicted = [
      call('order_rows', 'x', { data_source: S, key_name: 'year', ascending: true }),
      call('order_rows', 'y', { data_source: '$x$', key_name: 'name', ascending: true }),
      call('retrieve_data', 'z', { data_source: '$y$', key_name: 'name', distinct: false }),
    ];
    const { pairs, labels, slot } = alignSequences(predicted, sortTwice);
    expect(pairs).toEqual([[2, 2]]);
    expect([...labels]).toEqual([
      ['x', 'SORT_1'],
      ['y', 'SORT_2'],
      ['z', 'SELECT_1'],
    ]);
    expect(slot).toEqual({ precision: 1, recall: 1, f1: 1 });
  });

  test('empty sides', () => {
    expect(precisionRecall(0, 0, 0)).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(precisionRecall(0, 0, 2)).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect(alignSequences([], gold).intent).toEqual({ precision: 0, recall: 0, f1: 0 });
  });
});

describe('BFCL error categories, first match in precedence order', () => {
  const tool = (name: string, properties: string[], required: string[]): ToolSpec => ({
    type: 'function',
    function: {
      name,
      description: name,
      parameters: { type: 'object', properties: Object.fromEntries(properties.map((p) => [p, {}])), required },
    },
  });
  const tools = [
    tool('filter_data', ['data_source', 'key_name', 'condition', 'value'], ['data_source', 'key_name', 'condition']),
    tool('retrieve_data', ['data_source', 'key_name', 'distinct', 'limit'], ['data_source', 'key_name']),
    tool('sort_data', ['data_source', 'key_name', 'ascending'], ['data_source', 'key_name']),
  ];
  const right = () => [
    call('filter_data', 'f', { data_source: S, key_name: 'city', condition: 'equal_to', value: 'Oslo' }),
    call('retrieve_data', 'r', { data_source: '$f$', key_name: 'name', distinct: false }),
  ];
  const category = (edit: (calls: ToolCall[]) => unknown[] | null) => bfclCategory(edit(right()), gold, tools);

  test.each([
    ['no error', (c: ToolCall[]) => c, null],
    ['prose instead of calls', () => null, 'instruction_alignment_failure'],
    ['a dropped call', (c: ToolCall[]) => c.slice(0, 1), 'wrong_func_count'],
    [
      'arguments as a list',
      (c: ToolCall[]) => [c[0], { name: 'retrieve_data', arguments: ['x'] }],
      'wrong_func_format',
    ],
    ['a tool that does not exist', (c: ToolCall[]) => [c[0], { ...c[1], name: 'get_names' }], 'hallucinated_func_name'],
    ['another real tool', (c: ToolCall[]) => [c[0], { ...c[1], name: 'sort_data' }], 'wrong_func_name'],
    [
      'a required parameter missing',
      (c: ToolCall[]) => [c[0], { ...c[1], arguments: { data_source: '$f$' } }],
      'missing_required_parameter',
    ],
    [
      'an undeclared argument',
      (c: ToolCall[]) => [c[0], { ...c[1], arguments: { ...c[1].arguments, order: 'asc' } }],
      'unexpected_param',
    ],
    [
      'one wrong value',
      (c: ToolCall[]) => [{ ...c[0], arguments: { ...c[0].arguments, value: 'Rome' } }, c[1]],
      'value_error',
    ],
    [
      'a reference to the wrong call',
      (c: ToolCall[]) => [c[0], { ...c[1], arguments: { ...c[1].arguments, data_source: S } }],
      'value_error',
    ],
  ] as const)('%s', (_, edit, expected) => {
    expect(category(edit as (calls: ToolCall[]) => unknown[] | null)).toBe(expected);
  });

  test('a hallucinated name outranks a missing parameter elsewhere', () => {
    const calls = [
      { name: 'filter_data', label: 'f', arguments: { data_source: S } },
      { name: 'fetch', label: 'r', arguments: {} },
    ];
    expect(bfclCategory(calls, gold, tools)).toBe('hallucinated_func_name');
  });
});

describe('ReAct loop statistics', () => {
  const same = { name: 'filter_data', arguments: { key_name: 'city', value: 'Oslo' } };
  test('average loops, out of budget, stuck', () => {
    const stats = reactStats([
      { turns: 3, budget: 10, answered: true, completed: true, calls: [same, same] }, // repeats, but succeeded
      { turns: 10, budget: 10, answered: false, completed: false, calls: [same, same, same] }, // out of budget, stuck
      {
        turns: 5,
        budget: 10,
        answered: true,
        completed: false,
        calls: [same, { ...same, arguments: { key_name: 'x' } }],
      },
      { turns: 2, budget: 10, answered: true, completed: false, calls: [same] },
    ]);
    expect(stats.averageLoops).toBe(5); // (3 + 10 + 5 + 2) / 4
    expect(stats.outOfBudgetRate).toBe(0.25);
    expect(stats.stuckRate).toBe(0.25);
  });
});

test('election stability: the share of the elected answer, averaged over items', () => {
  // Item 1: a, a, b → 2/3; item 2: x, x, x → 1; item 3: p, q, r → 1/3. Mean 2/3.
  expect(
    electionStability([
      ['a', 'a', 'b'],
      ['x', 'x', 'x'],
      ['p', 'q', 'r'],
    ]),
  ).toBeCloseTo(2 / 3);
  expect(electionStability([])).toBe(0);
});

describe('bootstrap confidence interval', () => {
  test('seeded: the same interval every time, around the mean', () => {
    const values = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 0 : 1)); // mean 0.75
    const a = bootstrapInterval(values);
    expect(bootstrapInterval(values)).toEqual(a);
    expect(a.mean).toBe(0.75);
    expect(a.low).toBeLessThan(0.75);
    expect(a.high).toBeGreaterThan(0.75);
    // The standard error of a 0.75 rate over 200 items is ~0.031: the 95% interval is ~±0.06.
    expect(a.high - a.low).toBeGreaterThan(0.08);
    expect(a.high - a.low).toBeLessThan(0.16);
  });

  test("the resamples are mulberry32(seed)'s draws, in order: the interval of a plain resampling loop", () => {
    const random = mulberry32(9);
    const values = Array.from({ length: 97 }, () => Math.round(random() * 3) / 3);
    const draw = mulberry32(5);
    const means = Array.from({ length: 300 }, () => {
      let sum = 0;
      for (let i = 0; i < values.length; i++) sum += values[Math.floor(draw() * values.length)];
      return sum / values.length;
    }).sort((a, b) => a - b);
    expect(bootstrapInterval(values, { resamples: 300, seed: 5, level: 0.9 })).toEqual({
      mean: values.reduce((a, b) => a + b, 0) / values.length,
      low: means[Math.floor(((1 - 0.9) / 2) * 300)],
      high: means[Math.floor(((1 + 0.9) / 2) * 300)],
    });
  });

  test('constant values have a zero-width interval; no values, all zeros', () => {
    expect(bootstrapInterval([1, 1, 1])).toEqual({ mean: 1, low: 1, high: 1 });
    // Exactly the mean, as every resample's would be: 0.1 summed 37 times is not 3.7.
    const tenths = Array.from({ length: 37 }, () => 0.1);
    const mean = tenths.reduce((a, b) => a + b, 0) / 37;
    expect(mean).not.toBe(0.1);
    expect(bootstrapInterval(tenths)).toEqual({ mean, low: mean, high: mean });
    expect(bootstrapInterval([])).toEqual({ mean: 0, low: 0, high: 0 });
  });
});
