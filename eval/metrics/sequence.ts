import type { ToolCall } from '../../core/model.js';
import { alignSequences, relabel, sameValue, type SequenceAlignment } from './alignment.js';

/**
 * Sequence metrics after NESTFUL's full and partial sequence match: full, the predicted
 * sequence is the gold one call for call (same tools in the same order, equal arguments,
 * references to earlier outputs read as the gold labels of the calls they point at); partial
 * sequence match, the share of gold calls matched exactly (name and every argument) by a
 * call aligned with them (alignment.ts; pass the alignment when it is already made).
 */
export function sequenceMatch(
  predicted: readonly ToolCall[],
  gold: readonly ToolCall[],
  { pairs, labels }: Pick<SequenceAlignment, 'pairs' | 'labels'> = alignSequences(predicted, gold),
): { full: boolean; partial: number } {
  const exact = pairs.filter(([p, g]) => sameValue(relabel(predicted[p].arguments, labels), gold[g].arguments)).length;
  return {
    full: predicted.length === gold.length && exact === gold.length,
    partial: gold.length === 0 ? (predicted.length === 0 ? 1 : 0) : exact / gold.length,
  };
}
