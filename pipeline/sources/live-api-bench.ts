import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { folderEntries } from './entries.js';
import { toRecord, type RawSource, type SourceLayout, type SourceRecord } from './records.js';

/**
 * A folder of Live API-Bench samples as published (and as `nl2api export --format
 * live-api-bench` writes them): one JSON array per database, `<db>.json`, of SLOT / SEL
 * records (`input`, `query`, `dataset_name`, `sample_id`, …) or REST-BIRD records (`question`,
 * `SQL`, `db_id`, `question_id`, …). Each record is a question: its id, database, question,
 * SQL, evidence and difficulty; its calls and answers are for others to replay. Negatives
 * (`negative: true`) are variants of another record and are skipped, as are weighted copies
 * (a record repeated whole). Databases as for the generic layout: `<dir>/<db>.sqlite`,
 * `<dir>/databases/<db>.sqlite`, `<dir>/<db>/<db>.sqlite`, `<dir>/databases/<db>/<db>.sqlite`.
 *
 * Detection reads the files: a folder is this layout only when every `.json` in it (BIRD's
 * `*_tables.json` aside) is a JSON array whose first record has the sample fields, so BIRD
 * folders (`dev.json` records lack `dataset_name`), nl2api output folders (`manifest.json` is
 * an object) and folders of tool lists stay with the layouts that own them.
 */

const JSON_FILE = /\.json$/i;
const TABLES_FILE = /_tables\.json$/i;

/** How much of a file detection reads to rule it out: every sample record names its dataset early. */
const HEAD_BYTES = 64 * 1024;

export const liveApiBenchLayout: SourceLayout<'live-api-bench'> = {
  name: 'live-api-bench',
  describe: { file: 'a Live API-Bench <db>.json file', folder: 'Live API-Bench <db>.json arrays' },
  detect(source) {
    if ('file' in source) {
      if (!JSON_FILE.test(source.file) || !isSampleFile(source.file)) return undefined;
      const folder = path.dirname(source.file);
      return {
        file: source.file,
        note: `${source.file} is one database of a Live API-Bench folder: reading every <db>.json in ${folder} (--db chooses databases)`,
      };
    }
    const files = sampleFileCandidates(source.files);
    if (files.length === 0) return undefined;
    const paths = files.map((file) => path.join(source.folder, file));
    // Parsing one file whole is proof enough; the others need only look like sample arrays.
    return paths.every(looksLikeSampleFile) && isSampleFile(paths[0]) ? { file: paths[0] } : undefined;
  },
  read: readLiveApiBenchSource,
};

function sampleFileCandidates(files: readonly string[]): string[] {
  return files.filter((file) => JSON_FILE.test(file) && !TABLES_FILE.test(file)).sort();
}

/** A JSON array naming a dataset in its first bytes: BIRD's records do not, nor tool lists. */
function looksLikeSampleFile(file: string): boolean {
  const head = readHead(file);
  return head !== undefined && /^\uFEFF?\s*\[/.test(head) && head.includes('"dataset_name"');
}

/** A JSON array whose first record is a Live API-Bench sample. */
function isSampleFile(file: string): boolean {
  if (!looksLikeSampleFile(file)) return false;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, '')) as unknown;
    return Array.isArray(parsed) && parsed.length > 0 && isSample(parsed[0]);
  } catch {
    return false;
  }
}

function readHead(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(HEAD_BYTES);
    return buffer.subarray(0, readSync(fd, buffer, 0, HEAD_BYTES, 0)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const has = (record: Record<string, unknown>, fields: readonly string[]) => fields.every((field) => field in record);

function isSample(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return has(record, ['input', 'query', 'dataset_name']) || has(record, ['question', 'SQL', 'db_id', 'dataset_name']);
}

/** A sample record's question fields, under the names toRecord reads. */
function questionFields(record: Record<string, unknown>): Record<string, unknown> {
  const rest = 'SQL' in record && 'db_id' in record;
  return {
    id: rest ? (record.question_id ?? record.sample_id) : record.sample_id,
    db_id: rest ? record.db_id : record.dataset_name,
    question: rest ? record.question : record.input,
    sql: rest ? record.SQL : record.query,
    evidence: record.evidence,
    difficulty: record.difficulty,
  };
}

async function readLiveApiBenchSource(firstFile: string): Promise<RawSource> {
  const root = path.dirname(firstFile);
  const warnings: string[] = [];
  const read: { file: string; at: number; fields: Record<string, unknown> }[] = [];
  const records: SourceRecord[] = [];
  for (const file of sampleFileCandidates((await folderEntries(root)).files)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse((await readFile(path.join(root, file), 'utf8')).replace(/^\uFEFF/, ''));
    } catch (error) {
      warnings.push(`${file} skipped: not valid JSON (${(error as Error).message})`);
      continue;
    }
    if (!Array.isArray(parsed)) {
      warnings.push(`${file} skipped: not a JSON array of samples`);
      continue;
    }
    parsed.forEach((value: unknown, at) => {
      const record =
        value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      if (record.negative === true) return;
      read.push({ file, at, fields: questionFields(record) });
    });
  }
  const copies = new Set<string>();
  const qualify = idsRepeatAcrossDatabases(read.map((r) => r.fields));
  if (qualify) warnings.push('sample ids repeat across databases (ids count per database): ids are <db>:<sample_id>');
  for (const { file, at, fields } of read) {
    // A weighted copy repeats its record whole: the question once is the question.
    const identity = JSON.stringify(fields);
    if (copies.has(identity)) continue;
    copies.add(identity);
    const plainId = typeof fields.id === 'string' || typeof fields.id === 'number';
    const id =
      qualify && plainId && typeof fields.db_id === 'string' ? `${fields.db_id}:${String(fields.id)}` : fields.id;
    records.push(
      toRecord({ ...fields, id }, records.length, `${file} record ${at}`, { id: ['id'], idFromIndex: false }),
    );
  }
  return {
    datasetName: path.basename(root),
    questionFile: firstFile,
    records,
    databaseDirs: [root, path.join(root, 'databases')],
    naturalNames: new Map(),
    warnings,
  };
}

/** Published ids number the questions of each database from 0: the same id in two databases needs its database to be unique. */
function idsRepeatAcrossDatabases(records: readonly Record<string, unknown>[]): boolean {
  const databaseOf = new Map<string, unknown>();
  for (const { id, db_id } of records) {
    const key = String(id);
    if (databaseOf.has(key) && databaseOf.get(key) !== db_id) return true;
    databaseOf.set(key, db_id);
  }
  return false;
}
