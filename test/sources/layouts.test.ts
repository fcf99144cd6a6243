import { jest } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { birdLayout } from '../../pipeline/sources/bird.js';
import { jsonlLayout } from '../../pipeline/sources/jsonl.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

/**
 * How loadSource uses the SOURCES registry, on BIRD and JSONL alone (as SOURCES held them when
 * it was made, so that a layout added later changes nothing here): the first layout that
 * accepts a source reads it, and the errors when none does are word for word what they were.
 */
jest.unstable_mockModule('../../pipeline/sources/layouts.js', () => ({ SOURCES: [birdLayout, jsonlLayout] }));
const { loadSource } = await import('../../pipeline/sources/index.js');

afterAll(removeTempDirs);

const SCHEMA = 'CREATE TABLE pet (pet_id INTEGER PRIMARY KEY, pet_name TEXT);';
const QUESTION = { db_id: 'pets', question: 'Which pets?', SQL: 'SELECT pet_name FROM pet' };

/** A folder holding `files` (name → content) and pets.sqlite. */
function folder(files: Record<string, string>): string {
  const root = tempDir();
  createDb(path.join(root, 'pets.sqlite'), SCHEMA);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(root, name), content);
  return root;
}

describe('loadSource over the SOURCES registry', () => {
  test('a source is read by the first layout that accepts it', async () => {
    const both = folder({
      'dev.json': JSON.stringify([{ question_id: 1, ...QUESTION }]),
      'q.jsonl': JSON.stringify({ id: 'j', ...QUESTION }),
    });
    expect((await loadSource(both)).layout).toBe('bird');
    expect((await loadSource(path.join(both, 'q.jsonl'))).layout).toBe('jsonl');
  });

  test('when none accepts, the error says what each layout looks like', async () => {
    const empty = tempDir();
    await expect(loadSource(empty)).rejects.toThrow(
      `source ${empty} holds no question file (BIRD *.json or generic *.jsonl)`,
    );
    const csv = path.join(folder({ 'q.csv': 'id,db_id\n' }), 'q.csv');
    await expect(loadSource(csv)).rejects.toThrow(
      `source ${csv}: expected a folder, a BIRD .json question file or a .jsonl file`,
    );
  });

  test('a layout may accept a source and still refuse it: several .jsonl files', async () => {
    const root = folder({ 'b.jsonl': '', 'a.jsonl': '' });
    mkdirSync(path.join(root, 'databases'));
    await expect(loadSource(root)).rejects.toThrow(
      `source ${root} holds several .jsonl files (a.jsonl, b.jsonl): pass one of them`,
    );
  });
});
