import { jest } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { birdLayout } from '../../pipeline/sources/bird.js';
import { jsonlLayout } from '../../pipeline/sources/jsonl.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';
import { csvLayout } from './csv-layout.js';

/**
 * What adding a source layout costs: its module (csv-layout.ts) and one line in SOURCES
 * (pipeline/sources/layouts.ts), added here the way that line would add it. loadSource and
 * everything else are the real modules, unchanged.
 */
jest.unstable_mockModule('../../pipeline/sources/layouts.js', () => ({
  SOURCES: [birdLayout, jsonlLayout, csvLayout],
}));
const { loadSource } = await import('../../pipeline/sources/index.js');

afterAll(removeTempDirs);

function csvFolder(): string {
  const root = path.join(tempDir(), 'pets-csv');
  createDb(path.join(root, 'pets.sqlite'), 'CREATE TABLE pet (pet_id INTEGER PRIMARY KEY, pet_name TEXT);');
  writeFileSync(
    path.join(root, 'questions.csv'),
    [
      'id,db_id,question,sql',
      'p1,pets,How many pets?,SELECT count(*) FROM pet',
      'p2,zoo,Which animals?,SELECT 1',
      'p3,pets,,SELECT 1',
    ].join('\n'),
  );
  return root;
}

describe('a new source layout is its module and a line in SOURCES', () => {
  test('loadSource detects and reads it, with the same validation, database resolution and provenance as any layout', async () => {
    const root = csvFolder();
    for (const source of [root, path.join(root, 'questions.csv')]) {
      const loaded = await loadSource(source);
      expect(loaded).toMatchObject({
        datasetName: 'pets-csv',
        layout: 'csv',
        questionFile: { path: path.join(root, 'questions.csv') },
      });
      expect(loaded.instances.map((i) => [i.id, i.dbId, i.question])).toEqual([['p1', 'pets', 'How many pets?']]);
      expect(loaded.databases.map((db) => db.dbId)).toEqual(['pets']);
      expect(loaded.rejections.map((r) => [r.id, r.message])).toEqual([
        ['p2', expect.stringMatching(/^unknown db_id zoo: no zoo\.sqlite in /)],
        ['p3', 'row 4: missing or empty question'],
      ]);
    }
  });

  test('the errors for a source no layout accepts describe it too', async () => {
    const empty = tempDir();
    await expect(loadSource(empty)).rejects.toThrow(
      `source ${empty} holds no question file (BIRD *.json, generic *.jsonl or questions.csv)`,
    );
    const text = path.join(empty, 'q.txt');
    writeFileSync(text, '');
    await expect(loadSource(text)).rejects.toThrow(
      `source ${text}: expected a folder, a BIRD .json question file, a .jsonl file or a .csv question file`,
    );
  });
});
