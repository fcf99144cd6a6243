import type { ToolCall } from '../../core/model.js';

/**
 * Intent and slot metrics after Live API-Bench (the paper's intent and slot precision,
 * recall and F1), with the alignment spelled out: a predicted tool-call sequence against
 * the gold one.
 *
 * - Intents are the called tool names, position-aware and counted per invocation: the two
 *   sequences are aligned by a longest common subsequence of names (order kept, each call
 *   used once), and the aligned pairs are the matched intents. When several alignments are
 *   that long (two gold calls of one tool, and a prediction that names it once), the one with
 *   the most equal arguments wins, then the earliest: a metric must not depend on which of two
 *   same-named calls a prediction happens to be paired with. Intent precision is matched /
 *   predicted calls, recall matched / gold calls, F1 their harmonic mean.
 * - Slots are the (argument name, value) pairs of the matched calls only (conditional on
 *   the intent): a predicted slot is right when the gold call has the same argument with
 *   an equal value. Labels and call ids are names the caller chose, so a reference `"$X$"`
 *   (or `"$X.field$"`) to a predicted call's output counts as the gold label of the call it
 *   stands for: the gold call it is aligned with, or, for a call no intent matched, the gold
 *   call at the same place between two aligned pairs (a misnamed first call still feeds the
 *   second). Slot precision is right / predicted slots, recall right / gold slots. An item
 *   with no matched intent scores slot 0 (summary.ts also reports the paper's reading, which
 *   leaves such items out).
 */

export interface PrecisionRecall {
  precision: number;
  recall: number;
  f1: number;
}

export interface SequenceAlignment {
  /** Aligned pairs, `[predicted index, gold index]`, in order. */
  pairs: [number, number][];
  /** A predicted call's label → the gold label its output stands for. */
  labels: ReadonlyMap<string, string>;
  intent: PrecisionRecall;
  slot: PrecisionRecall;
}

export function alignSequences(predicted: readonly ToolCall[], gold: readonly ToolCall[]): SequenceAlignment {
  const pairs = alignCalls(predicted, gold);
  const labels = referenceLabels(predicted, gold, pairs);
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
    labels,
    intent: precisionRecall(pairs.length, predicted.length, gold.length),
    // Slots are scored on matched intents only: with none matched there is nothing right to count.
    slot:
      pairs.length === 0 && predicted.length + gold.length > 0
        ? { precision: 0, recall: 0, f1: 0 }
        : precisionRecall(right, predictedSlots, goldSlots),
  };
}

/**
 * The aligned pairs: of the alignments of equal names with the most pairs, the one whose pairs
 * have the most equal arguments (references compared by shape, since what they point at is
 * only known once aligned), and of those the earliest.
 */
export function alignCalls(predicted: readonly ToolCall[], gold: readonly ToolCall[]): [number, number][] {
  // Each gold argument's shape is compared with every predicted call's: blanked once per call and name.
  const predictedShapes = predicted.map(() => new Map<string, unknown>());
  const goldShapes = gold.map(() => new Map<string, unknown>());
  const shapeOf = (shapes: Map<string, unknown>, args: Record<string, unknown>, name: string): unknown => {
    if (!shapes.has(name)) shapes.set(name, referenceShape(args[name]));
    return shapes.get(name);
  };
  // Asked twice of a pair (the table, then the way back through it): counted once.
  const weights = predicted.map(() => new Array<number | undefined>(gold.length));
  const weight = (p: number, g: number) =>
    (weights[p][g] ??= Object.keys(predicted[p].arguments).filter(
      (name) =>
        name in gold[g].arguments &&
        sameValue(
          shapeOf(predictedShapes[p], predicted[p].arguments, name),
          shapeOf(goldShapes[g], gold[g].arguments, name),
        ),
    ).length);
  // A pair outweighs any number of equal arguments: more intents first, then more slots.
  const pairValue = 1 + predicted.reduce((n, c) => n + Object.keys(c.arguments).length, 0);
  // best[i][j]: the value of the best alignment of predicted[i:] and gold[j:].
  const best = Array.from({ length: predicted.length + 1 }, () => new Array<number>(gold.length + 1).fill(0));
  const paired = (i: number, j: number) =>
    predicted[i].name === gold[j].name ? pairValue + weight(i, j) + best[i + 1][j + 1] : -1;
  for (let i = predicted.length - 1; i >= 0; i--) {
    for (let j = gold.length - 1; j >= 0; j--) {
      best[i][j] = Math.max(paired(i, j), best[i + 1][j], best[i][j + 1]);
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < predicted.length && j < gold.length;) {
    if (paired(i, j) === best[i][j]) pairs.push([i++, j++]);
    else if (best[i + 1][j] === best[i][j]) i++;
    else j++;
  }
  return pairs;
}

/** A value with every reference's label blanked: `"$X.f$"` and `"$Y.f$"` look the same. */
function referenceShape(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/^\$[^.$]+((?:\.[^$]*)?)\$$/, '$$$1$$');
  if (Array.isArray(value)) return value.map(referenceShape);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, referenceShape(v)]));
  }
  return value;
}

/**
 * What each predicted label stands for: the aligned pairs' gold labels; in each stretch
 * between two aligned pairs, the unmatched predicted calls stand for the unmatched gold calls
 * of that stretch, in order.
 */
function referenceLabels(
  predicted: readonly ToolCall[],
  gold: readonly ToolCall[],
  pairs: readonly [number, number][],
): Map<string, string> {
  const labels = new Map<string, string>();
  let p = 0;
  let g = 0;
  for (const [pe, ge] of [...pairs, [predicted.length, gold.length] as const]) {
    for (let k = 0; p + k < pe && g + k < ge; k++) labels.set(predicted[p + k].label, gold[g + k].label);
    if (pe < predicted.length) labels.set(predicted[pe].label, gold[ge].label);
    [p, g] = [pe + 1, ge + 1];
  }
  return labels;
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
