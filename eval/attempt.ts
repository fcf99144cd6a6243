import type { ToolCall, Verdict } from '../core/model.js';
import type { LlmMessage, LlmToolCall } from '../generators/llm/messages.js';
import { judgeAnswer, judgeOutputs, type ExecutedCall } from './answer.js';
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
  /** The call as it ran, in the dataset's names (or what the model wrote, if it was no call). */
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
  /** The calls read off the reply (direct) or the actions taken (ReAct); null: unreadable. */
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
    settings.tools === 'native' || item.formulation === 'rest' ? [] : examples,
    settings,
  );
}

async function runDirect(input: AttemptInput): Promise<AttemptRecord> {
  const { item, model, view, episode } = input;
  const prompt = firstMessages(input);
  const reply = await model.respond(turnOf(input, prompt?.messages ?? [], 0));
  const parsed = parseReply(reply);
  const base = { model: model.id, mode: 'direct' as const, promptHash: prompt?.hash ?? null, replies: [reply] };
  if (!parsed.ok) {
    const answer: Verdict = { ok: false, category: 'instruction_alignment_failure', message: parsed.reason };
    return { ...base, parsed: null, parseError: parsed.reason, steps: [], scores: score(item, null, answer) };
  }
  const calls = parsed.calls.map((c) => (isToolCall(c) ? view.fromModel(c) : c));
  const malformed = calls.findIndex((c) => !isToolCall(c));
  const runnable = (malformed < 0 ? calls : calls.slice(0, malformed)).map((c, i): ToolCall => ({
    ...(c as ToolCall),
    label: (c as { label?: string }).label ?? `CALL_${i + 1}`,
  }));
  const run = await episode.runAll(runnable);
  const steps: Step[] = run.results.map((result, i) => stepOf(runnable[i], result));
  if (malformed >= 0 && steps.every((s) => s.ok))
    steps.push({ call: calls[malformed], ok: false, observation: { error: 'not a tool call' }, kind: 'format' });
  const failed = steps.find((s) => !s.ok);
  const executed: ExecutedCall[] = run.results.map((result, i) => ({ call: runnable[i], result }));
  const answer: Verdict = failed
    ? { ok: false, category: `execution:${failed.kind}`, message: JSON.stringify(failed.observation).slice(0, 500) }
    : run.answer
      ? judgeOutputs(run.answer, item.gold)
      : await judgeAnswer(executed, item.gold, episode);
  return { ...base, parsed: calls, via: parsed.via, steps, scores: score(item, calls, answer) };
}

async function runReact(input: AttemptInput): Promise<AttemptRecord> {
  const { item, model, view, settings, episode } = input;
  const prompt = firstMessages(input);
  const messages = prompt?.messages ?? [];
  const promptHash = prompt?.hash ?? null;
  const replies: ModelAnswer[] = [];
  const steps: Step[] = [];
  const executed: ExecutedCall[] = [];
  const actions: unknown[] = [];
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
      finalLabels = finalAnswerLabels(decision.text, executed, item.formulation === 'rest');
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
    const results: { id: string; text: string }[] = [];
    for (const [i, written] of decision.calls.entries()) {
      actions.push(isToolCall(written) ? view.fromModel(written) : written);
      const candidate = actions[actions.length - 1];
      let text: string;
      if (!isToolCall(candidate)) {
        steps.push({ call: candidate, ok: false, observation: { error: 'not a tool call' }, kind: 'format' });
        text = JSON.stringify({ error: 'not a tool call: write {"name": ..., "arguments": {...}, "label": ...}' });
      } else {
        const call: ToolCall = { ...candidate, label: candidate.label ?? `CALL_${actions.length}` };
        const result = await episode.call(call);
        executed.push({ call, result });
        const step = stepOf(call, result);
        steps.push(step);
        text = JSON.stringify(step.observation);
      }
      results.push({ id: decision.ids?.[i] ?? `call_${i}`, text });
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
    scores: score(item, actions, answer),
  };
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

function stepOf(call: ToolCall, result: Awaited<ReturnType<Episode['call']>>): Step {
  return result.ok
    ? { call, ok: true, observation: observationJson(result) }
    : { call, ok: false, observation: { error: result.error }, kind: result.kind };
}

function score(item: EvalItem, predicted: unknown[] | null, answer: Verdict): ItemScores {
  return scoreAttempt({ predicted, gold: item.goldCalls, tools: item.tools, answer });
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
function finalAnswerLabels(text: string, executed: readonly ExecutedCall[], rest: boolean): string[] | undefined {
  const known = new Set(executed.filter((e) => e.result.ok).map((e) => (rest ? e.call.name : e.call.label)));
  const named = [...text.matchAll(/\$?([A-Za-z_][\w-]*)\$?/g)].map((m) => m[1]).filter((w) => known.has(w));
  if (named.length === 0) return undefined;
  if (!rest) return [...new Set(named)];
  const last = [...executed].reverse().find((e) => e.result.ok && e.call.name === named[named.length - 1]);
  return last ? [last.call.label] : undefined;
}
