import type { DatabaseInfo, ForeignKey } from '../../core/model.js';
import type { SchemaColumn } from './endpoint-sites.js';

/**
 * Which columns hold the same values, so that one endpoint's field can stand for another's
 * parameter: a column and itself, and the columns a declared foreign key joins, or one the data
 * proves (`proven`: proven-keys.ts), through any number of keys (`hero_power.hero_id` →
 * `superhero.id` ← `hero_attribute.hero_id`). Names compare case-insensitively, as SQLite's do.
 */
export function linkedColumns(
  db: DatabaseInfo,
  proven: readonly (ForeignKey & { table: string })[] = [],
): (a: SchemaColumn, b: SchemaColumn) => boolean {
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    return root;
  };
  const keys = [
    ...db.tables.flatMap((table) => table.foreignKeys.map((fk) => ({ ...fk, table: table.name }))),
    ...proven,
  ];
  for (const fk of keys) {
    const a = find(keyOf({ table: fk.table, column: fk.column }));
    const b = find(keyOf({ table: fk.refTable, column: fk.refColumn }));
    if (a !== b) parent.set(a, b);
  }
  return (a, b) => find(keyOf(a)) === find(keyOf(b));
}

const keyOf = (column: SchemaColumn) => `${column.table.toLowerCase()}.${column.column.toLowerCase()}`;
