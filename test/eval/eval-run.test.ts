import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { EvalModel } from '../../eval/models/model.js';
import { writeCalls } from '../../eval/prompts.js';
import type { ModelSummary } from '../../eval/summary.js';
import { generateDemo, run, scoreOf as scoreOfItem, scripted } from './fixtures.js';

/**
 * `nl2api eval` end to end on the embedded demo: the oracle is perfect on every formulation
 * and mode (the harness's own consistency check), and scripted imperfect models with known
 * defects get the metric values and error categories worked out by hand below.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the oracle scores 1.0 everywhere', () => {
  for (const formulation of ['slot', 'sel', 'rest'] as const) {
    for (const mode of ['direct', 'react'] as const) {
      test(`${formulation}, ${mode}`, async () => {
        const result = await run(root, {
          formulation,
          mode,
          models: ['oracle', 'baseline:knn'],
          report: `oracle-${formulation}-${mode}`,
        });
        const [oracle, knn] = result.summary.models;
        expect(oracle.attempts).toBe(50);
        expect(oracle).toMatchObject({ failed: 0, fullSequenceMatch: 1, partialSequenceMatch: 1 });
        expect(oracle.completion.mean).toBe(1);
        expect(oracle.intentF1.mean).toBe(1);
        expect(oracle.slotF1.mean).toBe(1);
        expect(oracle.errors.none).toBe(oracle.attempts);
        // The baseline is real: it answers every item, and is far from perfect.
        expect(knn.scored).toBe(knn.attempts);
        expect(knn.completion.mean).toBeLessThan(0.5);
        const counts = Object.values(knn.errors).reduce((a, b) => a + b, 0);
        expect(counts).toBe(knn.scored);
        if (mode === 'react')
          expect(oracle.react).toEqual({ averageLoops: expect.any(Number), outOfBudgetRate: 0, stuckRate: 0 });
      }, 120_000);
    }
  }
});

/** The first bookstore sample: filter genre = 'Mystery' (FILTER_1), filter price < 10 (FILTER_2), retrieve title (SELECT_1). */
const ONE_ITEM = { dbIds: ['bookstore'], limit: 1 };

const scoreOf = (model: EvalModel, extra: Record<string, unknown> = {}) => scoreOfItem(root, ONE_ITEM, model, extra);

