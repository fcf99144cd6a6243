import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { TransientError } from '../../core/outcome.js';
import { linkPhrase } from '../../generators/chain/question.js';
import { llmWriter, templateWriter, type QuestionRequest } from '../../generators/chain/question-writer.js';
import { generate } from '../../pipeline/generate.js';
import { DEMO_SOURCE } from '../eval/fixtures.js';
import { httpError, ScriptedChatModel, scriptedClient, type Step } from '../llm/helpers.js';

/**
 * The chain questions' writers: the template, and an LLM through the LLM layer that is held
 * to the same checks (no bridge value, no answer value, every first-hop value), asked again
 * once with the finding, judged when asked to be, and replaced by the template when it cannot
 * be used; a provider that never answers is a fault of the run, not the chain's verdict.
 */

const request: QuestionRequest = {
  first: {
    question: 'Which publishers have their head office in France?',
    evidence: '',
    args: { country: 'France' },
  },
  hops: [
    { endpoint: { summary: 'Get publisher names by country' } },
    {
      endpoint: { summary: 'Get the number of books by publisher name' },
      link: { field: 'publisher_name', param: 'publisher_name', transform: 'alphabetical_last' },
    },
  ],
  bridges: ['Gallimard'],
  answer: [[12]],
};

const GOOD = 'How many books did the alphabetically last of the publishers with a head office in France publish?';
const reply = (question: string) => JSON.stringify({ question });

function writer(steps: Step[], judge = false) {
  const { model, client } = scriptedClient(steps, { maxRetries: 0 });
  return { model, writer: llmWriter(client, { providerLabel: 'test/test-model', judge }) };
}

test('the template: the first question, then each link in words', async () => {
  const written = await templateWriter.write(request);
  expect(written).toEqual({
    ok: true,
    value: {
      question:
        'Which publishers have their head office in France? Then take the alphabetically last publisher name it lists and use it as the publisher name to get the number of books by publisher name.',
      components: [request.first.question, 'Get the number of books by publisher name'],
      writer: 'template',
    },
  });
});

test('an LLM question that passes the checks is kept, its writer named; the prompt hides the bridge and the answer', async () => {
  const { model, writer: llm } = writer([reply(GOOD)]);
  const written = await llm.write(request);
  expect(written).toMatchObject({ ok: true, value: { question: GOOD, writer: 'llm:test/test-model' } });
  expect(model.calls).toBe(1);
  const prompt = model.received[0].map((m) => m.text).join('\n');
  expect(prompt).toContain('Values the question must not contain: "Gallimard", 12');
  expect(prompt).toContain('take the alphabetically last publisher name it lists and use it as the publisher name');
});

test('a question that says the bridge value is asked again with the finding; the second is kept', async () => {
  const { model, writer: llm } = writer([reply('How many books did Gallimard publish?'), reply(GOOD)]);
  const written = await llm.write(request);
  expect(written).toMatchObject({ ok: true, value: { question: GOOD } });
  expect(model.calls).toBe(2);
  expect(model.received[1].at(-1)!.text).toMatch(
    /cannot be used: the question says "Gallimard", a value one hop passes/,
  );
});

