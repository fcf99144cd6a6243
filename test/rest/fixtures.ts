import Database from 'better-sqlite3';
import path from 'node:path';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import { bindPlaceholders } from '../../runtime/rest/bind.js';
import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { createDb, tempDir } from '../sql/fixtures.js';

/** A small schools database for REST synthesis tests, with its DatabaseInfo. */

const SQL = `
  CREATE TABLE county (id INTEGER PRIMARY KEY, county_name TEXT, population INTEGER);
  CREATE TABLE school (
    id INTEGER PRIMARY KEY, name TEXT, county_id INTEGER REFERENCES county(id),
    enrollment INTEGER, rate REAL, opened DATE, code TEXT, A2 TEXT
  );
  INSERT INTO county VALUES (1, 'Alameda', 1600000), (2, 'Fresno', 990000), (3, 'Kern', 900000);
  INSERT INTO school VALUES
    (1, 'Oak High', 1, 1200, 0.42, '1990-05-01', '100', 'Oakland'),
    (2, 'Pine Elementary', 1, 300, 0.65, '2001-09-01', '200', 'Berkeley'),
    (3, 'Cedar Middle', 2, 650, 0.30, '1985-01-15', '300', 'Fresno'),
    (4, 'Elm Academy', 3, 80, -0.5, '2015-08-20', '400', 'Bakersfield'),
    (5, 'It''s: a :test school', 2, 450, 0.5, '2010-01-01', '500', 'Clovis');
`;

const column = (name: string, type: string, description = name, valueDescription = '') => ({
  name,
  type,
  description,
  valueDescription,
});

export function schoolsDb(): DatabaseInfo {
  const file = createDb(path.join(tempDir('nl2api-rest-'), 'schools.sqlite'), SQL);
  return {
    dbId: 'schools',
    path: file,
    fingerprint: 'test',
    tables: [
      {
        name: 'county',
        columns: [
          column('id', 'INTEGER'),
          column('county_name', 'TEXT', 'name of the county'),
          column('population', 'INTEGER', 'number of inhabitants'),
        ],
        primaryKey: ['id'],
        foreignKeys: [],
      },
      {
        name: 'school',
        columns: [
          column('id', 'INTEGER'),
          column('name', 'TEXT', 'school name'),
          column('county_id', 'INTEGER'),
          column('enrollment', 'INTEGER', 'number of enrolled students'),
          column('rate', 'REAL', 'free meal rate'),
          column('opened', 'DATE', 'opening date'),
          column('code', 'TEXT', 'school code'),
          column('A2', 'TEXT', 'city name'),
        ],
        primaryKey: ['id'],
        foreignKeys: [{ column: 'county_id', refTable: 'county', refColumn: 'id' }],
      },
    ],
  };
}

export function instance(sql: string, id = '1'): Instance {
  return { id, index: 0, dbId: 'schools', question: 'q?', evidence: '', sql, difficulty: null };
}

/** Rows of `sql` (or of the endpoint called with its call's arguments). */
export function rows(db: DatabaseInfo, sql: string, params: (string | number | null)[] = []): unknown[][] {
  const connection = new Database(db.path, { readonly: true });
  try {
    return connection
      .prepare(sql)
      .raw()
      .all(...params) as unknown[][];
  } finally {
    connection.close();
  }
}

export function callRows(db: DatabaseInfo, endpoint: SynthesizedEndpoint): unknown[][] {
  const bound = bindPlaceholders(endpoint.spec.sql, endpoint.call.arguments, endpoint.spec.parameters);
  return rows(db, bound.sql, bound.params);
}
