import { groupBy } from '../core/group.js';
import { mulberry32 } from '../core/random.js';

/**
 * Splits of an exported corpus that do not leak (issue 13): `by-database` puts every database
 * in exactly one split (a benchmark's default: a model is tested on databases it never saw);
 * `by-question` cuts each (database, difficulty) stratum by the split shares. Both are pure
 * functions of the items and a seed: the same export gives the same splits on any machine.
 */

export const SPLIT_NAMES = ['train', 'validation', 'test'] as const;
export type SplitName = (typeof SPLIT_NAMES)[number];
export type SplitShares = Record<SplitName, number>;

export const DEFAULT_SHARES: SplitShares = { train: 0.8, validation: 0.1, test: 0.1 };

export interface SplitItem {
  key: string;
  db: string;
  difficulty: string | null;
}

/** Items in a fixed order, shuffled by the seed (Fisher-Yates over mulberry32). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const random = mulberry32(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * How many of `n` go to each split: the shares rounded by largest remainder (ties to the
 * earlier split), so the counts add up to `n` exactly.
 */
export function apportion(n: number, shares: SplitShares): Record<SplitName, number> {
  const total = SPLIT_NAMES.reduce((sum, s) => sum + shares[s], 0);
  const exact = SPLIT_NAMES.map((s) => (n * shares[s]) / total);
  const counts = exact.map(Math.floor);
  const order = exact
    .map((x, i) => ({ i, remainder: x - Math.floor(x) }))
    .sort((a, b) => b.remainder - a.remainder || a.i - b.i);
  const left = n - counts.reduce((a, b) => a + b, 0);
  for (let k = 0; k < left; k++) counts[order[k].i]++;
  return Object.fromEntries(SPLIT_NAMES.map((s, i) => [s, counts[i]])) as Record<SplitName, number>;
}

/**
 * Every database in one split: databases in seeded order, each to the split furthest below
 * its share of items so far (so item counts come close to the shares whatever the database
 * sizes), the largest databases placed first.
 */
export function splitByDatabase(
  items: readonly SplitItem[],
  shares: SplitShares,
  seed: number,
): Map<string, SplitName> {
  const byDb = groupBy(items, (item) => item.db);
  const dbs = shuffled([...byDb.keys()].sort(), seed).sort((a, b) => byDb.get(b)!.length - byDb.get(a)!.length);
  const total = SPLIT_NAMES.reduce((sum, s) => sum + shares[s], 0);
  const filled: Record<SplitName, number> = { train: 0, validation: 0, test: 0 };
  const assignment = new Map<string, SplitName>();
  for (const db of dbs) {
    const size = byDb.get(db)!.length;
    // The split whose target (in items) is least met; a split with no share never takes any.
    const split = SPLIT_NAMES.filter((s) => shares[s] > 0).reduce((best, s) =>
      shares[s] * items.length - filled[s] * total > shares[best] * items.length - filled[best] * total ? s : best,
    );
    filled[split] += size;
    for (const item of byDb.get(db)!) assignment.set(item.key, split);
  }
  return assignment;
}

/** Each (database, difficulty) stratum cut by the shares, after a seeded shuffle. */
export function splitByQuestion(
  items: readonly SplitItem[],
  shares: SplitShares,
  seed: number,
): Map<string, SplitName> {
  const assignment = new Map<string, SplitName>();
  const strata = groupBy(items, (item) => `${item.db}\u0000${item.difficulty ?? ''}`);
  for (const stratumKey of [...strata.keys()].sort()) {
    const stratum = shuffled(strata.get(stratumKey)!, seed);
    const counts = apportion(stratum.length, shares);
    let next = 0;
    for (const split of SPLIT_NAMES) {
      for (const item of stratum.slice(next, next + counts[split])) assignment.set(item.key, split);
      next += counts[split];
    }
  }
  return assignment;
}
