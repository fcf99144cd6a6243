import type { ToolCall } from '../../core/model.js';

/**
 * Intent and slot metrics after Live API-Bench (the paper's intent and slot precision,
 * recall and F1), with the alignment spelled out: a predicted tool-call sequence against
 * the gold one.
 *
 * - Intents are the called tool names, position-aware and counted per invocation: the two
 *   sequences are aligned by their longest common subsequence of names (order kept, each
 *   call used once), and the aligned pairs are the matched intents. Intent precision is
 *   matched / predicted calls, recall matched / gold calls, F1 their harmonic mean.
 * - Slots are the (argument name, value) pairs of the matched calls only (conditional on
 *   the intent): a predicted slot is right when the gold call has the same argument with
 *   an equal value. Labels are names the caller chose, so a reference `"$X$"` (or
 *   `"$X.field$"`) to a predicted call's output counts as the gold label of the call it is
 *   aligned with. Slot precision is right / predicted slots, recall right / gold slots
 *   (all 0 when no intent matched).
 */

export interface PrecisionRecall {
  precision: number;
  recall: number;
  f1: number;
}

export interface SequenceAlignment {
  /** Aligned pairs, `[predicted index, gold index]`, in order. */
  pairs: [number, number][];
  intent: PrecisionRecall;
  slot: PrecisionRecall;
}

export function alignSequences(predicted: readonly ToolCall[], gold: readonly ToolCall[]): SequenceAlignment {
  const pairs = longestCommonSubsequence(
    predicted.map((c) => c.name),
    gold.map((c) => c.name),
  );
  const labels = new Map(pairs.map(([p, g]) => [predicted[p].label, gold[g].label]));
  let right = 0;
  let predictedSlots = 0;
  let goldSlots = 0;
  for (const [p, g] of pairs) {
    const mine = predicted[p].arguments;
    const theirs = gold[g].arguments;
    predictedSlots += Object.keys(mine).length;
    goldSlots += Object.keys(theirs).length;
    for (const [name, value] of Object.entries(mine)) {
      if (name in theirs && sameValue(relabel(value, labels), theirs[name])) right++;
    }
  }
  return {
    pairs,
    intent: precisionRecall(pairs.length, predicted.length, gold.length),
    // Slots are scored on matched intents only: with none matched there is nothing right to count.
    slot:
      pairs.length === 0 && predicted.length + gold.length > 0
        ? { precision: 0, recall: 0, f1: 0 }
        : precisionRecall(right, predictedSlots, goldSlots),
  };
}

/**
 * Precision, recall and F1 from counts. With nothing predicted and nothing expected the
 * answer is perfect (1, 1, 1); with one side empty the other's measure is 0.
 */
export function precisionRecall(matched: number, predicted: number, expected: number): PrecisionRecall {
  if (predicted === 0 && expected === 0) return { precision: 1, recall: 1, f1: 1 };
  const precision = predicted === 0 ? 0 : matched / predicted;
  const recall = expected === 0 ? 0 : matched / expected;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}

/** Index pairs of a longest common subsequence of `a` and `b` (the earliest one on ties). */
export function longestCommonSubsequence<T>(a: readonly T[], b: readonly T[]): [number, number][] {
  // lengths[i][j]: the LCS length of a[i:] and b[j:].
  const lengths = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i][j] = a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) pairs.push([i++, j++]);
    else if (lengths[i + 1][j] >= lengths[i][j + 1]) i++;
    else j++;
  }
  return pairs;
}

/** `"$X$"` / `"$X.field$"` references rewritten through `labels`, anywhere in a value. */
export function relabel(value: unknown, labels: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') {
    const reference = /^\$([^.$]+)((?:\.[^$]*)?)\$$/.exec(value);
    const label = reference && labels.get(reference[1]);
    return label ? `$${label}${reference[2]}$` : value;
  }
  if (Array.isArray(value)) return value.map((v) => relabel(v, labels));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, relabel(v, labels)]));
  }
  return value;
}

/** Equal as JSON values: key order ignored, 1 and 1.0 the same number. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    return sameValue(ka, kb) && ka.every((k) => sameValue(ra[k], rb[k]));
  }
  return a === b;
}
