import { rmSync } from 'node:fs';
import type { ToolCall } from '../../core/model.js';
import type { EvalModel, ModelAnswer, Turn } from '../../eval/models/model.js';
import { generateDemoChains, run, scoreOf as scoreOfItem, scripted } from './fixtures.js';

/**
 * `nl2api eval --formulation chain` on the demo's chains: the oracle is perfect both ways, the
 * k-NN baseline is scored on every item, and scripted models with known defects get the hop
 * metrics and categories worked out by hand: above all, a model that makes hop 1 right and
 * carries the wrong value of its response into hop 2 is a `bridge_error`.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemoChains();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the oracle and the k-NN baseline', () => {
  for (const mode of ['direct', 'react'] as const)
    test(
      mode,
      async () => {
        const result = await run(root, {
          formulation: 'chain',
          mode,
          models: ['oracle', 'baseline:knn'],
          report: `chain-${mode}`,
        });
        const [oracle, knn] = result.summary.models;
        expect(oracle.attempts).toBeGreaterThan(10);
        expect(oracle).toMatchObject({ failed: 0, fullSequenceMatch: 1 });
        expect(oracle.completion.mean).toBe(1);
        expect(oracle.slotF1.mean).toBe(1);
        expect(oracle.errors.none).toBe(oracle.attempts);
        expect(oracle.chain!).toMatchObject({ hopAccuracy: [1, 1], hopIntent: [1, 1], hopSlot: [1, 1] });
        expect(oracle.chain!.errors.none).toBe(oracle.attempts);
        expect(Object.keys(oracle.chain!.byHops)).toEqual(['2 hops']);
        // The baseline follows its neighbour's chain (references with its transforms): scored on every item, far from perfect.
        expect(knn.scored).toBe(knn.attempts);
        expect(knn.completion.mean).toBeLessThan(1);
        expect(Object.values(knn.errors).reduce((a, b) => a + b, 0)).toBe(knn.scored);
        expect(Object.values(knn.chain!.errors).reduce((a, b) => a + b, 0)).toBe(knn.scored);
        // Written as `$call_0.<field>|<transform>$`, read as the label the first call took (the gold's, HOP1).
        const knnLines = result.lines.filter((l) => l.model === 'baseline:knn');
        const referenced = knnLines.flatMap((l) => l.attempt!.parsed ?? []) as ToolCall[];
        expect(referenced.some((c) => Object.values(c.arguments).some((v) => /^\$HOP1\.\w+\|/.test(String(v))))).toBe(
          true,
        );
      },
      120_000,
    );
});

/**
 * The first bookstore chain: hop 1 lists the publishers of France, Germany and Spain (five:
 * Actes Sud … Suhrkamp), hop 2 takes the alphabetically last (Suhrkamp) as its publisher_name.
 */
const FIRST_CHAIN = { formulation: 'chain' as const, dbIds: ['bookstore'], limit: 1 };

const scoreOf = (model: EvalModel, extra: Record<string, unknown> = {}) => scoreOfItem(root, FIRST_CHAIN, model, extra);

const withArgument = (call: ToolCall, value: unknown): ToolCall => ({
  ...call,
  arguments: { ...call.arguments, publisher_name: value },
});

