import type { DataKey, Verdict } from '../core/model.js';

/**
 * The dependencies check: a decomposition that grouped a column only because the data made
 * its table's key (`SlotSequence.dataDependencies`, generators/slot/dependencies.ts) holds
 * only where that key does. So the key is counted again on the database and on every variant
 * the sample is verified on; a variant where it repeats a value or holds NULL rejects the
 * sample as `dependencies:<variant>`. The accepted verdict lists where each key held.
 */

/** A key counted on one state of the database: its rows, and its distinct values without NULL. */
export interface KeyCount extends DataKey {
  rows: number;
  distinct: number;
}

/** The keys counted on one state of the database (`original`, or a variant's name). */
export interface KeyRun {
  variant: string;
  counts: KeyCount[];
}

/** A data key and the database states it was unique and non-NULL on. */
export interface KeyHeld extends DataKey {
  holdsOn: string[];
}

export interface DependencyVerdict extends Verdict {
  /** On success: every data key the sequence relied on, with where it held. */
  keys?: KeyHeld[];
}

/**
 * A key holds where no row repeats its values and none has a NULL in it; a selection key,
 * where at most one row holds its values (counted as that many rows, at most 1 distinct).
 */
export const keyHolds = (count: KeyCount): boolean => count.distinct === count.rows;

/** `table.a, b`, or for a selection key `table.(a, b) = ('x', 2)`. */
export function keyName(key: DataKey): string {
  if (!key.values) return `${key.table}.${key.columns.join(', ')}`;
  const values = key.values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
  return `${key.table}.(${key.columns.join(', ')}) = (${values.join(', ')})`;
}

export function checkDependencies(runs: readonly KeyRun[]): DependencyVerdict {
  const held = new Map<string, KeyHeld>();
  for (const { variant, counts } of runs) {
    for (const count of counts) {
      const name = keyName(count);
      if (!keyHolds(count)) {
        return {
          ok: false,
          category: `dependencies:${variant}`,
          message: count.values
            ? `${name} holds on ${count.rows} rows of ${variant}, not at most one`
            : `${name} is no key on ${variant}: ${count.rows} rows, ${count.distinct} distinct non-NULL values`,
        };
      }
      const { table, columns, values } = count;
      const key = held.get(name) ?? { table, columns, ...(values ? { values } : {}), holdsOn: [] };
      key.holdsOn.push(variant);
      held.set(name, key);
    }
  }
  const keys = [...held.values()];
  const states = runs.map((run) => run.variant).join(', ');
  const claims = keys.map((k) => `${keyName(k)} ${k.values ? 'held by at most one row' : 'unique and never NULL'}`);
  return { ok: true, category: 'data_keys', message: `${claims.join('; ')} on ${states}`, keys };
}
