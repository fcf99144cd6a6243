import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { loadSource } from '../../pipeline/sources/index.js';
import { BIRD_DIR, createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

const DEMO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seeds/demo');

afterAll(removeTempDirs);

(existsSync(BIRD_DIR) ? describe : describe.skip)('BIRD dev (NL2API_BIRD_DIR)', () => {
  test('loads 1052 instances over 8 databases, in source order, without rejections', async () => {
    const source = await loadSource(BIRD_DIR);
    expect(source).toMatchObject({ datasetName: 'bird-dev', layout: 'bird', rejections: [], warnings: [] });
    expect(source.instances).toHaveLength(1052);
    expect(source.databases.map((db) => db.dbId).sort()).toEqual([
      'california_schools',
      'card_games',
      'codebase_community',
      'debit_card_specializing',
      'european_football_2',
      'financial',
      'student_club',
      'superhero',
    ]);
    source.instances.forEach((instance, i) => expect(instance.index).toBe(i));
    expect(source.instances[0]).toMatchObject({ id: '0', dbId: 'california_schools', difficulty: 'simple' });
    expect(source.instances[0].sql).toMatch(/^SELECT `Free Meal Count \(K-12\)`/);
    expect(new Set(source.instances.map((instance) => instance.id)).size).toBe(1052);
  });

  test('reads schemas from the SQLite files, with descriptions from the CSVs', async () => {
    const source = await loadSource(BIRD_DIR, { dbIds: ['financial', 'student_club', 'california_schools'] });
    const db = (id: string) => source.databases.find((d) => d.dbId === id)!;
    const account = db('financial').tables.find((table) => table.name === 'account')!;
    expect(account.primaryKey).toEqual(['account_id']);
    expect(account.foreignKeys).toContainEqual({
      column: 'district_id',
      refTable: 'district',
      refColumn: 'district_id',
    });
    expect(account.columns.find((column) => column.name === 'date')).toEqual({
      name: 'date',
      type: 'DATE',
      description: 'the creation date of the account',
      valueDescription: 'in the form YYMMDD',
    });
    expect(db('financial').fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(path.isAbsolute(db('financial').path)).toBe(true);
    // Original-case names with spaces; a BOM-prefixed CSV still matches its first column.
    const frpm = db('california_schools').tables.find((table) => table.name === 'frpm')!;
    expect(frpm.columns.map((column) => column.name)).toContain('Free Meal Count (K-12)');
    expect(frpm.columns.find((column) => column.name === 'CDSCode')?.description).toBe('CDSCode');
    // budget.csv is Windows-1252: its 0x95 bullets decode as •.
    const budget = db('student_club').tables.find((table) => table.name === 'budget')!;
    expect(budget.columns.find((column) => column.name === 'event_status')?.valueDescription).toContain('• Closed');
  });

  test('filters by database and rejects unknown database ids with the list of available ones', async () => {
    const source = await loadSource(BIRD_DIR, { dbIds: ['financial'] });
    expect(source.databases.map((db) => db.dbId)).toEqual(['financial']);
    expect(source.instances.every((instance) => instance.dbId === 'financial')).toBe(true);
    expect(source.instances.length).toBe(106);
    await expect(loadSource(BIRD_DIR, { dbIds: ['financial', 'nope'] })).rejects.toThrow(
      /unknown database nope.*available: california_schools, card_games/,
    );
  });
});

describe('BIRD layout edge cases', () => {
  function birdFolder(questions: unknown[], questionFile = 'dev.json'): string {
    const root = tempDir();
    writeFileSync(path.join(root, questionFile), JSON.stringify(questions));
    createDb(
      path.join(root, 'dev_databases', 'shop', 'shop.sqlite'),
      `
      CREATE TABLE item (item_id INTEGER PRIMARY KEY, unit_price REAL, "Item Name" TEXT);
      CREATE TABLE sale (sale_id INTEGER PRIMARY KEY, item_id INTEGER, qty INTEGER, FOREIGN KEY (item_id) REFERENCES item);
    `,
    );
    const descriptions = path.join(root, 'dev_databases', 'shop', 'database_description');
    mkdirSync(descriptions);
    writeFileSync(
      path.join(descriptions, 'ITEM.csv'),
      Buffer.concat([
        Buffer.from('\ufefforiginal_column_name,column_name,column_description,data_format,value_description\r\n'),
        Buffer.from('item_id,item id,,integer,\r\n'),
        Buffer.from('unit_price,,price of one unit,real,"in \x80, \x93net\x94",extra,fields\r\n', 'latin1'),
        Buffer.from(',,orphan row,,\r\n\r\nodd\r\n'),
      ]),
    );
    writeFileSync(path.join(descriptions, 'sale.csv'), 'original_column_name,column_name\n"unterminated,quote\n');
    writeFileSync(
      path.join(root, 'dev_tables.json'),
      JSON.stringify([
        {
          db_id: 'shop',
          table_names_original: ['item', 'sale'],
          column_names_original: [
            [-1, '*'],
            [0, 'item_id'],
            [0, 'unit_price'],
            [0, 'Item Name'],
            [1, 'sale_id'],
            [1, 'item_id'],
            [1, 'qty'],
          ],
          column_names: [
            [-1, '*'],
            [0, 'item id'],
            [0, 'unit price'],
            [0, 'item name'],
            [1, 'sale id'],
            [1, 'item id'],
            [1, 'quantity sold'],
          ],
        },
      ]),
    );
    return root;
  }

  const q = (extra: Record<string, unknown>) => ({
    db_id: 'shop',
    question: 'How many?',
    SQL: 'SELECT 1',
    evidence: '',
    difficulty: 'simple',
    ...extra,
  });

  test('descriptions: CSV first, then the tables.json natural name, tolerating BOM, CP-1252 and odd rows', async () => {
    const source = await loadSource(birdFolder([q({ question_id: 1 })]));
    const [item, sale] = source.databases[0].tables;
    expect(item.columns).toEqual([
      { name: 'item_id', type: 'INTEGER', description: 'item id', valueDescription: '' },
      { name: 'unit_price', type: 'REAL', description: 'price of one unit', valueDescription: 'in €, “net”' },
      { name: 'Item Name', type: 'TEXT', description: 'item name', valueDescription: '' },
    ]);
    expect(sale.foreignKeys).toEqual([{ column: 'item_id', refTable: 'item', refColumn: 'item_id' }]);
    expect(sale.columns.find((column) => column.name === 'qty')?.description).toBe('quantity sold');
    expect(source.warnings.join('\n')).toMatch(/sale\.csv unreadable/);
  });

  test('bad records are rejected one by one; the rest load', async () => {
    const source = await loadSource(
      birdFolder([
        q({ question_id: 10 }),
        q({ question_id: 11, question: '   ' }),
        q({ question_id: 12, SQL: 42 }),
        q({ question_id: 10 }),
        'not an object',
        q({ question_id: 13, db_id: 'elsewhere' }),
        q({ question_id: 14, db_id: '../../etc' }),
        q({ question_id: 15, sql: 'SELECT 2', SQL: null }),
        q({ question_id: 16 }),
      ]),
    );
    expect(source.instances.map((instance) => [instance.id, instance.index])).toEqual([
      ['10', 0],
      ['16', 8],
    ]);
    expect(source.rejections.map((r) => [r.id, r.db, r.stage, r.category, r.formulation])).toEqual([
      ['11', 'shop', 'ingest', 'bad_input', 'all'],
      ['12', 'shop', 'ingest', 'bad_input', 'all'],
      ['10', 'shop', 'ingest', 'bad_input', 'all'],
      ['record 4', '', 'ingest', 'bad_input', 'all'],
      ['13', 'elsewhere', 'ingest', 'bad_input', 'all'],
      ['14', '../../etc', 'ingest', 'bad_input', 'all'],
      ['15', 'shop', 'ingest', 'bad_input', 'all'],
    ]);
    expect(source.rejections.map((r) => r.message)).toEqual([
      'record 1: missing or empty question',
      'record 2: SQL must be a string, got a number',
      'duplicate id 10 (first used by the record at position 0)',
      'record 4: not a JSON object',
      expect.stringMatching(/^unknown db_id elsewhere: no elsewhere\.sqlite in .*dev_databases/),
      'record 6: invalid db_id "../../etc"',
      'record 7: SQL must be a string, got null',
    ]);
  });

  test('mini-dev / train naming: another question file, ids from positions when question_id is absent', async () => {
    const root = birdFolder([q({}), q({})], 'train.json');
    const source = await loadSource(root);
    expect(source.datasetName).toBe('bird-train');
    expect(source.instances.map((instance) => instance.id)).toEqual(['0', '1']);
    const mini = await loadSource(birdFolder([q({ question_id: 5 })], 'mini_dev_sqlite.json'));
    expect(mini.datasetName).toBe('bird-mini-dev');
  });

  /** BIRD mini-dev as downloaded: one question file per SQL dialect beside SQLite databases (here the demo's). */
  function miniDevFolder(): string {
    const root = tempDir();
    const questions = JSON.parse(readFileSync(path.join(DEMO, 'dev.json'), 'utf8')) as Record<string, unknown>[];
    const mysql = questions.map((question) => ({ ...question, SQL: "SELECT DATE_FORMAT(NOW(), '%Y')" }));
    writeFileSync(path.join(root, 'mini_dev_mysql.json'), JSON.stringify(mysql));
    writeFileSync(path.join(root, 'mini_dev_postgresql.json'), JSON.stringify(mysql));
    writeFileSync(path.join(root, 'mini_dev_sqlite.json'), JSON.stringify(questions));
    for (const name of ['dev_tables.json', 'dev_databases']) symlinkSync(path.join(DEMO, name), path.join(root, name));
    return root;
  }

  test('mini-dev download: the SQLite question file is chosen for SQLite databases, and the choice is explained', async () => {
    const source = await loadSource(miniDevFolder());
    expect(source.datasetName).toBe('bird-mini-dev');
    expect(source.rejections).toEqual([]);
    expect(source.instances[0].sql).toMatch(/^SELECT title FROM book/);
    expect(source.warnings).toEqual([
      'using mini_dev_sqlite.json (its SQL is written for SQLite, the dialect of the databases nl2api runs on); ' +
        'also present: mini_dev_mysql.json, mini_dev_postgresql.json; pass a question file as --source to use another',
    ]);
  });

  test('a question file named as the source is used without an "also present" warning', async () => {
    const root = miniDevFolder();
    const sqlite = await loadSource(path.join(root, 'mini_dev_sqlite.json'));
    expect(sqlite.warnings).toEqual([]);
    const mysql = await loadSource(path.join(root, 'mini_dev_mysql.json'));
    expect(mysql.datasetName).toBe('bird-mini-dev-mysql');
    expect(mysql.warnings).toEqual([
      'mini_dev_mysql.json holds MySQL SQL; nl2api runs it on SQLite databases: expect gold_error rejections',
    ]);
  });

  test('several question files without dialects: dev.json first, and the warning says how to pick another', async () => {
    const root = birdFolder([q({ question_id: 1 })]);
    writeFileSync(path.join(root, 'train.json'), '[]');
    const source = await loadSource(root);
    expect(source.datasetName).toBe('bird-dev');
    expect(source.warnings).toContain(
      'using dev.json (first by name: dev, mini_dev*, train, then alphabetical); also present: train.json; pass a question file as --source to use another',
    );
  });

  test('each unusable database is named once, with the questions it took with it', async () => {
    const root = birdFolder([
      q({ question_id: 1 }),
      q({ question_id: 2, db_id: 'absent' }),
      q({ question_id: 3, db_id: 'absent' }),
      q({ question_id: 4, db_id: 'broken' }),
    ]);
    mkdirSync(path.join(root, 'dev_databases', 'broken'));
    writeFileSync(
      path.join(root, 'dev_databases', 'broken', 'broken.sqlite'),
      'not a database at all, just text long enough to be looked at',
    );
    const source = await loadSource(root);
    expect(source.instances.map((instance) => instance.id)).toEqual(['1']);
    const unusable = source.warnings.filter((warning) => warning.startsWith('database '));
    expect(unusable).toEqual([
      expect.stringMatching(
        /^database absent unusable, 2 questions rejected: unknown db_id absent: no absent\.sqlite in /,
      ),
      expect.stringMatching(
        /^database broken unusable, 1 question rejected: database broken \(.*broken\.sqlite\) cannot be read: /,
      ),
    ]);
  });

  test('follows symbolic links to database folders and question files kept elsewhere', async () => {
    const real = birdFolder([q({ question_id: 1 })]);
    const linked = tempDir();
    for (const name of ['dev.json', 'dev_tables.json', 'dev_databases'])
      symlinkSync(path.join(real, name), path.join(linked, name));
    const source = await loadSource(linked);
    expect(source.rejections).toEqual([]);
    expect(source.databases.map((db) => db.dbId)).toEqual(['shop']);
    expect(source.instances).toHaveLength(1);
  });

  test('a folder that also holds a .jsonl is read as BIRD (BIRD comes first in SOURCES)', async () => {
    const root = birdFolder([q({ question_id: 1 })]);
    writeFileSync(path.join(root, 'other.jsonl'), '');
    expect(await loadSource(root)).toMatchObject({ layout: 'bird', rejections: [] });
  });

  test('a question file that is not a JSON array is a source error', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'dev.json'), '{"oops": ');
    await expect(loadSource(root)).rejects.toThrow(/not valid JSON/);
    await expect(loadSource(path.join(root, 'missing'))).rejects.toThrow(/does not exist/);
  });
});