describe('scripted chain attempts', () => {
  test('the dataset item is the one these tests were worked out on', async () => {
    const { line } = await scoreOf(scripted('gold', (gold) => JSON.stringify(gold)));
    expect(line.goldCalls).toMatchObject([
      { name: 'getPublisherNameByCountry', arguments: { country: 'France', country_2: 'Germany', country_3: 'Spain' } },
      { name: 'getPercentagePageCountByPublisherName', arguments: { publisher_name: 'Suhrkamp' } },
    ]);
    expect(line.attempt!.scores).toMatchObject({ completed: true, error: null, chain: { hops: [true, true] } });
  });

  test('direct, the value carried by a reference with its transform: completed, scored as the value it carried', async () => {
    const model = scripted('reference', (gold) =>
      JSON.stringify([gold[0], withArgument(gold[1], '$call_0.publisher_name|alphabetical_last$')]),
    );
    const { line } = await scoreOf(model);
    expect(line.attempt!.steps[1].call).toMatchObject({ arguments: { publisher_name: 'Suhrkamp' } });
    // As read: the reference names the first call by the label it took (the gold's, HOP1).
    expect(line.attempt!.parsed![1]).toMatchObject({
      arguments: { publisher_name: '$HOP1.publisher_name|alphabetical_last$' },
    });
    expect(line.attempt!.scores).toMatchObject({
      completed: true,
      error: null,
      slot: { f1: 1 },
      chain: { hops: [true, true], error: null },
    });
  });

  test('direct, hop 1 right and the wrong row carried into hop 2: bridge_error', async () => {
    const model = scripted('wrong-transform', (gold) =>
      JSON.stringify([gold[0], withArgument(gold[1], '$call_0.publisher_name|alphabetical_first$')]),
    );
    const { line, summary } = await scoreOf(model);
    expect(line.attempt!.steps[1].call).toMatchObject({ arguments: { publisher_name: 'Actes Sud' } });
    const scores = line.attempt!.scores;
    expect(scores.completed).toBe(false);
    expect(scores.error).toBe('bridge_error');
    expect(scores.chain).toEqual({
      hops: [true, false],
      perHop: [
        { intent: true, slot: 1 },
        { intent: true, slot: 0 },
      ],
      error: { hop: 2, kind: 'bridge_error' },
    });
    expect(summary.errors.bridge_error).toBe(1);
    expect(summary.chain!.errors.bridge_error).toBe(1);
    expect(summary.chain!.hopAccuracy).toEqual([1, 0]);
  });

  test('ReAct, hop 1 right, then the first row it read carried as a literal: bridge_error', async () => {
    const model = scripted('react-first-row', (gold, turn) => {
      if (turn.step === 0) return `Thought: publishers first.\nAction: ${JSON.stringify(gold[0])}`;
      if (turn.step === 1) {
        // The observation as the agent read it: the rows of hop 1, under its handle.
        const observed = JSON.parse(
          String(turn.messages[turn.messages.length - 1].content).replace(/^Observation: /, ''),
        );
        const firstRow = (observed.output as { publisher_name: string }[])[0].publisher_name;
        return `Thought: take one.\nAction: ${JSON.stringify(withArgument(gold[1], firstRow))}`;
      }
      return `Thought: done.\nFinal Answer: ${gold[1].name}`;
    });
    const { line } = await scoreOf(model, { mode: 'react' });
    expect(line.attempt!.react).toEqual({ turns: 3, budget: 10, answered: true });
    expect(line.attempt!.steps.map((s) => s.ok)).toEqual([true, true]);
    expect(line.attempt!.scores).toMatchObject({
      completed: false,
      error: 'bridge_error',
      chain: { hops: [true, false], error: { hop: 2, kind: 'bridge_error' } },
    });
  });

  test('a reference that makes no single value is the model’s error, told as a tool error', async () => {
    const ambiguous = scripted('no-transform', (gold) =>
      JSON.stringify([gold[0], withArgument(gold[1], '$call_0.publisher_name$')]),
    );
    const { line } = await scoreOf(ambiguous);
    expect(line.attempt!.steps[1]).toMatchObject({ ok: false, kind: 'tool:bad_reference' });
    expect(JSON.stringify(line.attempt!.steps[1].observation)).toMatch(/value makes no single value of the 5 value/);
    expect(line.attempt!.scores.answer.category).toBe('execution:tool:bad_reference');
    const unknown = scripted('unknown-transform', (gold) =>
      JSON.stringify([gold[0], withArgument(gold[1], '$call_0.publisher_name|median$')]),
    );
    const refused = await scoreOf(unknown);
    expect(JSON.stringify(refused.line.attempt!.steps[1].observation)).toMatch(/unknown transform \\"median\\"/);
  });

  test('hop 1 with a wrong value: wrong_arguments at hop 1, whatever follows', async () => {
    const model = scripted('wrong-country', (gold) =>
      JSON.stringify([
        { ...gold[0], arguments: { ...gold[0].arguments, country_3: 'Italy' } },
        withArgument(gold[1], '$call_0.publisher_name|alphabetical_last$'),
      ]),
    );
    const { line } = await scoreOf(model);
    expect(line.attempt!.scores).toMatchObject({
      error: 'value_error',
      chain: { hops: [false, expect.any(Boolean)], error: { hop: 1, kind: 'wrong_arguments' } },
    });
  });

  test('hop 2 never made: missing_hop, the first hop’s response is no answer', async () => {
    const { line } = await scoreOf(scripted('one-hop', (gold) => JSON.stringify([gold[0]])));
    expect(line.attempt!.scores).toMatchObject({
      completed: false,
      error: 'wrong_func_count',
      chain: {
        hops: [true, false],
        perHop: [{ intent: true }, { intent: false, slot: 0 }],
        error: { hop: 2, kind: 'missing_hop' },
      },
    });
  });
});

describe('as a real model sends them: native tool calls with ids, no labels', () => {
  /** A model that calls tools natively, each call carrying the provider's id and no label. */
  function native(id: string, turns: (gold: ToolCall[], turn: Turn) => ModelAnswer): EvalModel {
    return { id, family: 'gpt', readsPrompt: true, respond: async (turn) => turns(turn.item.goldCalls, turn) };
  }
  const call = (c: ToolCall, id: string, args = c.arguments) => ({ name: c.name, args, id });

  test('ReAct: hop 2 refers to hop 1 by its tool call id, with a transform; completed and scored as the value it carried', async () => {
    const model = native('native-react', (gold, turn) => {
      if (turn.step === 0) return { content: '', toolCalls: [call(gold[0], 'call_Xa81')], cached: false };
      if (turn.step === 1)
        return {
          content: '',
          toolCalls: [call(gold[1], 'call_Qz07', { publisher_name: '$call_Xa81.publisher_name|alphabetical_last$' })],
          cached: false,
        };
      return { content: 'The share is about a third.', cached: false };
    });
    const { line } = await scoreOf(model, { mode: 'react', tools: 'native' });
    expect(line.attempt!.steps.map((s) => s.ok)).toEqual([true, true]);
    expect(line.attempt!.steps[1].call).toMatchObject({ arguments: { publisher_name: 'Suhrkamp' } });
    expect(line.attempt!.scores).toMatchObject({ completed: true, error: null, chain: { hops: [true, true] } });
  });

  test('direct: both hops in one reply, the second naming the first by its id; the wrong transform is a bridge_error', async () => {
    const model = native('native-direct', (gold) => ({
      content: '',
      toolCalls: [
        call(gold[0], 'toolu_01'),
        call(gold[1], 'toolu_02', { publisher_name: '$toolu_01.publisher_name|alphabetical_first$' }),
      ],
      cached: false,
    }));
    const { line } = await scoreOf(model, { tools: 'native' });
    expect(line.attempt!.steps[1].call).toMatchObject({ arguments: { publisher_name: 'Actes Sud' } });
    expect(line.attempt!.scores).toMatchObject({ completed: false, error: 'bridge_error' });
  });
});
