import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveDoubleQuotedStrings, schemaIdentifiers } from '../../generators/sql/double-quotes.js';
import type { DatabaseInfo } from '../../core/model.js';

const column = (name: string) => ({ name, type: 'text', description: name, valueDescription: '' });
const db: DatabaseInfo = {
  dbId: 'club',
  path: '',
  fingerprint: '',
  tables: [
    { name: 'member', columns: [column('name'), column('city')], primaryKey: [], foreignKeys: [] },
    { name: 'Match', columns: [column('id'), column('season')], primaryKey: [], foreignKeys: [] },
  ],
};

function rewrite(sql: string): string {
  return resolveDoubleQuotedStrings(sql, schemaIdentifiers(db, sql));
}

describe('resolveDoubleQuotedStrings', () => {
  it('turns a double-quoted token naming nothing into a string literal', () => {
    expect(rewrite('SELECT name FROM member WHERE city = "Paris"')).toBe(
      "SELECT name FROM member WHERE city = 'Paris'",
    );
  });

  it('keeps double-quoted identifiers that name a table, column or alias', () => {
    const sql = 'SELECT T1."season" AS s FROM "Match" AS T1 WHERE "T1".id = 1 ORDER BY "s"';
    expect(rewrite(sql)).toBe(sql);
  });

  it('escapes single quotes inside the new literal and unescapes doubled double quotes', () => {
    expect(rewrite(`SELECT 1 FROM member WHERE name = "O'Brien ""Jr"""`)).toBe(
      `SELECT 1 FROM member WHERE name = 'O''Brien "Jr"'`,
    );
  });

  it('leaves single-quoted strings, comments and backquoted names alone', () => {
    const sql = `SELECT \`city\` FROM member -- "not a literal"\nWHERE name = 'say "hi"' /* "x" */`;
    expect(rewrite(sql)).toBe(sql);
  });

  it('matches identifiers case-insensitively, as SQLite does', () => {
    expect(rewrite('SELECT "CITY" FROM MEMBER')).toBe('SELECT "CITY" FROM MEMBER');
  });

  it('makes BIRD-style SQL runnable on a SQLite that rejects double-quoted strings', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dq-')), 'club.sqlite');
    const conn = new Database(file);
    conn.exec("CREATE TABLE member (name TEXT, city TEXT); INSERT INTO member VALUES ('Ann', 'Paris'), ('Bo', 'Rome')");
    const sql = 'SELECT name FROM member WHERE city = "Paris"';
    expect(() => conn.prepare(sql).all()).toThrow(/no such column/);
    expect(conn.prepare(rewrite(sql)).raw().all()).toEqual([['Ann']]);
    conn.close();
  });
});
