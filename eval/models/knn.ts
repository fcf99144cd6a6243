import { groupBy } from '../../core/group.js';
import type { ToolCall } from '../../core/model.js';
import { Bm25Index } from '../retrieval/bm25.js';
import { plannedChain } from '../chain-references.js';
import type { EvalItem } from '../dataset.js';

/**
 * `baseline:knn`, a real non-LLM baseline: for each item, the most similar question among the
 * other items of its database (BM25 over question and evidence), its gold calls adapted to
 * this question. The same retriever picks the in-context examples of LLM prompts (`--shots`).
 */
export class NeighbourIndex {
  private readonly byDb = new Map<string, { items: EvalItem[]; index: Bm25Index }>();
  /**
   * Each item's nearest other items, as many as asked for (`asked`), ranked once: an item is
   * asked for its examples and its neighbour by every model, repeat and ReAct turn.
   */
  private readonly rankings = new Map<string, { nearest: EvalItem[]; asked: number }>();

  constructor(items: readonly EvalItem[]) {
    for (const [db, group] of groupBy(items, (item) => item.db))
      this.byDb.set(db, { items: group, index: new Bm25Index(group.map(textOf)) });
  }

  /** The `k` nearest other items of the item's database, nearest first. */
  neighbours(item: EvalItem, k: number): EvalItem[] {
    if (k <= 0) return [];
    let known = this.rankings.get(item.key);
    // Ranked again for more than it holds, unless it holds fewer than were asked for: all there are.
    if (!known || (known.asked < k && known.nearest.length === known.asked)) {
      known = { nearest: this.nearest(item, k), asked: k };
      this.rankings.set(item.key, known);
    }
    return known.nearest.slice(0, k);
  }

  private nearest(item: EvalItem, k: number): EvalItem[] {
    const group = this.byDb.get(item.db);
    if (!group) return [];
    const self = group.items.findIndex((other) => other.key === item.key);
    return group.index.search(textOf(item), k, new Set(self >= 0 ? [self] : [])).map((hit) => group.items[hit.index]);
  }
}

function textOf(item: EvalItem): string {
  return `${item.question} ${item.evidence}`;
}

/**
 * The nearest neighbour's gold calls with this question's values (none without a neighbour);
 * a chain neighbour's bridged arguments as references to the earlier responses, with its
 * transforms (chain-references.ts): its way of carrying values, not the values it carried.
 */
export function knnPlan(item: EvalItem, index: NeighbourIndex): ToolCall[] {
  const [neighbour] = index.neighbours(item, 1);
  if (!neighbour) return [];
  const calls = adaptLiterals(neighbour.goldCalls, textOf(neighbour), textOf(item));
  // Hop k's response is the model's call_<k-1> (call-names.ts positions).
  return neighbour.hops ? plannedChain(calls, neighbour.hops, (k) => `call_${k - 1}`) : calls;
}

/**
 * The calls with their literals moved to another question: a string or number argument that
 * was written in the neighbour's question or evidence (its n-th quoted string, its n-th
 * number) becomes the n-th of the same kind in the new text, when there is one; anything
 * else (labels, column keys, operators, values not in the text) is kept.
 */
export function adaptLiterals(calls: readonly ToolCall[], fromText: string, toText: string): ToolCall[] {
  const from = textValues(fromText);
  const to = textValues(toText);
  const adapt = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const n = from.strings.indexOf(value);
      return n >= 0 && n < to.strings.length ? to.strings[n] : value;
    }
    if (typeof value === 'number') {
      const n = from.numbers.indexOf(value);
      return n >= 0 && n < to.numbers.length ? to.numbers[n] : value;
    }
    if (Array.isArray(value)) return value.map(adapt);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, adapt(v)]));
    return value;
  };
  return calls.map((call) => ({ ...call, arguments: adapt(call.arguments) as Record<string, unknown> }));
}

/** Quoted strings ('…' or "…") and numbers, in the order the text gives them (each once). */
export function textValues(text: string): { strings: string[]; numbers: number[] } {
  const strings = [...text.matchAll(/'([^']*)'|"([^"]*)"/g)].map((m) => m[1] ?? m[2]);
  const outsideQuotes = text.replace(/'[^']*'|"[^"]*"|`[^`]*`/g, ' ');
  const numbers = [...outsideQuotes.matchAll(/(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])/g)].map((m) => Number(m[0]));
  return { strings: [...new Set(strings)], numbers: [...new Set(numbers)] };
}
