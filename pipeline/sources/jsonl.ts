import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { toRecord, type RawSource, type SourceRecord } from './records.js';

/**
 * The generic layout: one `*.jsonl` of `{id, db_id, question, sql, evidence?, difficulty?}`
 * and SQLite files at `<dir>/<db_id>.sqlite`, `<dir>/databases/<db_id>.sqlite` or
 * `<dir>/<db_id>/<db_id>.sqlite` (descriptions optional, as in BIRD, next to the latter).
 */
export async function readJsonlSource(jsonlPath: string): Promise<RawSource> {
  const root = path.dirname(jsonlPath);
  const lines = (await readFile(jsonlPath, 'utf8')).replace(/^\uFEFF/, '').split(/\r?\n/);
  const records: SourceRecord[] = [];
  lines.forEach((line, lineIndex) => {
    if (line.trim() === '') return;
    const index = records.length;
    const where = `line ${lineIndex + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      records.push({ ok: false, index, id: where, db: '', message: `${where}: malformed JSON (${(error as Error).message})` });
      return;
    }
    records.push(toRecord(value, index, where, { id: ['id'], idFromIndex: false }));
  });
  return {
    datasetName: path.basename(root),
    layout: 'jsonl',
    questionFile: jsonlPath,
    records,
    databaseDirs: [root, path.join(root, 'databases')],
    naturalNames: new Map(),
    warnings: [],
  };
}
