import { declaredCollations } from '../../runtime/sql/collations.js';

describe('declaredCollations', () => {
  test('the columns that declare a collation other than BINARY, by lower-cased name', () => {
    const sql = `CREATE TABLE "t" (
      id INTEGER PRIMARY KEY,
      "Name" TEXT COLLATE NOCASE NOT NULL,
      code TEXT CHECK (code <> 'x' COLLATE NOCASE) COLLATE rtrim,
      plain TEXT COLLATE BINARY,
      n NUMERIC DEFAULT (1),
      CONSTRAINT u UNIQUE (code COLLATE NOCASE)
    )`;
    expect([...declaredCollations(sql)]).toEqual([
      ['name', 'NOCASE'],
      ['code', 'RTRIM'],
    ]);
  });

  test('nothing to declare: no column list, or none with a collation', () => {
    expect(declaredCollations('CREATE TABLE t AS SELECT 1 AS a').size).toBe(0);
    expect(declaredCollations('CREATE TABLE t (a TEXT, b INTEGER)').size).toBe(0);
  });
});
