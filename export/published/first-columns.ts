import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { openReadOnly } from '../../runtime/sql/readonly.js';

/**
 * Each table's first column as SQLite lists it (`PRAGMA table_info`, what VAKRA's
 * initialize_active_data reads): VAKRA names a table's handle after its first key, which for
 * a query of one unaliased table is that bare column. Read once per database file.
 */

const cache = new Map<string, Map<string, string>>();

/** `<table, lower case> → first column` of `db` under a source's databases folder; undefined when no file is found. */
export function firstColumnsOf(databases: string, db: string): Map<string, string> | undefined {
  const file = databaseFile(databases, db);
  if (!file) return undefined;
  let columns = cache.get(file);
  if (!columns) cache.set(file, (columns = readFirstColumns(file)));
  return columns;
}

function readFirstColumns(file: string): Map<string, string> {
  const connection = openReadOnly(file);
  try {
    const tables = connection.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").all() as {
      name: string;
    }[];
    const first = new Map<string, string>();
    for (const { name } of tables) {
      const column = connection.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid LIMIT 1').get(name) as
        { name: string } | undefined;
      if (column) first.set(name.toLowerCase(), column.name);
    }
    return first;
  } finally {
    connection.close();
  }
}

/** Where the source layouts keep a database (pipeline/sources): `<db>/<db>.sqlite` or `<db>.sqlite`, in the folder, `databases/` or BIRD's `<split>_databases/`. */
export function databaseFile(databases: string, db: string): string | undefined {
  const folders = [databases, path.join(databases, 'databases')];
  if (existsSync(databases))
    for (const entry of readdirSync(databases))
      if (entry.endsWith('_databases')) folders.push(path.join(databases, entry));
  return folders
    .flatMap((folder) => [path.join(folder, db, `${db}.sqlite`), path.join(folder, `${db}.sqlite`)])
    .find((candidate) => existsSync(candidate));
}
