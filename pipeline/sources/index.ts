import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { DatabaseInfo, Instance, Rejection } from '../../core/model.js';
import { folderEntries } from './entries.js';
import { readDescriptions, type TableDescriptions } from './descriptions.js';
import { SOURCES, type SourceLayoutName } from './layouts.js';
import type { RawSource, SourceCandidate, SourceRecord } from './records.js';
import { detectLicense, type SourceLicense } from './license.js';
import { readDatabaseInfo, sha256File, type NaturalNames } from './schema.js';

/**
 * The ingest stage: a source folder (or file) → instances, their databases and the
 * bad-input rejections. Bad input never stops a load: each affected instance is rejected
 * with a message saying why, and the rest load. Only a source that cannot be read at all
 * (no such path, no question file, a BIRD question file that is not JSON) throws.
 */

export interface LoadedSource {
  datasetName: string;
  layout: SourceLayoutName;
  /** Provenance: the question file (absolute path, content hash) and the license the source states. */
  questionFile: { path: string; sha256: string };
  license: SourceLicense;
  /** The databases of the loaded instances, in order of first use. */
  databases: DatabaseInfo[];
  /** In source order. */
  instances: Instance[];
  /** Stage `ingest`, category `bad_input`, in source order. */
  rejections: Rejection[];
  /**
   * Source-level news: which question file was chosen, oddities that lost no instance
   * (unreadable description files, ...) and each unusable database with the questions it took.
   */
  warnings: string[];
}

export interface LoadSourceOptions {
  /** Load only the instances of these databases (`--db`); an unknown id throws. */
  dbIds?: string[];
  /** How a database file's content hash is obtained (default: hashed now; see RunStore.fingerprint). */
  fingerprint?: (file: string) => Promise<string>;
}

export async function loadSource(sourcePath: string, options: LoadSourceOptions = {}): Promise<LoadedSource> {
  const { layout, raw } = await readRawSource(path.resolve(sourcePath));
  const records = markDuplicates(raw.records);
  const selected = selectDatabases(records, options.dbIds);
  const inScope = records.filter((record) =>
    record.ok ? selected.has(record.instance.dbId) : !options.dbIds || selected.has(record.db),
  );

  const databases = new Map<string, DatabaseInfo>();
  const failures = new Map<string, string>();
  for (const dbId of selected) {
    const loaded = await loadDatabase(raw, dbId, options.fingerprint);
    if (typeof loaded === 'string') failures.set(dbId, loaded);
    else databases.set(dbId, loaded);
  }

  const instances: Instance[] = [];
  const rejections: Rejection[] = [];
  const rejectRecord = (id: string, db: string, message: string) =>
    rejections.push({ id, db, formulation: 'all', stage: 'ingest', category: 'bad_input', message });
  for (const record of inScope) {
    if (!record.ok) rejectRecord(record.id, record.db, record.message);
    else if (failures.has(record.instance.dbId))
      rejectRecord(record.instance.id, record.instance.dbId, failures.get(record.instance.dbId)!);
    else instances.push(record.instance);
  }
  return {
    datasetName: raw.datasetName,
    layout,
    questionFile: { path: raw.questionFile, sha256: await sha256File(raw.questionFile) },
    license: await detectLicense(path.dirname(raw.questionFile), layout),
    databases: [...new Set(instances.map((instance) => instance.dbId))].map((dbId) => databases.get(dbId)!),
    instances,
    rejections,
    warnings: [...raw.warnings, ...unusableDatabases(failures, rejections)],
  };
}

/** One line per database that could not be used, with how many questions it took with it. */
function unusableDatabases(failures: ReadonlyMap<string, string>, rejections: readonly Rejection[]): string[] {
  return [...failures].map(([dbId, reason]) => {
    const lost = rejections.filter((r) => r.db === dbId && r.message === reason).length;
    return `database ${dbId} unusable, ${lost} question${lost === 1 ? '' : 's'} rejected: ${reason}`;
  });
}

/** A folder or a question file, read by the first layout of SOURCES that accepts it. */
async function readRawSource(sourcePath: string): Promise<{ layout: SourceLayoutName; raw: RawSource }> {
  let info;
  try {
    info = await stat(sourcePath);
  } catch {
    throw new Error(`source ${sourcePath} does not exist`);
  }
  const candidate: SourceCandidate = info.isFile()
    ? { file: sourcePath }
    : { folder: sourcePath, files: (await folderEntries(sourcePath)).files };
  for (const layout of SOURCES) {
    const choice = layout.detect(candidate);
    if (!choice) continue;
    const raw = await layout.read(choice.file);
    return { layout: layout.name, raw: choice.note ? { ...raw, warnings: [choice.note, ...raw.warnings] } : raw };
  }
  const kinds = (side: 'file' | 'folder') => orList(SOURCES.map((layout) => layout.describe[side]));
  throw new Error(
    'file' in candidate
      ? `source ${sourcePath}: expected a folder, ${kinds('file')}`
      : `source ${sourcePath} holds no question file (${kinds('folder')})`,
  );
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** Ids are unique in a source: every later record with a seen id is bad input. */
function markDuplicates(records: SourceRecord[]): SourceRecord[] {
  const firstIndex = new Map<string, number>();
  return records.map((record) => {
    if (!record.ok) return record;
    const { id, index, dbId } = record.instance;
    const first = firstIndex.get(id);
    if (first === undefined) {
      firstIndex.set(id, index);
      return record;
    }
    return {
      ok: false,
      index,
      id,
      db: dbId,
      message: `duplicate id ${id} (first used by the record at position ${first})`,
    };
  });
}

/** The databases to load: all that valid records use, or the `--db` filter (checked). */
function selectDatabases(records: SourceRecord[], filter: string[] | undefined): Set<string> {
  const used = new Set(records.flatMap((record) => (record.ok ? [record.instance.dbId] : [])));
  if (!filter) return used;
  const unknown = filter.filter((dbId) => !used.has(dbId));
  if (unknown.length > 0) {
    throw new Error(
      `unknown database ${unknown.join(', ')} in the db filter; available: ${[...used].sort().join(', ')}`,
    );
  }
  return new Set(filter);
}

/** The database's schema, or why its instances cannot be loaded. */
async function loadDatabase(
  raw: RawSource,
  dbId: string,
  fingerprint?: (file: string) => Promise<string>,
): Promise<DatabaseInfo | string> {
  const candidates = raw.databaseDirs.flatMap((dir) => [
    path.join(dir, dbId, `${dbId}.sqlite`),
    path.join(dir, `${dbId}.sqlite`),
  ]);
  const file = candidates.find((candidate) => existsSync(candidate));
  if (!file) return `unknown db_id ${dbId}: no ${dbId}.sqlite in ${raw.databaseDirs.join(', ')}`;
  try {
    // Descriptions live beside the database in its own folder (BIRD: <db>/database_description).
    const descriptions =
      path.basename(path.dirname(file)) === dbId
        ? await readDescriptions(path.join(path.dirname(file), 'database_description'), raw.warnings)
        : (new Map() as TableDescriptions);
    const info = await readDatabaseInfo(
      dbId,
      file,
      { descriptions, naturalNames: raw.naturalNames.get(dbId) ?? (new Map() as NaturalNames) },
      fingerprint,
    );
    return info.tables.length > 0 ? info : `database ${dbId} (${file}) has no tables`;
  } catch (error) {
    return `database ${dbId} (${file}) cannot be read: ${(error as Error).message}`;
  }
}
