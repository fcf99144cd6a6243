import { describe, expect, test } from '@jest/globals';
import type { GoldResult } from '../../core/model.js';
import { createLlmJudge } from '../../verifiers/llm-judge.js';
import type { JudgeInput } from '../../verifiers/judge.js';
import { httpError, ScriptedChatModel, scriptedClient, type Step } from '../llm/helpers.js';

const gold: GoldResult = {
  columns: ['title'],
  rows: [['Dune'], ['Emma']],
  executedSql: 'SELECT title FROM book WHERE price > 20',
  ordered: false,
  distinct: false,
};

const input: JudgeInput = {
  question: 'Which books cost more than 20 dollars?',
  evidence: 'cost refers to price',
  gold,
  response: {
    columns: ['title', 'price'],
    rows: [
      ['Dune', 25],
      ['Emma', 31.5],
    ],
  },
};

function judgeWith(steps: Step[]) {
  const { model, client } = scriptedClient(steps, { maxRetries: 1 });
  return { judge: createLlmJudge(client, { providerLabel: 'mistral/test-model' }), model };
}

const text = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));
const userPrompt = (model: ScriptedChatModel, call = 0): string => text(model.received[call][1].content);

describe('createLlmJudge', () => {
  test('yes → semantic:judge_yes with the rationale recorded', async () => {
    const { judge, model } = judgeWith([
      '{"verdict": "yes", "rationale": "Same titles; the price column only adds context."}',
    ]);
    const verdict = await judge.judge(input);
    expect(verdict).toEqual({
      ok: true,
      category: 'semantic:judge_yes',
      message: 'judge: yes — Same titles; the price column only adds context.',
      rationale: 'Same titles; the price column only adds context.',
    });
    expect(judge.name).toBe('llm:mistral/test-model');
    expect(model.calls).toBe(1);
  });

  test('no → semantic:judge_no, not ok', async () => {
    const { judge } = judgeWith(['{"verdict": "No", "rationale": "Emma is missing."}']);
    expect(await judge.judge(input)).toMatchObject({
      ok: false,
      category: 'semantic:judge_no',
      rationale: 'Emma is missing.',
      message: expect.stringContaining('Emma is missing.'),
    });
  });

  test('a fenced reply with prose around it is read', async () => {
    const { judge } = judgeWith(['Here is my verdict:\n```json\n{"verdict": "yes", "rationale": "ok"}\n```']);
    expect(await judge.judge(input)).toMatchObject({ ok: true, category: 'semantic:judge_yes' });
  });

  test('an unreadable reply gets one retry with feedback', async () => {
    const { judge, model } = judgeWith(['I think yes.', '{"verdict": "yes", "rationale": "ok"}']);
    expect(await judge.judge(input)).toMatchObject({ ok: true, category: 'semantic:judge_yes' });
    expect(model.calls).toBe(2);
    expect(model.received[1].map((m) => m.type)).toEqual(['system', 'human', 'ai', 'human']);
    expect(text(model.received[1][3].content)).toContain('rejected');
  });

  test('invalid JSON twice → semantic:judge_failed', async () => {
    const { judge, model } = judgeWith(['I think yes.', 'Still yes.']);
    const verdict = await judge.judge(input);
    expect(verdict).toEqual({
      ok: false,
      category: 'semantic:judge_failed',
      message: expect.stringMatching(/^llm:invalid_json: /),
      rationale: '',
    });
    expect(model.calls).toBe(2);
  });

  test('a reply off the schema twice → semantic:judge_failed with llm:schema', async () => {
    const { judge } = judgeWith(['{"verdict": "maybe", "rationale": "?"}']);
    expect(await judge.judge(input)).toMatchObject({
      category: 'semantic:judge_failed',
      message: expect.stringMatching(/^llm:schema: /),
    });
  });

  test.each([
    ['timeout', Object.assign(new Error('slow'), { name: 'TimeoutError' }), 'llm:timeout'],
    ['HTTP 500', httpError(500), 'llm:server_error'],
  ])("%s after the client's retries → semantic:judge_failed, no retry of its own", async (_, error, category) => {
    const { judge, model } = judgeWith([error]);
    const verdict = await judge.judge(input);
    expect(verdict).toMatchObject({ ok: false, category: 'semantic:judge_failed', rationale: '' });
    expect(verdict.message.startsWith(`${category}: `)).toBe(true);
    expect(model.calls).toBe(2); // the client's maxRetries: 1
  });

  test('the prompt shows question, evidence, ground truth and response', async () => {
    const { judge, model } = judgeWith(['{"verdict": "yes", "rationale": "ok"}']);
    await judge.judge(input);
    const prompt = userPrompt(model);
    expect(prompt).toContain('Which books cost more than 20 dollars?');
    expect(prompt).toContain('cost refers to price');
    expect(prompt).toContain('2 row(s) × 1 column(s); row order does not matter');
    expect(prompt).toContain('columns: ["title"]\n["Dune"]\n["Emma"]');
    expect(prompt).toContain('columns: ["title","price"]\n["Dune",25]\n["Emma",31.5]');
    expect(text(model.received[0][0].content)).toContain('"verdict"');
  });

  test('huge results are cut to their first rows and a count; a sentence is shown as it is', async () => {
    const { judge, model } = judgeWith(['{"verdict": "no", "rationale": "not a table"}']);
    const rows = Array.from({ length: 120 }, (_, i) => [`book ${i}`]);
    await judge.judge({ ...input, gold: { ...gold, rows, ordered: true }, response: 'There are many books.' });
    const prompt = userPrompt(model);
    expect(prompt).toContain('["book 49"]');
    expect(prompt).not.toContain('["book 50"]');
    expect(prompt).toContain('(120 rows in total, the first 50 shown)');
    expect(prompt).toContain('row order matters');
    expect(prompt).toContain('"There are many books."');
  });

  test('the same input again is answered from the cache', async () => {
    const { judge, model } = judgeWith([
      '{"verdict": "yes", "rationale": "ok"}',
      '{"verdict": "no", "rationale": "changed"}',
    ]);
    const first = await judge.judge(input);
    expect(await judge.judge(input)).toEqual(first);
    expect(model.calls).toBe(1);
  });

  test('the fingerprint holds the prompt texts and the label', () => {
    const { judge } = judgeWith(['x']);
    expect(judge.fingerprint).toEqual({
      system: expect.stringContaining('answer judge'),
      user: expect.stringContaining('{{response}}'),
      providerLabel: 'mistral/test-model',
    });
  });
});
