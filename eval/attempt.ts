import { callsRest, type ToolCall, type Verdict } from '../core/model.js';
import type { LlmMessage, LlmToolCall } from '../generators/llm/messages.js';
import { judgeAnswer, judgeOutputs, type ExecutedCall } from './answer.js';
import { CallNames, type NamedCall, type ReadCall } from './call-names.js';
import type { EvalItem } from './dataset.js';
import { observationJson, type Episode } from './environment.js';
import type { EvalModel, ModelAnswer } from './models/model.js';
import { parseReply, type ReadVia } from './parse/reply.js';
import { renderPrompt, type PromptSettings, type RenderedPrompt } from './prompts.js';
import { isToolCall, scoreAttempt, type ItemScores } from './score.js';
import type { ToolView } from './tool-view.js';

/**
 * One attempt of one model at one item: the prompt, the model's reply (direct invocation)
 * or its Think-Act-Observe loop (ReAct), the calls executed against the live tools, and the
 * scores. Everything here is recorded as data in the item's result (results.jsonl).
 */

export interface Step {
  /** The call as it ran, in the dataset's names (as the model wrote it, if it was refused or no call). */
  call: unknown;
  ok: boolean;
  /** The tool's output (at most 20 rows) or its error. */
  observation: unknown;
  /** On failure: `format`, `tool:<code>`, `sql_error`, `sql_timeout`, `http_<status>`. */
  kind?: string;
}

export interface AttemptRecord {
  model: string;
  /** `sql`: the SQL baseline (sql-baseline.ts). */
  mode: 'direct' | 'react' | 'sql';
  /** sha256 of the first prompt (system and user); null for a model that reads none. */
  promptHash: string | null;
  replies: ModelAnswer[];
  /**
   * The calls read off the reply (direct) or the actions taken (ReAct), in the names the model
   * was shown, each with its label and the model's id (call-names.ts); null: unreadable.
   */
  parsed: unknown[] | null;
  via?: ReadVia;
  parseError?: string;
  steps: Step[];
  /** The SQL baseline's query. */
  sql?: string;
  react?: { turns: number; budget: number; answered: boolean };
  scores: ItemScores;
}

export interface AttemptInput {
  item: EvalItem;
  model: EvalModel;
  view: ToolView;
  examples: readonly EvalItem[];
  settings: PromptSettings;
  episode: Episode;
  repeat: number;
}

export async function runAttempt(input: AttemptInput): Promise<AttemptRecord> {
  return input.settings.mode === 'react' ? runReact(input) : runDirect(input);
}

function firstMessages({ item, model, view, examples, settings }: AttemptInput): RenderedPrompt | null {
  if (!model.readsPrompt) return null;
  return renderPrompt(
    item,
    view.tools,
    settings.tools === 'native' || callsRest(item.formulation) ? [] : examples,
    settings,
  );
}

async function runDirect(input: AttemptInput): Promise<AttemptRecord> {
  const { item, model, episode } = input;
  const prompt = firstMessages(input);
  const reply = await model.respond(turnOf(input, prompt?.messages ?? [], 0));
  const parsed = parseReply(reply);
  const base = { model: model.id, mode: 'direct' as const, promptHash: prompt?.hash ?? null, replies: [reply] };
  if (!parsed.ok) {
    const answer: Verdict = { ok: false, category: 'instruction_alignment_failure', message: parsed.reason };
    return { ...base, parsed: null, parseError: parsed.reason, steps: [], scores: score(input, null, answer) };
  }
  const { calls, runnable, stop } = prepareCalls(parsed.calls, callNames(item), input.view);
  const run = await episode.runAll(runnable);
  const steps: Step[] = run.results.map((result, i) => stepOf(runnable[i], result));
  if (stop && steps.every((s) => s.ok)) steps.push(stop);
  const failed = steps.find((s) => !s.ok);
  const executed: ExecutedCall[] = run.results.map((result, i) => ({ call: result.sent ?? runnable[i], result }));
  // A chain is scored on its calls as sent: a reference stands for the value it carried.
  const sent = calls.map((call, i) => {
    const ran = run.results[i]?.sent;
    return ran ? { ...input.view.toModel(ran), ...idOf(call) } : call;
  });
  const answer: Verdict = failed
    ? { ok: false, category: `execution:${failed.kind}`, message: JSON.stringify(failed.observation).slice(0, 500) }
    : run.answer
      ? judgeOutputs(run.answer, item.gold)
      : await judgeAnswer(executed, item.gold, episode);
  return { ...base, parsed: calls, via: parsed.via, steps, scores: score(input, sent, answer) };
}

/** The model's id of a call, kept beside its label in the record. */
function idOf(call: unknown): { id?: string } {
  const id = (call as { id?: unknown }).id;
  return typeof id === 'string' ? { id } : {};
}

