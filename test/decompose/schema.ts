import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DatabaseInfo, TableInfo } from '../../core/model.js';

/** A small two-table schema (not BIRD) shared by the parse and decompose tests. */

const DDL = `
CREATE TABLE school (id INTEGER PRIMARY KEY, name TEXT, City TEXT, founded TEXT, students INTEGER, "Free Meals" REAL);
CREATE TABLE score (school_id INTEGER REFERENCES school(id), subject TEXT, avg REAL, takers INTEGER);
INSERT INTO school VALUES
  (1, 'Alder', 'Fresno', '1990-05-01', 300, 12.5),
  (2, 'Birch', 'Fresno', '2001-09-15', 120, NULL),
  (3, 'Cedar', 'Oakland', '1985-01-20', 450, 40.0),
  (4, 'Dogwood', 'Oakland', '2010-03-03', 80, 3.0),
  (5, 'Elm', NULL, '1999-12-31', 200, 20.0);
INSERT INTO score VALUES
  (1, 'math', 510.5, 40), (1, 'read', 480.0, 38), (2, 'math', 430.0, 12),
  (3, 'math', 600.0, 90), (3, 'read', 590.0, 85), (4, 'read', 400.0, 7), (5, 'math', 505.0, 30),
  (4, 'math', NULL, NULL), (NULL, 'art', 300.0, 450);
`;

function table(name: string, columns: [string, string][], primaryKey: string[] = []): TableInfo {
  return {
    name,
    columns: columns.map(([n, type]) => ({ name: n, type, description: n, valueDescription: '' })),
    primaryKey,
    foreignKeys: [],
  };
}

export const TABLES: TableInfo[] = [
  table(
    'school',
    [
      ['id', 'INTEGER'],
      ['name', 'TEXT'],
      ['City', 'TEXT'],
      ['founded', 'TEXT'],
      ['students', 'INTEGER'],
      ['Free Meals', 'REAL'],
    ],
    ['id'],
  ),
  table('score', [
    ['school_id', 'INTEGER'],
    ['subject', 'TEXT'],
    ['avg', 'REAL'],
    ['takers', 'INTEGER'],
  ]),
];

/** The schema only (the path is never opened). */
export const SCHEMA: DatabaseInfo = {
  dbId: 'schools',
  path: '/nonexistent/schools.sqlite',
  fingerprint: 'test',
  tables: TABLES,
};

/** The schema with rows, in a temporary SQLite file. */
export function createDatabase(): { db: DatabaseInfo; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nl2api-decompose-'));
  const file = path.join(dir, 'schools.sqlite');
  const sqlite = new Database(file);
  sqlite.exec(DDL);
  sqlite.close();
  return { db: { ...SCHEMA, path: file }, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
