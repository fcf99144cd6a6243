import { hashJson } from '../core/hash.js';
import { mulberry32 } from '../core/random.js';
import type { CorpusItem } from './corpus.js';

/**
 * A mixture of several sources (`--from A --from B`): a sample whose question another source
 * already gave in the same formulation (the same question text, or the same SQL, after
 * normalizing case and spacing) is dropped with a note of which it duplicates; each source's
 * samples then appear `weight` times (whole copies, and for a fractional weight one more copy
 * of a seeded share of its questions, decided per question so its formulations agree).
 */

export interface Duplicate {
  /** The dropped sample and the kept sample it repeats. */
  key: string;
  of: string;
  by: 'question' | 'sql';
}

export interface MixedItem extends CorpusItem {
  /** 0 for the sample itself, 1… for the extra copies a weight above 1 asks for. */
  copy: number;
}

export const normalizedText = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** Items in source order with the cross-source duplicates dropped. */
export function dedupeAcrossSources(items: readonly CorpusItem[]): { kept: CorpusItem[]; duplicates: Duplicate[] } {
  const seen = { question: new Map<string, CorpusItem>(), sql: new Map<string, CorpusItem>() };
  const duplicates: Duplicate[] = [];
  const kept = items.filter((entry) => {
    const keys = {
      question: `${entry.item.formulation}\u0000${normalizedText(entry.item.question)}`,
      sql: `${entry.item.formulation}\u0000${normalizedText(entry.item.sql)}`,
    };
    for (const by of ['question', 'sql'] as const) {
      const earlier = seen[by].get(keys[by]);
      if (earlier && earlier.source !== entry.source) {
        duplicates.push({ key: entry.key, of: earlier.key, by });
        return false;
      }
    }
    for (const by of ['question', 'sql'] as const) if (!seen[by].has(keys[by])) seen[by].set(keys[by], entry);
    return true;
  });
  return { kept, duplicates };
}

/** How many times a unit appears under its source's weight (seeded per unit, so independent of the rest). */
export function copiesOf(unit: string, weight: number, seed: number): number {
  const whole = Math.floor(weight);
  const fraction = weight - whole;
  if (fraction === 0) return whole;
  const draw = mulberry32(parseInt(hashJson([seed, unit]).slice(0, 8), 16))();
  return whole + (draw < fraction ? 1 : 0);
}

export function weighted(items: readonly CorpusItem[], seed: number): MixedItem[] {
  return items.flatMap((entry) =>
    Array.from({ length: copiesOf(entry.unit, entry.source.weight, seed) }, (_, copy) => ({ ...entry, copy })),
  );
}