/**
 * A direct reply's calls, read in order: named (call-names.ts), the well-formed ones the view
 * offers run in the dataset's names; the first malformed or refused call stops the run there
 * and is the step that failed.
 */
function prepareCalls(
  read: readonly unknown[],
  names: CallNames,
  view: ToolView,
): { calls: unknown[]; runnable: ToolCall[]; stop?: Step } {
  const malformed = read.findIndex((c) => !isToolCall(c));
  const named = names.name((malformed < 0 ? read : read.slice(0, malformed)) as ReadCall[]);
  const calls = [...named, ...read.slice(named.length)];
  const refusals = named.map((c) => view.refusal(c));
  const refusedAt = refusals.findIndex((r) => r !== null);
  const runnable = (refusedAt < 0 ? named : named.slice(0, refusedAt)).map((c) => runnableCall(c, view));
  if (refusedAt >= 0) return { calls, runnable, stop: refusalStep(named[refusedAt], refusals[refusedAt]!) };
  if (malformed >= 0) return { calls, runnable, stop: formatStep(read[malformed]) };
  return { calls, runnable };
}

async function runReact(input: AttemptInput): Promise<AttemptRecord> {
  const { item, model, view, settings, episode } = input;
  const prompt = firstMessages(input);
  const messages = prompt?.messages ?? [];
  const promptHash = prompt?.hash ?? null;
  const names = callNames(item);
  const replies: ModelAnswer[] = [];
  const steps: Step[] = [];
  const executed: ExecutedCall[] = [];
  const actions: unknown[] = [];
  // The actions as sent (a chain's references resolved): what is scored.
  const sent: unknown[] = [];
  let finalLabels: string[] | undefined;
  let answered = false;
  let turns = 0;
  while (turns < settings.budget && !answered) {
    const reply = await model.respond(turnOf(input, messages, turns));
    replies.push(reply);
    turns++;
    const decision = readTurn(reply, settings.tools === 'native');
    if (decision.kind === 'final') {
      answered = true;
      finalLabels = finalAnswerLabels(decision.text, executed, names, callsRest(item.formulation));
      messages.push({ role: 'assistant', content: reply.content });
      break;
    }
    if (decision.kind === 'unreadable') {
      messages.push({ role: 'assistant', content: reply.content });
      messages.push({
        role: 'user',
        content: `Observation: ${decision.reason}. Write "Action:" with one tool call, or "Final Answer:".`,
      });
      steps.push({
        call: reply.content.slice(0, 500),
        ok: false,
        observation: { error: decision.reason },
        kind: 'format',
      });
      continue;
    }
    const named = names.name(decision.calls.filter(isToolCall));
    const results: { id: string; text: string }[] = [];
    for (const [i, written] of decision.calls.entries()) {
      const call = isToolCall(written) ? named.shift()! : undefined;
      actions.push(call ?? written);
      sent.push(call ?? written);
      const refused = call && view.refusal(call);
      let step: Step;
      if (!call) step = formatStep(written);
      else if (refused) step = refusalStep(call, refused);
      else {
        const runnable = runnableCall(call, view);
        const result = await episode.call(runnable);
        executed.push({ call: result.sent ?? runnable, result });
        if (result.sent) sent[sent.length - 1] = { ...view.toModel(result.sent), ...idOf(call) };
        step = stepOf(runnable, result);
      }
      if (call && !step.ok) names.forget(call.label);
      steps.push(step);
      results.push({ id: decision.ids?.[i] ?? `call_${i}`, text: observationText(step, call, item) });
    }
    if (decision.native) {
      // The assistant turn as the provider returned it, each call answered by its id.
      const toolCalls: LlmToolCall[] = (reply.toolCalls ?? []).map((c, i) => ({
        id: results[i]?.id ?? `call_${i}`,
        name: c.name,
        args: (c.args ?? {}) as Record<string, unknown>,
      }));
      messages.push({ role: 'assistant', content: reply.content, toolCalls });
      for (const r of results) messages.push({ role: 'tool', content: r.text, toolCallId: r.id });
    } else {
      messages.push({ role: 'assistant', content: reply.content });
      messages.push({ role: 'user', content: `Observation: ${results.map((r) => r.text).join('\n')}` });
    }
  }
  const answer: Verdict = answered
    ? await judgeAnswer(executed, item.gold, episode, finalLabels)
    : { ok: false, category: 'out_of_budget', message: `no final answer within ${settings.budget} turns` };
  return {
    model: model.id,
    mode: 'react',
    promptHash,
    replies,
    parsed: actions,
    steps,
    react: { turns, budget: settings.budget, answered },
    // An agent that never wrote a readable call failed to follow the instructions, as a direct reply would.
    scores: score(input, sent.length > 0 ? sent : null, answer),
  };
}

/** The names of an attempt's outputs: the starting tables' labels are taken. */
function callNames(item: EvalItem): CallNames {
  return new CallNames(item.initialization.map((c) => c.label));
}

