import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { toRecord, type RawSource } from './records.js';
import { folderEntries } from './entries.js';
import type { NaturalNames } from './schema.js';

/**
 * The BIRD download layout: `<split>.json` (questions), `<split>_tables.json` (optional),
 * `<split>_databases/<db>/<db>.sqlite` with `<db>/database_description/*.csv`.
 */

/** Question files in order of preference when a folder holds several. */
const QUESTION_FILE_PREFERENCE = [/^dev\.json$/i, /^mini_dev.*\.json$/i, /^train\.json$/i, /\.json$/i];

export function isTablesFile(file: string): boolean {
  return /_tables\.json$/i.test(file);
}

/** The question file BIRD would use in `files` (a folder listing), or undefined. */
export function pickQuestionFile(files: readonly string[]): string | undefined {
  const candidates = files.filter((file) => /\.json$/i.test(file) && !isTablesFile(file)).sort();
  for (const pattern of QUESTION_FILE_PREFERENCE) {
    const match = candidates.find((file) => pattern.test(file));
    if (match) return match;
  }
  return undefined;
}

export async function readBirdSource(questionPath: string): Promise<RawSource> {
  const root = path.dirname(questionPath);
  const split = path.basename(questionPath, path.extname(questionPath));
  const warnings: string[] = [];
  const { files, folders: directories } = await folderEntries(root);
  const others = files.filter((name) => name !== path.basename(questionPath) && pickQuestionFile([name]));
  if (others.length > 0) {
    warnings.push(`using ${path.basename(questionPath)}; also present: ${others.join(', ')}`);
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(questionPath, 'utf8'));
  } catch (error) {
    throw new Error(`BIRD question file ${questionPath} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new Error(`BIRD question file ${questionPath} must hold a JSON array`);
  const records = parsed.map((value, index) =>
    toRecord(value, index, `record ${index}`, { id: ['question_id'], idFromIndex: true }),
  );

  const databaseDirs = [
    ...directories.filter((name) => name === `${split}_databases`),
    ...directories.filter((name) => name !== `${split}_databases` && /_databases$/.test(name)).sort(),
    ...directories.filter((name) => name === 'databases'),
  ].map((name) => path.join(root, name));
  databaseDirs.push(root);

  const tableFiles = files.filter(isTablesFile);
  const tablesFile = tableFiles.find((name) => name === `${split}_tables.json`) ?? tableFiles[0];
  const naturalNames = tablesFile ? await readNaturalNames(path.join(root, tablesFile), warnings) : new Map();

  return {
    datasetName: `bird-${split.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
    layout: 'bird',
    records,
    databaseDirs,
    naturalNames,
    warnings,
  };
}

interface TablesEntry {
  db_id?: unknown;
  table_names_original?: unknown;
  column_names_original?: unknown;
  column_names?: unknown;
}

/** `*_tables.json`: the natural-language column names, a fallback for missing descriptions. */
async function readNaturalNames(file: string, warnings: string[]): Promise<Map<string, NaturalNames>> {
  const byDb = new Map<string, NaturalNames>();
  let entries: unknown;
  try {
    entries = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    warnings.push(`${file} unreadable, ignored: ${(error as Error).message}`);
    return byDb;
  }
  if (!Array.isArray(entries)) return byDb;
  for (const entry of entries as TablesEntry[]) {
    const { db_id: dbId, table_names_original: tables, column_names_original: originals, column_names: naturals } = entry ?? {};
    if (typeof dbId !== 'string' || !Array.isArray(tables) || !Array.isArray(originals) || !Array.isArray(naturals)) continue;
    const names: NaturalNames = new Map();
    originals.forEach((original: unknown, i: number) => {
      const natural: unknown = naturals[i];
      if (!Array.isArray(original) || !Array.isArray(natural)) return;
      const [tableIndex, column] = original as [unknown, unknown];
      const table: unknown = typeof tableIndex === 'number' ? tables[tableIndex] : undefined;
      if (typeof table !== 'string' || typeof column !== 'string' || typeof natural[1] !== 'string') return;
      const columns = names.get(table.toLowerCase()) ?? new Map<string, string>();
      columns.set(column.toLowerCase(), natural[1]);
      names.set(table.toLowerCase(), columns);
    });
    byDb.set(dbId, names);
  }
  return byDb;
}
