import type { DatabaseInfo } from '../../core/model.js';
import type { SchemaColumn } from './endpoint-sites.js';

/**
 * Which columns hold the same values, so that one endpoint's field can stand for another's
 * parameter: a column and itself, and the columns a declared foreign key joins, through any
 * number of keys (`hero_power.hero_id` → `superhero.id` ← `hero_attribute.hero_id`). Names
 * compare case-insensitively, as SQLite's do.
 */
export function linkedColumns(db: DatabaseInfo): (a: SchemaColumn, b: SchemaColumn) => boolean {
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    return root;
  };
  for (const table of db.tables)
    for (const fk of table.foreignKeys) {
      const a = find(keyOf({ table: table.name, column: fk.column }));
      const b = find(keyOf({ table: fk.refTable, column: fk.refColumn }));
      if (a !== b) parent.set(a, b);
    }
  return (a, b) => find(keyOf(a)) === find(keyOf(b));
}

const keyOf = (column: SchemaColumn) => `${column.table.toLowerCase()}.${column.column.toLowerCase()}`;
