import { z } from 'zod';
import type { SqlValue } from '../../core/model.js';
import { accept, reject, TransientError, type Outcome } from '../../core/outcome.js';
import type { LlmClient } from '../llm/client.js';
import type { LlmMessage } from '../llm/messages.js';
import {
  completeStructured,
  completeWithOneRetry,
  failureFeedback,
  YesNoVerdict,
  type StructuredFailure,
} from '../llm/structured.js';
import { loadPrompt } from '../rest/prompts.js';
import type { ArgumentValue } from '../../runtime/rest/spec.js';
import {
  checkContext,
  checkLeaks,
  linkPhrase,
  templateQuestion,
  type ChainQuestion,
  type QuestionHop,
} from './question.js';

/**
 * Who writes a verified chain's question (issue 36): the deterministic template, or an LLM
 * through the pipeline's LLM layer (its reply cache, rate limit, retries), with the template
 * as its fallback. Whatever writes it, the question passes the rubric's checks by rule
 * (question.ts: no value a link carries or the answer holds, every first-hop value given);
 * an LLM's question is asked again once with the check's finding, and, with a judge, must be
 * judged faithful to the chain. A reply the model got wrong is the chain's verdict (the
 * template then writes it); a provider that never answered is a fault of the run, thrown as
 * transient so that nothing is cached of it.
 */

export interface QuestionRequest {
  first: { question: string; evidence: string; args: Readonly<Record<string, ArgumentValue>> };
  hops: readonly QuestionHop[];
  /** The values the links carry, hop 2 onwards. */
  bridges: readonly SqlValue[];
  answer: readonly (readonly SqlValue[])[];
}

export interface WrittenQuestion extends ChainQuestion {
  /** `template`, or `llm:<provider>/<model>`. */
  writer: string;
  /** The LLM's question was not kept: why (the template wrote this one). */
  fallback?: string;
}

export interface QuestionWriter {
  name: string;
  /** What decides its questions besides the chain: part of chain.compose's key. */
  fingerprint: unknown;
  write(request: QuestionRequest): Promise<Outcome<WrittenQuestion>>;
}

export const templateWriter: QuestionWriter = {
  name: 'template',
  fingerprint: 'template',
  write: async (request) => {
    const written = templateQuestion(request.first.question, request.hops);
    const problem = problemOf(written.question, request);
    return problem
      ? reject(`question:${problem.category}`, problem.message)
      : accept({ ...written, writer: 'template' });
  },
};

export interface LlmWriterOptions {
  /** `<provider>/<model>`: recorded with each question it writes. */
  providerLabel: string;
  /** Also ask the model whether its question is faithful to the chain. */
  judge: boolean;
}

const QuestionReply = z.object({ question: z.string().trim().min(1) });

/** Questions an LLM writes: twice at most, the second told what was wrong with the first. */
export function llmWriter(client: LlmClient, options: LlmWriterOptions): QuestionWriter {
  const prompt = loadPrompt('chain-question');
  const judgePrompt = loadPrompt('chain-judge');
  const name = `llm:${options.providerLabel}`;
  return {
    name,
    fingerprint: {
      prompt: [prompt.system, prompt.user],
      judge: options.judge ? [judgePrompt.system, judgePrompt.user] : null,
      providerLabel: options.providerLabel,
    },
    async write(request) {
      const components = templateQuestion(request.first.question, request.hops).components;
      let messages: LlmMessage[] = prompt.render(promptSlots(request));
      let why = '';
      for (let attempt = 0; attempt < 2; attempt++) {
        const reply = await completeStructured(client, messages, QuestionReply);
        if (!reply.ok) {
          throwIfCallFailure(reply);
          why = `${reply.category}: ${reply.message}`;
          messages = [...messages, ...failureFeedback(reply)];
          continue;
        }
        const { question } = reply.value;
        const problem =
          problemOf(question, request) ??
          (options.judge ? await unfaithful(client, judgePrompt.render(judgeSlots(request, question))) : undefined);
        if (!problem) return accept({ question, components, writer: name });
        why = `${problem.category}: ${problem.message}`;
        messages = [
          ...messages,
          { role: 'assistant', content: reply.raw },
          { role: 'user', content: `That question cannot be used: ${problem.message}. Write it again, as JSON.` },
        ];
      }
      const fallback = await templateWriter.write(request);
      return fallback.ok ? accept({ ...fallback.value, fallback: why }) : fallback;
    },
  };
}

/** The rubric's checks by rule: the first finding, or undefined. */
function problemOf(question: string, request: QuestionRequest): { category: string; message: string } | undefined {
  const leaks = checkLeaks(question, request.bridges, request.answer);
  if (!leaks.ok) return leaks;
  const context = checkContext(question, request.first.evidence, request.first.args);
  return context.ok ? undefined : context;
}

async function unfaithful(
  client: LlmClient,
  messages: LlmMessage[],
): Promise<{ category: string; message: string } | undefined> {
  const reply = await completeWithOneRetry(client, messages, YesNoVerdict);
  if (!reply.ok) {
    throwIfCallFailure(reply);
    return { category: 'judge_failed', message: `the judge's reply: ${reply.category}: ${reply.message}` };
  }
  return reply.value.verdict === 'yes'
    ? undefined
    : { category: 'unfaithful', message: `the judge finds it unfaithful to the chain: ${reply.value.rationale}` };
}

/** A provider that never answered (after the client's retries) says nothing of the chain. */
function throwIfCallFailure(failure: StructuredFailure): void {
  if (failure.category !== 'llm:invalid_json' && failure.category !== 'llm:schema')
    throw new TransientError(`the question writer's model: ${failure.category}: ${failure.message}`);
}

function promptSlots(request: QuestionRequest): Record<string, string> {
  const hidden = [...request.bridges, ...request.answer.flat()].filter((v) => v !== null);
  return {
    first_question: request.first.question,
    evidence: request.first.evidence || '(none)',
    links: request.hops
      .slice(1)
      .map((hop, i) => `${i + 1}. ${linkPhrase(hop)}`)
      .join('\n'),
    hidden: hidden.length ? [...new Set(hidden.map((v) => JSON.stringify(v)))].slice(0, 40).join(', ') : '(none)',
  };
}

function judgeSlots(request: QuestionRequest, question: string): Record<string, string> {
  return {
    steps: [
      `1. ${request.first.question}${request.first.evidence ? ` (evidence: ${request.first.evidence})` : ''}`,
      ...request.hops.slice(1).map((hop, i) => `${i + 2}. ${linkPhrase(hop)}`),
    ].join('\n'),
    question,
  };
}
