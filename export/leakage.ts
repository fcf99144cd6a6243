import { groupBy } from '../core/group.js';
import { tokenize } from '../eval/retrieval/bm25.js';
import type { SplitName } from './splits.js';

/**
 * What a split shares across its parts (issue 13's leakage report): databases, identical
 * questions, near-identical questions (Jaccard similarity of their word sets at or above a
 * threshold, 0.8 by default), identical SQL and identical call sequences. Pairs are counted
 * once per pair of items in different splits; a few examples of each are kept.
 */

export interface LeakageItem {
  key: string;
  db: string;
  question: string;
  sql: string;
  /** The item's call sequences (one per formulation), as canonical text: identical sequences compare equal. */
  calls: string[];
}

export interface LeakageFinding {
  pairs: number;
  examples: [string, string][];
}

export interface LeakageReport {
  /** Databases with items in more than one split. */
  sharedDatabases: string[];
  identicalQuestions: LeakageFinding;
  nearDuplicateQuestions: LeakageFinding & { threshold: number };
  identicalSql: LeakageFinding;
  identicalCalls: LeakageFinding;
}

const EXAMPLES = 5;

export function leakageReport(
  items: readonly LeakageItem[],
  assignment: ReadonlyMap<string, SplitName>,
  threshold = 0.8,
): LeakageReport {
  const splitOf = (item: LeakageItem) => assignment.get(item.key);
  const dbSplits = new Map<string, Set<SplitName | undefined>>();
  for (const item of items) dbSplits.set(item.db, (dbSplits.get(item.db) ?? new Set()).add(splitOf(item)));
  const words = items.map((item) => new Set(tokenize(item.question)));
  const near: LeakageFinding = { pairs: 0, examples: [] };
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      if (splitOf(items[i]) === splitOf(items[j])) continue;
      if (jaccard(words[i], words[j]) >= threshold) record(near, items[i].key, items[j].key);
    }
  }
  return {
    sharedDatabases: [...dbSplits]
      .filter(([, splits]) => splits.size > 1)
      .map(([db]) => db)
      .sort(),
    identicalQuestions: identical(items, splitOf, (item) => [item.question.trim().toLowerCase()]),
    nearDuplicateQuestions: { ...near, threshold },
    identicalSql: identical(items, splitOf, (item) => [item.sql.replace(/\s+/g, ' ').trim().toLowerCase()]),
    identicalCalls: identical(items, splitOf, (item) => item.calls),
  };
}

/** Pairs of items in different splits that share a value (each pair once). */
function identical(
  items: readonly LeakageItem[],
  splitOf: (item: LeakageItem) => SplitName | undefined,
  valuesOf: (item: LeakageItem) => string[],
): LeakageFinding {
  const finding: LeakageFinding = { pairs: 0, examples: [] };
  const counted = new Set<string>();
  const entries = items.flatMap((item) => [...new Set(valuesOf(item))].map((value) => ({ item, value })));
  for (const group of groupBy(entries, (entry) => entry.value).values()) {
    for (let i = 0; i < group.length; i++)
      for (let j = i + 1; j < group.length; j++) {
        const [a, b] = [group[i].item, group[j].item];
        const pair = `${a.key}\u0000${b.key}`;
        if (splitOf(a) === splitOf(b) || counted.has(pair)) continue;
        counted.add(pair);
        record(finding, a.key, b.key);
      }
  }
  return finding;
}

function record(finding: LeakageFinding, a: string, b: string): void {
  finding.pairs++;
  if (finding.examples.length < EXAMPLES) finding.examples.push([a, b]);
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}
