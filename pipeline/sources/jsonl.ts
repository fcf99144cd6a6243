import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { toRecord, type RawSource, type SourceLayout, type SourceRecord } from './records.js';

const JSONL = /\.jsonl$/i;

/**
 * The generic layout: one `*.jsonl` of `{id, db_id, question, sql, evidence?, difficulty?}`
 * and SQLite files at `<dir>/<db_id>.sqlite`, `<dir>/databases/<db_id>.sqlite` or
 * `<dir>/<db_id>/<db_id>.sqlite` (descriptions optional, as in BIRD, next to the latter).
 */
export const jsonlLayout: SourceLayout<'jsonl'> = {
  name: 'jsonl',
  describe: { file: 'a .jsonl file', folder: 'generic *.jsonl' },
  detect(source) {
    if ('file' in source) return JSONL.test(source.file) ? { file: source.file } : undefined;
    const jsonl = source.files.filter((file) => JSONL.test(file)).sort();
    if (jsonl.length > 1)
      throw new Error(`source ${source.folder} holds several .jsonl files (${jsonl.join(', ')}): pass one of them`);
    return jsonl.length === 1 ? { file: path.join(source.folder, jsonl[0]) } : undefined;
  },
  read: readJsonlSource,
};

async function readJsonlSource(jsonlPath: string): Promise<RawSource> {
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
      records.push({
        ok: false,
        index,
        id: where,
        db: '',
        message: `${where}: malformed JSON (${(error as Error).message})`,
      });
      return;
    }
    records.push(toRecord(value, index, where, { id: ['id'], idFromIndex: false }));
  });
  return {
    datasetName: path.basename(root),
    questionFile: jsonlPath,
    records,
    databaseDirs: [root, path.join(root, 'databases')],
    naturalNames: new Map(),
    warnings: [],
  };
}
