import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { toRecord, type RawSource, type SourceLayout } from './records.js';
import { folderEntries } from './entries.js';
import type { NaturalNames } from './schema.js';

/**
 * The BIRD download layout: `<split>.json` (questions), `<split>_tables.json` (optional),
 * `<split>_databases/<db>/<db>.sqlite` with `<db>/database_description/*.csv`.
 */

/** Question files in order of preference when a folder holds several. */
const QUESTION_FILE_PREFERENCE = [/^dev\.json$/i, /^mini_dev.*\.json$/i, /^train\.json$/i, /\.json$/i];

/**
 * BIRD mini-dev ships its questions once per SQL dialect (`mini_dev_sqlite.json`,
 * `mini_dev_mysql.json`, `mini_dev_postgresql.json`). nl2api runs the SQL on the source's
 * SQLite files (`<db>.sqlite`, the only databases it reads), so among such variants the
 * SQLite one is the file whose SQL runs.
 */
const DIALECT_SUFFIX = /_(sqlite|mysql|postgresql)\.json$/i;
const DIALECT_NAMES: Record<string, string> = { sqlite: 'SQLite', mysql: 'MySQL', postgresql: 'PostgreSQL' };

export function isTablesFile(file: string): boolean {
  return /_tables\.json$/i.test(file);
}

/** The SQL dialect a question file's name declares (`mini_dev_mysql.json` → mysql), if any. */
function declaredDialect(file: string): string | undefined {
  return DIALECT_SUFFIX.exec(file)?.[1].toLowerCase();
}

interface QuestionFileChoice {
  file: string;
  /** Which file was chosen and why, when the folder holds other question files. */
  note?: string;
}

/** The question file BIRD would use in `files` (a folder listing), or undefined. */
function pickQuestionFile(files: readonly string[]): QuestionFileChoice | undefined {
  const candidates = files.filter((file) => /\.json$/i.test(file) && !isTablesFile(file)).sort();
  for (const pattern of QUESTION_FILE_PREFERENCE) {
    const matches = candidates.filter((file) => pattern.test(file));
    if (matches.length === 0) continue;
    const sqlite = matches.find((file) => declaredDialect(file) === 'sqlite');
    const file = sqlite ?? matches[0];
    const others = candidates.filter((other) => other !== file);
    if (others.length === 0) return { file };
    const why =
      sqlite && others.some((other) => declaredDialect(other))
        ? 'its SQL is written for SQLite, the dialect of the databases nl2api runs on'
        : 'first by name: dev, mini_dev*, train, then alphabetical';
    return {
      file,
      note: `using ${file} (${why}); also present: ${others.join(', ')}; pass a question file as --source to use another`,
    };
  }
  return undefined;
}

/** The BIRD layout as a SOURCES entry (layouts.ts): a `.json` question file, or a folder holding one. */
export const birdLayout: SourceLayout<'bird'> = {
  name: 'bird',
  describe: { file: 'a BIRD .json question file', folder: 'BIRD *.json' },
  detect(source) {
    if ('file' in source) return /\.json$/i.test(source.file) ? { file: source.file } : undefined;
    // Only a folder involves a choice: a question file named as the source is used without comment.
    const choice = pickQuestionFile(source.files);
    return choice && { file: path.join(source.folder, choice.file), note: choice.note };
  },
  read: readBirdSource,
};

async function readBirdSource(questionPath: string): Promise<RawSource> {
  const root = path.dirname(questionPath);
  const split = path.basename(questionPath, path.extname(questionPath));
  const warnings: string[] = [];
  const { files, folders: directories } = await folderEntries(root);
  const dialect = declaredDialect(path.basename(questionPath));
  if (dialect && dialect !== 'sqlite') {
    warnings.push(
      `${path.basename(questionPath)} holds ${DIALECT_NAMES[dialect]} SQL; nl2api runs it on SQLite databases: expect gold_error rejections`,
    );
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(questionPath, 'utf8'));
  } catch (error) {
    throw new Error(`BIRD question file ${questionPath} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
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
  const naturalNames = tablesFile
    ? await readNaturalNames(path.join(root, tablesFile), warnings)
    : new Map<string, NaturalNames>();

  return {
    datasetName: datasetNameOf(split),
    questionFile: questionPath,
    records,
    databaseDirs,
    naturalNames,
    warnings,
  };
}

/** `dev` → bird-dev; the SQLite variant of mini-dev is BIRD mini-dev itself (bird-mini-dev), others keep their dialect. */
function datasetNameOf(split: string): string {
  return `bird-${split
    .replace(/_sqlite$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')}`;
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
    const {
      db_id: dbId,
      table_names_original: tables,
      column_names_original: originals,
      column_names: naturals,
    } = entry ?? {};
    if (typeof dbId !== 'string' || !Array.isArray(tables) || !Array.isArray(originals) || !Array.isArray(naturals))
      continue;
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
