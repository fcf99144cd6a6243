import type { ToolCall, ToolSpec, Verdict } from '../core/model.js';
import { alignSequences, type PrecisionRecall } from './metrics/alignment.js';
import type { ChainHop } from './dataset.js';
import { bfclCategory, isCall, type BfclCategory } from './metrics/bfcl.js';
import { chainScores, type ChainScores } from './metrics/chain.js';
import { sequenceMatch } from './metrics/sequence.js';

/**
 * One attempt's metrics, from what the model called and how its answer fared: the pure step
 * between an episode (run.ts) and the summary (summary.ts). Predicted calls that are not
 * well-formed calls count for the error category but not for the alignment metrics.
 */

export interface ItemScores {
  /** The final output is the gold answer (Live API-Bench completion rate; NESTFUL's win rate). */
  completed: boolean;
  /** Why the answer was judged as it was (`scalar`, `semantic:value_mismatch`, `no_answer`, `execution:sql_error`, …). */
  answer: Verdict;
  intent: PrecisionRecall;
  slot: PrecisionRecall;
  /** Predicted calls aligned with a gold call of the same tool (0: the slot scores count nothing right). */
  matchedIntents: number;
  /**
   * BFCL's first error category, or null; a chain's `value_error` that is a value carried
   * wrongly from a right response is `bridge_error` (metrics/chain.ts).
   */
  error: BfclCategory | 'bridge_error' | null;
  fullSequenceMatch: boolean;
  partialSequenceMatch: number;
  /** Chain items: hop by hop. */
  chain?: ChainScores;
}

export function scoreAttempt(input: {
  /**
   * The calls read off the reply (null: unreadable); for an agent, the actions it took. A chain's
   * calls as they were sent, references to earlier responses resolved.
   */
  predicted: readonly unknown[] | null;
  gold: readonly ToolCall[];
  tools: readonly ToolSpec[];
  answer: Verdict;
  /** Chain items: each gold hop's bridge. */
  hops?: readonly ChainHop[];
}): ItemScores {
  const calls = (input.predicted ?? []).filter(isToolCall).map((c, i) => ({ ...c, label: c.label ?? `#${i}` }));
  const alignment = alignSequences(calls, input.gold);
  const { intent, slot, pairs } = alignment;
  const sequence = sequenceMatch(calls, input.gold, alignment);
  const chain = input.hops && chainScores(calls, input.gold, input.hops, pairs);
  const error = bfclCategory(input.predicted, input.gold, input.tools);
  return {
    completed: input.answer.ok,
    answer: input.answer,
    intent,
    slot,
    matchedIntents: pairs.length,
    error: error === 'value_error' && chain?.error?.kind === 'bridge_error' ? 'bridge_error' : error,
    fullSequenceMatch: sequence.full,
    partialSequenceMatch: sequence.partial,
    ...(chain ? { chain } : {}),
  };
}

/** A call (bfcl.ts `isCall`) whose label, if any, is a string: one the runtime can be asked to run. */
export function isToolCall(value: unknown): value is Omit<ToolCall, 'label'> & { label?: string } {
  return isCall(value) && (value.label === undefined || typeof value.label === 'string');
}
