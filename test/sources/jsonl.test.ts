import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSource } from '../../pipeline/sources/index.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

afterAll(removeTempDirs);

const SCHEMA = 'CREATE TABLE pet (pet_id INTEGER PRIMARY KEY, pet_name TEXT NOT NULL, owner_id INTEGER);';
const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ question: 'Which pets?', sql: 'SELECT pet_name FROM pet', ...fields });

/** A generic folder: databases in all three accepted places, plus a corrupt one and a missing one. */
function genericFolder(): string {
  const root = path.join(tempDir(), 'pets-dataset');
  mkdirSync(root);
  createDb(path.join(root, 'flat.sqlite'), SCHEMA);
  createDb(path.join(root, 'databases', 'nested.sqlite'), SCHEMA);
  createDb(path.join(root, 'own', 'own.sqlite'), SCHEMA);
  writeFileSync(
    path.join(root, 'broken.sqlite'),
    'this is not a SQLite file, just text pretending to be one'.repeat(100),
  );
  writeFileSync(
    path.join(root, 'questions.jsonl'),
    [
      line({ id: 'a', db_id: 'flat', evidence: 'pets live in pet', difficulty: 'easy' }),
      '',
      line({ id: 'b', db_id: 'nested' }),
      '{"id": "c", "db_id": "flat", "question": ',
      line({ id: 'd', db_id: 'own' }),
      line({ id: 'e', db_id: 'broken' }),
      line({ id: 'f', db_id: 'missing' }),
      line({ id: 'a', db_id: 'own' }),
      line({ id: 'g', db_id: 'flat', sql: ['SELECT 1'] }),
      line({ id: 'h', db_id: 'flat', question: '' }),
      line({ db_id: 'flat' }),
      line({ id: 7, db_id: 'flat', evidence: 3 }),
      '[1, 2]',
      line({ id: 8, db_id: 'own' }),
      '   ',
    ].join('\r\n'),
  );
  return root;
}

test('loads good lines from all database locations; every bad line is one bad_input rejection', async () => {
  const root = genericFolder();
  const source = await loadSource(root);
  expect(source.datasetName).toBe('pets-dataset');
  expect(source.layout).toBe('jsonl');
  expect(source.instances.map((instance) => [instance.id, instance.dbId, instance.index])).toEqual([
    ['a', 'flat', 0],
    ['b', 'nested', 1],
    ['d', 'own', 3],
    ['8', 'own', 12],
  ]);
  expect(source.instances[0]).toEqual({
    id: 'a',
    index: 0,
    dbId: 'flat',
    question: 'Which pets?',
    evidence: 'pets live in pet',
    sql: 'SELECT pet_name FROM pet',
    difficulty: 'easy',
  });
  expect(source.instances[1]).toMatchObject({ evidence: '', difficulty: null });
  expect(source.databases.map((db) => [db.dbId, path.relative(root, db.path)])).toEqual([
    ['flat', 'flat.sqlite'],
    ['nested', path.join('databases', 'nested.sqlite')],
    ['own', path.join('own', 'own.sqlite')],
  ]);
  expect(
    source.rejections.every((r) => r.stage === 'ingest' && r.category === 'bad_input' && r.formulation === 'all'),
  ).toBe(true);
  expect(source.rejections.map((r) => [r.id, r.db, r.message])).toEqual([
    ['line 4', '', expect.stringMatching(/^line 4: malformed JSON/)],
    [
      'e',
      'broken',
      expect.stringMatching(/^database broken \(.*broken\.sqlite\) cannot be read: file is not a database/),
    ],
    ['f', 'missing', expect.stringMatching(/^unknown db_id missing: no missing\.sqlite in /)],
    ['a', 'own', 'duplicate id a (first used by the record at position 0)'],
    ['g', 'flat', 'line 9: SQL must be a string, got an array'],
    ['h', 'flat', 'line 10: missing or empty question'],
    ['line 11', 'flat', 'line 11: missing or invalid id (a non-empty string or an integer)'],
    ['7', 'flat', 'line 12: evidence must be a string, got a number'],
    ['line 13', '', 'line 13: not a JSON object'],
  ]);
  // Nothing is lost: every non-blank line ends as an instance or a rejection.
  expect(source.instances.length + source.rejections.length).toBe(13);
});

test('schema from the file; descriptions fall back to the column name with spaces', async () => {
  const source = await loadSource(path.join(genericFolder(), 'questions.jsonl'), { dbIds: ['own'] });
  expect(source.instances.map((instance) => instance.id)).toEqual(['d', '8']);
  expect(source.rejections.map((r) => r.id)).toEqual(['a']);
  expect(source.databases).toHaveLength(1);
  expect(source.databases[0].tables).toEqual([
    {
      name: 'pet',
      primaryKey: ['pet_id'],
      uniqueKeys: [],
      foreignKeys: [],
      columns: [
        { name: 'pet_id', type: 'INTEGER', description: 'pet id', valueDescription: '' },
        { name: 'pet_name', type: 'TEXT', description: 'pet name', valueDescription: '', notNull: true },
        { name: 'owner_id', type: 'INTEGER', description: 'owner id', valueDescription: '' },
      ],
    },
  ]);
});

test('the db filter names what is available; an ambiguous folder is a source error', async () => {
  const root = genericFolder();
  await expect(loadSource(root, { dbIds: ['zoo'] })).rejects.toThrow(
    'unknown database zoo in the db filter; available: broken, flat, missing, nested, own',
  );
  writeFileSync(path.join(root, 'more.jsonl'), '');
  await expect(loadSource(root)).rejects.toThrow(/several \.jsonl files/);
});

test('same input, same output (fingerprints included)', async () => {
  const root = genericFolder();
  expect(JSON.stringify(await loadSource(root))).toBe(JSON.stringify(await loadSource(root)));
});