describe('scripted imperfect models get the hand-worked metrics', () => {
  test('one wrong value: intents all right, 10 of 11 slots, value_error, not completed', async () => {
    const model = scripted('wrong-value', (gold) =>
      JSON.stringify(gold.map((c, i) => (i === 0 ? { ...c, arguments: { ...c.arguments, value: 'Poetry' } } : c))),
    );
    const { line, summary } = await scoreOf(model);
    const scores = line.attempt!.scores;
    expect(scores.intent).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(scores.slot.precision).toBeCloseTo(10 / 11);
    expect(scores.slot.recall).toBeCloseTo(10 / 11);
    expect(scores.error).toBe('value_error');
    expect(scores.completed).toBe(false);
    expect(scores.answer.category).toBe('semantic:row_count');
    expect(scores.fullSequenceMatch).toBe(false);
    expect(scores.partialSequenceMatch).toBeCloseTo(2 / 3);
    expect(summary.errors.value_error).toBe(1);
  });

  test('one dropped call: intent P 1, R 2/3; slots of the matched calls all right; wrong_func_count; a bad reference', async () => {
    const model = scripted('dropped', (gold) => JSON.stringify(gold.filter((_, i) => i !== 1)));
    const { line } = await scoreOf(model);
    const scores = line.attempt!.scores;
    expect(scores.intent.precision).toBe(1);
    expect(scores.intent.recall).toBeCloseTo(2 / 3);
    expect(scores.intent.f1).toBeCloseTo(0.8);
    expect(scores.slot).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(scores.error).toBe('wrong_func_count');
    expect(scores.answer.category).toBe('execution:tool:bad_reference');
    expect(line.attempt!.steps.map((s) => s.ok)).toEqual([true, false]);
  });

  test('a hallucinated tool: hallucinated_func_name, intent 2/3, the runtime refuses the call', async () => {
    const model = scripted('hallucinated', (gold) =>
      JSON.stringify(gold.map((c, i) => (i === 2 ? { ...c, name: 'get_book_titles' } : c))),
    );
    const { line } = await scoreOf(model);
    const scores = line.attempt!.scores;
    expect(scores.intent.precision).toBeCloseTo(2 / 3);
    expect(scores.intent.recall).toBeCloseTo(2 / 3);
    expect(scores.error).toBe('hallucinated_func_name');
    expect(scores.answer.category).toBe('execution:tool:unknown_tool');
  });

  for (const formulation of ['slot', 'sel'] as const)
    test(`${formulation}: a reply that starts a table itself is refused that call, a scored attempt (not a fault of the run)`, async () => {
      const model = scripted(`starts-a-table-${formulation}`, (gold, turn) =>
        JSON.stringify([{ ...turn.item.initialization[0], label: 'MINE' }, ...gold]),
      );
      const { line } = await scoreOf(model, { formulation });
      expect(line.failure).toBeUndefined();
      expect(line.attempt!.steps).toHaveLength(1);
      expect(line.attempt!.steps[0]).toMatchObject({ ok: false, kind: 'tool:unknown_tool' });
      expect(line.attempt!.scores.answer.category).toBe('execution:tool:unknown_tool');
    });

  test('election stability with --repeats: the share of the elected answer; none without repeats', async () => {
    // Three repeats: the gold twice, then a wrong value; whitespace and key order do not make an answer another.
    const model = scripted('unsteady', (gold, turn) =>
      turn.repeat === 2
        ? JSON.stringify(gold.map((c, i) => (i === 0 ? { ...c, arguments: { ...c.arguments, value: 'Poetry' } } : c)))
        : JSON.stringify(
            gold.map((c) => ({ label: c.label, arguments: c.arguments, name: c.name })),
            null,
            turn.repeat,
          ),
    );
    const options = { ...ONE_ITEM, models: [model.id], extraModels: { [model.id]: model } };
    const repeated = await run(root, { ...options, repeats: 3, report: 'stability-3' });
    expect(repeated.summary.models[0].stability).toBeCloseTo(2 / 3);
    const once = await run(root, { ...options, report: 'stability-1' });
    expect(once.summary.models[0].stability).toBeUndefined();
  });

  test('prose instead of JSON: instruction_alignment_failure, all zero, never a crash', async () => {
    const { line, summary } = await scoreOf(scripted('prose', () => 'The only cheap mystery book is Winter Machine.'));
    const scores = line.attempt!.scores;
    expect(line.attempt!.parsed).toBeNull();
    expect(scores.error).toBe('instruction_alignment_failure');
    expect(scores.intent).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect(scores.slot).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect(scores.completed).toBe(false);
    expect(summary.completion.mean).toBe(0);
  });

  test('a ReAct agent that only writes prose: instruction_alignment_failure, as in direct mode', async () => {
    const model = scripted('react-prose', () => 'I think the answer is Winter Machine.');
    const { line } = await scoreOf(model, { mode: 'react', budget: 3 });
    expect(line.attempt!.react).toEqual({ turns: 3, budget: 3, answered: false });
    expect(line.attempt!.scores.error).toBe('instruction_alignment_failure');
  });

  test('Qwen-style <tool_call> blocks amid prose are read and score 1.0', async () => {
    const model = scripted('qwen-xml', (gold) => `Let me call the tools.\n${writeCalls('qwen', gold)}\nDone.`);
    const { line } = await scoreOf(model);
    expect(line.attempt!.via).toBe('tool_call_tags');
    expect(line.attempt!.scores).toMatchObject({ completed: true, error: null, fullSequenceMatch: true });
  });

  test('a looping ReAct agent: out of budget, stuck, 4 loops', async () => {
    const model = scripted('looping', (gold) => `Thought: filter first.\nAction: ${JSON.stringify(gold[0])}`);
    const { line, summary } = await scoreOf(model, { mode: 'react', budget: 4 });
    expect(line.attempt!.react).toEqual({ turns: 4, budget: 4, answered: false });
    expect(line.attempt!.scores.answer.category).toBe('out_of_budget');
    // The same call runs again and again, each output under a fresh handle (its label is taken).
    expect(line.attempt!.steps.map((s) => s.kind ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(line.attempt!.parsed!.map((c) => (c as { label: string }).label)).toEqual([
      'FILTER_1',
      'call_1',
      'call_2',
      'call_3',
    ]);
    expect(summary.react).toEqual({ averageLoops: 4, outOfBudgetRate: 1, stuckRate: 1 });
  });

  test('a ReAct agent that recovers from a tool error completes', async () => {
    const model = scripted('recovering', (gold, turn) => {
      const steps = [
        `Action: ${JSON.stringify({ ...gold[0], arguments: { ...gold[0].arguments, key_name: 'book_genres' } })}`,
        ...gold.map((c) => `Action: ${JSON.stringify(c)}`),
        'Final Answer: ["SELECT_1"]',
      ];
      return `Thought: step ${turn.step}.\n${steps[turn.step]}`;
    });
    const { line } = await scoreOf(model, { mode: 'react' });
    expect(line.attempt!.steps[0]).toMatchObject({ ok: false, kind: 'tool:unknown_key' });
    expect(line.attempt!.react).toEqual({ turns: 5, budget: 10, answered: true });
    expect(line.attempt!.scores.completed).toBe(true);
    // The failed first action counts against the sequence metrics: 4 calls made, 3 in the gold.
    expect(line.attempt!.scores.intent.precision).toBeCloseTo(3 / 4);
    expect(line.attempt!.scores.error).toBe('wrong_func_count');
  });

  test('obfuscated names are mapped back before the calls run and are scored', async () => {
    const seen: string[] = [];
    const model: EvalModel = {
      id: 'obfuscated-oracle',
      family: 'gpt',
      readsPrompt: true,
      respond: async (turn) => {
        seen.push(...turn.tools.map((t) => t.function.name));
        return { content: JSON.stringify(turn.item.goldCalls.map(turn.rename)), cached: false };
      },
    };
    const { line } = await scoreOf(model, { obfuscate: true, shortlist: 25 });
    expect(seen.every((name) => /^FUNC_\d+$/.test(name))).toBe(true);
    expect(line.attempt!.scores).toMatchObject({ completed: true, error: null });
    expect(line.attempt!.replies[0].content).toMatch(/FUNC_\d+/);
  });

  test('under --obfuscate the real names are refused, and no description tells them', async () => {
    let shown = '';
    const model = scripted('real-names', (gold, turn) => {
      shown = JSON.stringify(turn.tools);
      return JSON.stringify(gold);
    });
    const { line } = await scoreOf(model, { obfuscate: true });
    // Every tool and argument name of the universe is hidden, in names and in words.
    expect(shown).not.toMatch(/\b(filter_data|retrieve_data|sort_data|data_source|key_name)\b/);
    expect(shown).toMatch(/ARG_\d/);
    expect(line.attempt!.scores).toMatchObject({
      completed: false,
      error: 'hallucinated_func_name',
      matchedIntents: 0,
    });
    expect(line.attempt!.steps).toEqual([
      expect.objectContaining({
        ok: false,
        kind: 'tool:unknown_tool',
        call: expect.objectContaining({ name: 'filter_data' }),
      }),
    ]);
    // The right tools under the real argument names: those are not offered either.
    const realArgs = scripted('real-args', (gold, turn) =>
      JSON.stringify(gold.map((c) => ({ ...c, name: turn.rename(c).name }))),
    );
    const second = await scoreOf(realArgs, { obfuscate: true });
    // The real argument names leave the offered ones missing: BFCL's precedence names that first.
    expect(second.line.attempt!.scores).toMatchObject({ completed: false, error: 'missing_required_parameter' });
    expect(second.line.attempt!.steps[0].kind).toBe('tool:unknown_argument');
  });
});

describe('--sql-baseline', () => {
  test('the oracle writes the gold SQL: 1.0 beside its API score; the SQL lines are summarized apart', async () => {
    const result = await run(root, {
      models: ['oracle'],
      sqlBaseline: true,
      dbIds: ['cycling_club'],
      report: 'sql-oracle',
    });
    const [oracle] = result.summary.models;
    expect(oracle.attempts).toBe(22);
    expect(oracle.sqlBaseline).toEqual({ attempts: 22, failed: 0, completion: { mean: 1, low: 1, high: 1 } });
    expect(result.lines.filter((l) => l.kind === 'sql')).toHaveLength(22);
  });

  test('SQL that writes is refused before it runs; a fenced query is read out of prose', async () => {
    const writes = scripted('writes', () => 'DELETE FROM book');
    const { line } = await scoreOf(writes, { sqlBaseline: true });
    const sqlLine = (
      await run(root, {
        ...ONE_ITEM,
        models: ['writes'],
        extraModels: { writes },
        sqlBaseline: true,
        report: 'sql-writes',
      })
    ).lines.find((l) => l.kind === 'sql')!;
    expect(sqlLine.attempt!.scores.answer.category).toBe('execution:gold_error');
    expect(sqlLine.attempt!.scores.answer.message).toMatch(/not a read-only SELECT/);
    expect(line.kind).toBe('tools');
    const fenced = scripted('fenced', (_, turn) =>
      turn.mode === 'sql' ? `Here you go:\n\`\`\`sql\n${turn.item.sql};\n\`\`\`\nDone.` : '[]',
    );
    const result = await run(root, {
      ...ONE_ITEM,
      models: ['fenced'],
      extraModels: { fenced },
      sqlBaseline: true,
      report: 'sql-fenced',
    });
    expect(result.summary.models[0].sqlBaseline?.completion.mean).toBe(1);
  });
});

describe('report files', () => {
  test('results.jsonl has one line per attempt with its trace; summary.json the per-model table', async () => {
    const result = await run(root, { models: ['oracle', 'baseline:knn'], dbIds: ['cycling_club'], report: 'files' });
    const dir = path.join(root, 'files');
    const lines = readFileSync(path.join(dir, 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(result.lines.length);
    expect(lines[0]).toMatchObject({
      model: 'oracle',
      db: 'cycling_club',
      // The oracle reads no prompt: none is rendered, nothing to hash.
      attempt: { promptHash: null, steps: expect.any(Array) },
    });
    const summary = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    expect(summary.models.map((m: ModelSummary) => m.model)).toEqual(['oracle', 'baseline:knn']);
    expect(Object.keys(summary.models[0].byDatabase)).toEqual(['cycling_club']);
    expect(readFileSync(path.join(dir, 'index.html'), 'utf8')).toContain('<canvas id="errors">');
  });
});
