import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { openReadOnly } from '../../runtime/sql/readonly.js';

/**
 * Each table's columns as SQLite lists them (`PRAGMA table_info`, what the published runtimes'
 * initialize_active_data reads), once per database file: VAKRA names a table's handle after its
 * first key (for a query of one unaliased table, that bare column), and the published builders
 * list a starting table's keys in this order (key-descriptions.ts).
 */

const cache = new Map<string, Map<string, string[]>>();

/** `<table, lower case> → its columns` of a database file. */
export function tableColumnsOf(file: string): Map<string, string[]> {
  let tables = cache.get(file);
  if (!tables) cache.set(file, (tables = readTableColumns(file)));
  return tables;
}

/** `<table, lower case> → first column` of `db` under a source's databases folder; undefined when no file is found. */
export function firstColumnsOf(databases: string, db: string): Map<string, string> | undefined {
  const file = databaseFile(databases, db);
  if (!file) return undefined;
  return new Map(
    [...tableColumnsOf(file)].flatMap(([table, columns]) => (columns.length ? [[table, columns[0]]] : [])),
  );
}

function readTableColumns(file: string): Map<string, string[]> {
  const connection = openReadOnly(file);
  try {
    const tables = connection.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").all() as {
      name: string;
    }[];
    const columns = connection.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid');
    return new Map(
      tables.map(({ name }) => [name.toLowerCase(), (columns.all(name) as { name: string }[]).map((c) => c.name)]),
    );
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