/** A named call in the dataset's names, as the episode runs it (the model's id stays in the record). */
function runnableCall(call: NamedCall, view: ToolView): ToolCall {
  return view.fromModel({ name: call.name, arguments: call.arguments, label: call.label });
}

function refusalStep(call: NamedCall, refused: NonNullable<ReturnType<ToolView['refusal']>>): Step {
  return { call, ok: false, observation: { error: refused.error }, kind: refused.kind };
}

function formatStep(written: unknown): Step {
  return { call: written, ok: false, observation: { error: 'not a tool call' }, kind: 'format' };
}

/**
 * What the model is told of a call: SLOT/SEL outputs with the handle a later call names them
 * by (the call's label, id or a fresh `call_<n>`: call-names.ts), REST responses as they are.
 */
function observationText(step: Step, call: NamedCall | undefined, item: EvalItem): string {
  if (!call) return JSON.stringify({ error: 'not a tool call: write {"name": ..., "arguments": {...}}' });
  if (!step.ok || item.formulation === 'rest') return JSON.stringify(step.observation);
  return JSON.stringify({ handle: call.label, output: step.observation });
}

function turnOf(input: AttemptInput, messages: readonly LlmMessage[], step: number) {
  return {
    item: input.item,
    messages: [...messages],
    tools: input.view.tools,
    native: input.settings.tools === 'native',
    step,
    mode: input.settings.mode,
    repeat: input.repeat,
    budget: input.settings.budget,
    rename: (call: ToolCall) => input.view.toModel(call),
  };
}

function stepOf(runnable: ToolCall, result: Awaited<ReturnType<Episode['call']>>): Step {
  const call = result.sent ?? runnable;
  return result.ok
    ? { call, ok: true, observation: observationJson(result) }
    : { call, ok: false, observation: { error: result.error }, kind: result.kind };
}

/** Scored in the names the model was shown: under --obfuscate, a real name is one it was not offered. */
function score({ item, view }: AttemptInput, predicted: unknown[] | null, answer: Verdict): ItemScores {
  return scoreAttempt({
    predicted,
    gold: item.goldCalls.map((c) => view.toModel(c)),
    tools: view.tools,
    answer,
    ...(item.hops ? { hops: item.hops } : {}),
  });
}

type Decision =
  | { kind: 'final'; text: string }
  | { kind: 'act'; calls: unknown[]; native: boolean; ids?: string[] }
  | { kind: 'unreadable'; reason: string };

/**
 * What a ReAct turn says: native tool calls act; otherwise "Final Answer:" ends the loop and
 * "Action:" (or, failing that, any call the reply holds) acts: with its calls in order, as a
 * provider's parallel tool calls are run. A native reply with no calls is the final answer.
 */
export function readTurn(reply: ModelAnswer, native: boolean): Decision {
  if (reply.toolCalls?.length) {
    const parsed = parseReply({ content: '', toolCalls: reply.toolCalls });
    const ids = reply.toolCalls.map((c, i) => c.id ?? `call_${i}`);
    if (parsed.ok) return { kind: 'act', calls: parsed.calls, native: true, ids };
  }
  const text = reply.content;
  const final = /Final Answer\s*:([\s\S]*)$/i.exec(text);
  const action = /Action\s*:([\s\S]*)$/i.exec(text);
  if (final && (!action || final.index > action.index)) return { kind: 'final', text: final[1].trim() };
  const parsed = parseReply({ content: action ? action[1] : text });
  if (parsed.ok) return { kind: 'act', calls: parsed.calls, native: false };
  if (native && text.trim() !== '') return { kind: 'final', text: text.trim() };
  return {
    kind: 'unreadable',
    reason: action ? `the action could not be read: ${parsed.reason}` : 'no action and no final answer',
  };
}

/**
 * The labels a final answer names: a JSON list of labels, or labels written as words (a REST
 * answer names the operationId: its last successful call of that name). Undefined when it
 * names none of the calls made: the answer is then the unconsumed outputs (answer.ts).
 */
function finalAnswerLabels(
  text: string,
  executed: readonly ExecutedCall[],
  names: CallNames,
  rest: boolean,
): string[] | undefined {
  const known = new Set(executed.filter((e) => e.result.ok).map((e) => (rest ? e.call.name : e.call.label)));
  const named = [...text.matchAll(/\$?([A-Za-z_][\w-]*)\$?/g)]
    .map((m) => (rest ? m[1] : (names.labelOf(m[1]) ?? m[1])))
    .filter((w) => known.has(w));
  if (named.length === 0) return undefined;
  if (!rest) return [...new Set(named)];
  const last = [...executed].reverse().find((e) => e.result.ok && e.call.name === named[named.length - 1]);
  return last ? [last.call.label] : undefined;
}
