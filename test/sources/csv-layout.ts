import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { toRecord, type SourceLayout } from '../../pipeline/sources/records.js';

/**
 * A layout that nl2api does not have, written the way a new one would be: `questions.csv`
 * (header `id,db_id,question,sql`, no quoting) beside `<db_id>.sqlite` files. Its module is
 * this file; its registry line is the one csv-layout.test.ts adds to SOURCES.
 */
export const csvLayout: SourceLayout<'csv'> = {
  name: 'csv',
  describe: { file: 'a .csv question file', folder: 'questions.csv' },
  detect(source) {
    if ('file' in source) return /\.csv$/i.test(source.file) ? { file: source.file } : undefined;
    return source.files.includes('questions.csv') ? { file: path.join(source.folder, 'questions.csv') } : undefined;
  },
  async read(questionFile) {
    const [header, ...rows] = (await readFile(questionFile, 'utf8'))
      .trim()
      .split(/\r?\n/)
      .map((line) => line.split(','));
    const records = rows.map((cells, index) =>
      toRecord(Object.fromEntries(header.map((key, i) => [key, cells[i]])), index, `row ${index + 2}`, {
        id: ['id'],
        idFromIndex: false,
      }),
    );
    const root = path.dirname(questionFile);
    return {
      datasetName: path.basename(root),
      questionFile,
      records,
      databaseDirs: [root],
      naturalNames: new Map(),
      warnings: [],
    };
  },
};
