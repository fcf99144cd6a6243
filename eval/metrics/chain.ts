import type { ToolCall } from '../../core/model.js';
import type { ChainHop } from '../dataset.js';
import { sameValue } from './alignment.js';

/**
 * A chain attempt hop by hop: which of the gold hops the model made (the hop's endpoint with
 * the gold's arguments, in its place), and the first one it did not, with why. Calls are
 * compared as they were sent (references to earlier responses resolved to the values they
 * carried: chain-references.ts), aligned with the gold hops as the intent metric aligns them
 * (alignment.ts), so an agent's extra look-up calls do not shift the hops.
 *
 * - `missing_hop`: no call of the hop's endpoint in its place;
 * - `wrong_arguments`: the endpoint, with a question-given argument wrong (or one too many);
 * - `bridge_error`: every earlier hop right and this one's own arguments too, but a value it
 *   takes from the previous response is not the one the chain carries: the previous response
 *   was right and the model carried the wrong field, row or transform of it.
 */

export const CHAIN_ERRORS = ['missing_hop', 'wrong_arguments', 'bridge_error'] as const;
export type ChainError = (typeof CHAIN_ERRORS)[number];

export interface ChainScores {
  /** Per gold hop, in order: made right. */
  hops: boolean[];
  /**
   * Per gold hop, the intent and slot metrics of that hop alone: its endpoint called in its
   * place, and the share of its gold arguments the call gave as the gold has them (0 uncalled).
   */
  perHop: { intent: boolean; slot: number }[];
  /** The first hop not made right (1-based) and why; null when all are. */
  error: { hop: number; kind: ChainError } | null;
}

export function chainScores(
  sent: readonly ToolCall[],
  gold: readonly ToolCall[],
  hops: readonly ChainHop[],
  pairs: readonly [number, number][],
): ChainScores {
  const predictedOf = new Map(pairs.map(([p, g]) => [g, sent[p]]));
  const verdicts = gold.map((hop, g) => hopVerdict(predictedOf.get(g), hop, hops[g]));
  const first = verdicts.findIndex((v) => v !== 'right');
  const kind = verdicts[first];
  return {
    hops: verdicts.map((v) => v === 'right'),
    perHop: gold.map((hop, g) => hopSlots(predictedOf.get(g), hop)),
    error: first < 0 || kind === 'right' ? null : { hop: first + 1, kind },
  };
}

function hopSlots(predicted: ToolCall | undefined, gold: ToolCall): ChainScores['perHop'][number] {
  if (!predicted) return { intent: false, slot: 0 };
  const names = Object.keys(gold.arguments);
  const right = names.filter(
    (name) => name in predicted.arguments && sameValue(predicted.arguments[name], gold.arguments[name]),
  );
  return { intent: true, slot: names.length === 0 ? 1 : right.length / names.length };
}

function hopVerdict(predicted: ToolCall | undefined, gold: ToolCall, hop: ChainHop | undefined): ChainError | 'right' {
  if (!predicted) return 'missing_hop';
  const bound = new Set(Object.keys(hop?.binds ?? {}));
  const wrong = Object.keys(gold.arguments).filter(
    (name) => !(name in predicted.arguments) || !sameValue(predicted.arguments[name], gold.arguments[name]),
  );
  const extra = Object.keys(predicted.arguments).some((name) => !(name in gold.arguments));
  if (extra || wrong.some((name) => !bound.has(name))) return 'wrong_arguments';
  return wrong.length > 0 ? 'bridge_error' : 'right';
}
