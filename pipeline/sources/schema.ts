import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { ColumnInfo, DatabaseInfo, ForeignKey, TableInfo } from '../../core/model.js';
import { declaredCollations } from '../../runtime/sql/collations.js';
import { openReadOnly } from '../../runtime/sql/readonly.js';
import type { TableDescriptions } from './descriptions.js';

/**
 * A database's schema as the SQLite file declares it (original-case names, declared types,
 * keys), annotated with the dataset's column descriptions.
 */

/** Natural-language column names (BIRD `*_tables.json`): lower-cased table → column → name. */
export type NaturalNames = Map<string, Map<string, string>>;

export interface SchemaAnnotations {
  descriptions: TableDescriptions;
  naturalNames: NaturalNames;
}

/**
 * A database's schema and annotations. Throws when the file is missing or not a readable
 * SQLite database. `fingerprintOf`: the file's content hash (default: hash it now; a run store
 * may remember it).
 */
export async function readDatabaseInfo(
  dbId: string,
  dbPath: string,
  annotations: SchemaAnnotations,
  fingerprintOf: (file: string) => Promise<string> = sha256File,
): Promise<DatabaseInfo> {
  const fingerprint = await fingerprintOf(dbPath);
  const db = openReadOnly(dbPath);
  try {
    const tableNames = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
      .pluck()
      .all() as string[];
    const tableInfo = db.prepare('SELECT name, type, pk, "notnull" FROM pragma_table_info(?) ORDER BY cid');
    const foreignKeyList = db.prepare(
      'SELECT "table", "from", "to", seq FROM pragma_foreign_key_list(?) ORDER BY id, seq',
    );
    const uniqueIndexes = db.prepare(
      'SELECT name FROM pragma_index_list(?) WHERE "unique" = 1 AND partial = 0 ORDER BY seq',
    );
    const indexColumns = db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno');
    // Unique keys over plain columns (an expression's column name is NULL: not a key of ours).
    const uniqueKeys = (table: string) =>
      (uniqueIndexes.pluck().all(table) as string[])
        .map((index) => indexColumns.pluck().all(index) as (string | null)[])
        .filter((columns): columns is string[] => columns.length > 0 && columns.every((c) => c !== null));
    const createSql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck();
    const raw = tableNames.map((name) => ({
      name,
      columns: tableInfo.all(name) as { name: string; type: string; pk: number; notnull: number }[],
      foreignKeys: foreignKeyList.all(name) as ForeignKeyRow[],
      collations: declaredCollations((createSql.get(name) as string | null) ?? ''),
    }));
    const primaryKeys = new Map(
      raw.map((table) => [
        table.name.toLowerCase(),
        table.columns
          .filter((column) => column.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((column) => column.name),
      ]),
    );
    const tables: TableInfo[] = raw.map((table) => ({
      name: table.name,
      columns: table.columns.map((column) => {
        const collation = table.collations.get(column.name.toLowerCase());
        return {
          ...annotate(table.name, column.name, column.type, annotations),
          ...(collation ? { collation } : {}),
          ...(column.notnull ? { notNull: true } : {}),
        };
      }),
      primaryKey: primaryKeys.get(table.name.toLowerCase()) ?? [],
      uniqueKeys: uniqueKeys(table.name),
      foreignKeys: resolveForeignKeys(table.foreignKeys, primaryKeys),
    }));
    return { dbId, path: dbPath, fingerprint, tables };
  } finally {
    db.close();
  }
}

function annotate(table: string, column: string, type: string, annotations: SchemaAnnotations): ColumnInfo {
  const described = annotations.descriptions.get(table.toLowerCase())?.get(column.toLowerCase());
  const natural = annotations.naturalNames.get(table.toLowerCase())?.get(column.toLowerCase());
  return {
    name: column,
    type,
    description: described?.description || natural || column.replace(/_/g, ' '),
    valueDescription: described?.valueDescription ?? '',
  };
}

/**
 * `REFERENCES t` without a column refers to t's primary key; composite keys list one
 * row per column, in key order.
 */
function resolveForeignKeys(rows: ForeignKeyRow[], primaryKeys: Map<string, string[]>): ForeignKey[] {
  return rows.map((row) => ({
    column: row.from,
    refTable: row.table,
    refColumn: row.to ?? primaryKeys.get(row.table.toLowerCase())?.[row.seq] ?? '',
  }));
}

interface ForeignKeyRow {
  table: string;
  from: string;
  to: string | null;
  /** Position of this column within its (possibly composite) key. */
  seq: number;
}

export function sha256File(filePath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(filePath)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
