import type { DatabaseInfo } from '../../core/model.js';

/**
 * Column keys of SLOT tables (docs/TOOLS.md, "Column keys"): `<table>_<column>` for the
 * first occurrence of a table in the join, `<table>_<n>_<column>` for the n-th.
 */

export interface StartingTableRef {
  alias: string;
  table: string;
}

export interface StartingKey {
  /** The key models see. */
  key: string;
  alias: string;
  table: string;
  column: string;
}

export function startingTableKeys(db: DatabaseInfo, tables: readonly StartingTableRef[]): StartingKey[] {
  const occurrences = new Map<string, number>();
  const keys: StartingKey[] = [];
  const taken = new Set<string>();
  for (const ref of tables) {
    const info = db.tables.find((t) => t.name.toLowerCase() === ref.table.toLowerCase());
    if (!info) throw new Error(`unknown table "${ref.table}" in database ${db.dbId}`);
    const n = (occurrences.get(info.name) ?? 0) + 1;
    occurrences.set(info.name, n);
    const prefix = n === 1 ? info.name : `${info.name}_${n}`;
    for (const column of info.columns) {
      const key = derivedKey(taken, `${prefix}_${column.name}`);
      taken.add(key);
      keys.push({ key, alias: ref.alias, table: info.name, column: column.name });
    }
  }
  return keys;
}

/** `base` if free, else `base_2`, `base_3`, ... (keys never collide). */
export function derivedKey(existing: Iterable<string>, base: string): string {
  const taken = existing instanceof Set ? (existing as Set<string>) : new Set(existing);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}_${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * join_data's keys (inner / left): `keys`, then each of `otherKeys` in order, renamed by
 * derivedKey where taken; `renamed` maps each other key to its name in the output.
 */
export function joinedKeys(
  keys: readonly string[],
  otherKeys: readonly string[],
): { keys: string[]; renamed: Map<string, string> } {
  const all = [...keys];
  const renamed = new Map<string, string>();
  for (const key of otherKeys) {
    const name = derivedKey(all, key);
    all.push(name);
    renamed.set(key, name);
  }
  return { keys: all, renamed };
}