test('two unusable replies (a leak, then a missing first-hop value): the template writes it, and says why', async () => {
  const { writer: llm } = writer([reply('Count the books of Gallimard.'), reply('How many books of that publisher?')]);
  const written = await llm.write(request);
  expect(written).toMatchObject({
    ok: true,
    value: { writer: 'template', fallback: expect.stringMatching(/^insufficient_context: the first hop's country/) },
  });
});

test('a reply that is not JSON, then a leak of the answer: the template, the reason the last one', async () => {
  const { writer: llm } = writer(['I would ask about the French publishers.', reply(`Is it 12 books? ${GOOD}`)]);
  const written = await llm.write(request);
  expect(written).toMatchObject({
    ok: true,
    value: { writer: 'template', fallback: expect.stringMatching(/^leaks_answer/) },
  });
});

test('with the judge: an unfaithful question is asked again; a faithful one is kept', async () => {
  const no = JSON.stringify({ verdict: 'no', rationale: 'it drops the alphabetical choice' });
  const yes = JSON.stringify({ verdict: 'yes', rationale: 'same steps' });
  const { model, writer: llm } = writer(
    [reply('How many books did publishers in France publish?'), no, reply(GOOD), yes],
    true,
  );
  const written = await llm.write(request);
  expect(written).toMatchObject({ ok: true, value: { question: GOOD, writer: 'llm:test/test-model' } });
  expect(model.calls).toBe(4);
  expect(model.received[2].at(-1)!.text).toMatch(/unfaithful to the chain: it drops the alphabetical choice/);
  expect(llm.fingerprint).not.toEqual(writer([], false).writer.fingerprint);
});

test('a provider that never answers is thrown as transient (nothing of it is cached)', async () => {
  const { writer: llm } = writer([httpError(503)]);
  await expect(llm.write(request)).rejects.toBeInstanceOf(TransientError);
});

test('a question the template would leak is refused by category, whoever writes', async () => {
  const leaking = {
    ...request,
    first: { ...request.first, question: 'Which publishers, Gallimard among them, are in France?' },
  };
  expect(await templateWriter.write(leaking)).toMatchObject({ ok: false, category: 'question:leaks_bridge' });
});

describe('generate with an LLM writer (a scripted model through the pipeline)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-chain-writer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('every chain has the LLM’s question or the template’s with a reason; a rerun asks nothing again', async () => {
    // Answers every chain prompt with its first question and a generic tail: it never leaks, and says every first-hop value.
    const model = new (class extends ScriptedChatModel {
      override async _generate(...args: Parameters<ScriptedChatModel['_generate']>) {
        const user = args[0].at(-1)!.text;
        const first = /First question: (.*)/.exec(user)?.[1] ?? '';
        (this as unknown as { steps: Step[] }).steps = [reply(`${first} And what does the last step give for it?`)];
        return super._generate(...args);
      }
    })(['unused']);
    const config = parseConfig({
      source: DEMO_SOURCE,
      formulations: ['rest', 'chain'],
      rest: { synthesizer: 'template', judge: false },
      chain: { writer: 'llm' },
      llm: { provider: 'openai', model: 'scripted', requestsPerMinute: 1_000_000 },
      out: path.join(dir, 'out'),
      cacheDir: path.join(dir, 'cache'),
      progress: 'none',
    });
    await generate({ config, chatModel: model });
    const lines = ['bookstore', 'cycling_club'].flatMap((db) =>
      readFileSync(path.join(dir, 'out', 'chain', `${db}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { input: string; question_writer: { name: string; fallback?: string } }),
    );
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      if (line.question_writer.name === 'template') expect(line.question_writer.fallback).toEqual(expect.any(String));
      // A nested gold statement's chain asks its source's own question.
      else if (line.question_writer.name === 'source') expect(line.input).not.toMatch(/last step/);
      else {
        expect(line.question_writer).toEqual({ name: 'llm:openai/scripted' });
        expect(line.input).toMatch(/And what does the last step give for it\?$/);
      }
    }
    expect(lines.some((l) => l.question_writer.name === 'llm:openai/scripted')).toBe(true);
    const asked = model.calls;
    await generate({ config, chatModel: model });
    expect(model.calls).toBe(asked);
  }, 120_000);
});

test('the template words a summary mid-sentence: articles that start its descriptions lower-cased, names kept', () => {
  const hop = (summary: string) => ({
    endpoint: { summary },
    link: { field: 'language', param: 'language', transform: 'value' as const },
  });
  expect(linkPhrase(hop('Get A list of card subtypes, A list of card supertypes by language.'))).toBe(
    'take the language it gives and use it as the language to get a list of card subtypes, a list of card supertypes by language',
  );
  expect(linkPhrase(hop('Get The Hidden Station title, North County by language'))).toMatch(
    /to get The Hidden Station title, North County by language$/,
  );
});
