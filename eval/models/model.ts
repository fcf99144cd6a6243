import { callsRest, type ToolCall, type ToolSpec } from '../../core/model.js';
import type { LlmClient } from '../../generators/llm/client.js';
import type { LlmMessage } from '../../generators/llm/messages.js';
import type { EvalItem } from '../dataset.js';
import type { ModelReply } from '../parse/reply.js';
import { familyOf, writeCalls, type ModelFamily } from '../prompts.js';
import { unconsumedLabels } from '../answer-labels.js';
import { knnPlan, type NeighbourIndex } from './knn.js';

/**
 * The models an evaluation asks: every one answers a conversation turn with a reply (text
 * and, with native tools, tool calls), so direct invocation and the ReAct loop treat an LLM
 * and a non-LLM baseline alike. `oracle` and `baseline:knn` follow a plan of calls (the gold
 * calls; a neighbour's adapted calls) and ignore the prompt's text; an LLM reads it.
 */

export interface Turn {
  item: EvalItem;
  messages: readonly LlmMessage[];
  /** The tools offered (after --obfuscate / --shortlist); bound natively when `native`. */
  tools: readonly ToolSpec[];
  native: boolean;
  /** ReAct: the turn's index (0 first); direct invocation has one turn. */
  step: number;
  /** `sql`: the SQL baseline, where the model writes a query instead of calls. */
  mode: 'direct' | 'react' | 'sql';
  /** ReAct: the turns an attempt may take. */
  budget: number;
  /** Which of `--repeats` this attempt is (0 first): a repeat is a new sample, not a cached reply. */
  repeat: number;
  /** Tool names as the model sees them (--obfuscate): from the dataset's names. */
  rename: (call: ToolCall) => ToolCall;
}

export interface ModelAnswer extends ModelReply {
  /** Answered from the reply cache: no request was made. */
  cached: boolean;
}

export interface EvalModel {
  /** As given on the command line: `oracle`, `baseline:knn`, `<provider>:<model>`. */
  id: string;
  family: ModelFamily;
  /** false: the model never reads the conversation (a plan follower), so none is rendered. */
  readsPrompt: boolean;
  respond(turn: Turn): Promise<ModelAnswer>;
}

/**
 * A model that follows a plan of calls: all of them at once (direct), or one per turn, then
 * its answer (ReAct); for the SQL baseline, the query its plan comes from.
 */
export function plannedModel(
  id: string,
  plan: (item: EvalItem) => ToolCall[],
  sql: (item: EvalItem) => string,
): EvalModel {
  const family: ModelFamily = 'gpt';
  return {
    id,
    family,
    readsPrompt: false,
    async respond(turn) {
      if (turn.mode === 'sql') return { content: `\`\`\`sql\n${sql(turn.item)}\n\`\`\``, cached: false };
      const calls = plan(turn.item).map(turn.rename);
      if (turn.mode === 'direct') return { content: writeCalls(family, calls), cached: false };
      const answer = () =>
        callsRest(turn.item.formulation)
          ? (calls[calls.length - 1]?.name ?? '')
          : JSON.stringify(unconsumedLabels(calls));
      return { content: plannedTurn(calls, turn, answer), cached: false };
    },
  };
}

/** ReAct on a plan: one call per turn while the budget allows, the rest in one action before the last turn, then the answer. */
export function plannedTurn(calls: readonly unknown[], turn: Turn, answer: () => string): string {
  const actionTurns = Math.min(calls.length, turn.budget - 1);
  if (turn.step < actionTurns) {
    const action = turn.step < actionTurns - 1 ? [calls[turn.step]] : calls.slice(turn.step);
    return `Thought: next step.\nAction: ${JSON.stringify(action)}`;
  }
  return `Thought: done.\nFinal Answer: ${answer()}`;
}

export function oracleModel(): EvalModel {
  return plannedModel(
    'oracle',
    (item) => item.goldCalls,
    (item) => item.sql,
  );
}

export function knnModel(index: NeighbourIndex): EvalModel {
  return plannedModel(
    'baseline:knn',
    (item) => knnPlan(item, index),
    (item) => index.neighbours(item, 1)[0]?.sql ?? 'SELECT NULL',
  );
}

/** An LLM through the LLM layer (cache, rate limit, retries): tools natively or in the prompt. */
export function llmModel(id: string, client: LlmClient, modelName: string): EvalModel {
  return {
    id,
    family: familyOf(modelName),
    readsPrompt: true,
    async respond(turn) {
      if (turn.native) {
        const reply = await client.chat(turn.messages, turn.tools, turn.repeat);
        return {
          content: reply.text,
          toolCalls: reply.toolCalls.map((c) => ({ name: c.name, args: c.args, id: c.id })),
          cached: reply.cached,
        };
      }
      const reply = await client.complete(turn.messages, turn.repeat);
      return { content: reply.text, cached: reply.cached };
    },
  };
}
