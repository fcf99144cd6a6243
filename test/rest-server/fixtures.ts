import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { ParameterSpec, ResponseShape, ServedEndpointSpec } from '../../runtime/rest/spec.js';
import type { DatabaseInfo } from '../../core/model.js';
import { createDb, HEROES_SQL, RUNAWAY_SQL } from '../sql/fixtures.js';

/** A heroes database (with a hero whose name is an injection attempt) and endpoints over it. */

/** Names that look like SQL: as values they must only ever match themselves. */
export const INJECTION_NAMES = ["' OR 1=1 --", '; DROP TABLE hero', "Robert'); DROP TABLE hero;--"];

export const HEROES_REST_SQL = `${HEROES_SQL}
  INSERT INTO hero VALUES (5, '; DROP TABLE hero', 2, 150, NULL);
`;

export function heroesDb(dir: string): DatabaseInfo {
  const file = createDb(path.join(dir, 'heroes.sqlite'), HEROES_REST_SQL);
  return { dbId: 'heroes', path: file, fingerprint: 'test', tables: [] };
}

export function emptyDb(dir: string): DatabaseInfo {
  const file = createDb(
    path.join(dir, 'numbers.sqlite'),
    'CREATE TABLE n (v INTEGER); INSERT INTO n VALUES (1), (2), (3);',
  );
  return { dbId: 'numbers', path: file, fingerprint: 'test', tables: [] };
}

const param = (
  name: string,
  type: ParameterSpec['type'],
  required: boolean,
  example?: ParameterSpec['example'],
): ParameterSpec => ({
  name,
  type,
  description: `The ${name.replace(/_/g, ' ')}.`,
  required,
  ...(example !== undefined ? { example } : {}),
});

/** An endpoint as served: its response's fields, named after its columns, declared here. */
const endpoint = (
  operationId: string,
  slug: string,
  sql: string,
  parameters: ParameterSpec[],
  response: { shape: ResponseShape; fields: string[] },
  db = 'heroes',
): ServedEndpointSpec => ({
  operationId,
  path: `/v1/test/${db}/${slug}`,
  summary: `${operationId} summary`,
  description: `What ${operationId} returns.`,
  parameters,
  sql,
  response: {
    description: `The rows of ${operationId}.`,
    shape: response.shape,
    fields: response.fields.map((name) => ({
      name,
      description: `The ${name.replace(/_/g, ' ')}.`,
      types: ['integer', 'number', 'string'],
      nullable: true,
    })),
  },
});

const list = (...fields: string[]) => ({ shape: 'list' as const, fields });

export const HEROES_BY_PUBLISHER = endpoint(
  'getHeroesByPublisher',
  'heroes-by-publisher',
  'SELECT h.hero_name, h.height_cm FROM hero h JOIN publisher p ON p.id = h.publisher_id WHERE p.publisher_name = :publisher ORDER BY h.hero_name',
  [param('publisher', 'string', true, 'DC')],
  list('hero_name', 'height_cm'),
);

export const TALLER_THAN = endpoint(
  'getHeroesTallerThan',
  'heroes-taller-than',
  'SELECT hero_name, height_cm FROM hero WHERE height_cm > :min_height ORDER BY height_cm DESC LIMIT coalesce(:limit, -1)',
  [param('min_height', 'number', true, 179.5), param('limit', 'integer', false, 2)],
  list('hero_name', 'height_cm'),
);

export const COUNT_BY_AVATAR = endpoint(
  'countHeroesByAvatar',
  'count-by-avatar',
  'SELECT count(*) AS n FROM hero WHERE (avatar IS NOT NULL) = :with_avatar',
  [param('with_avatar', 'boolean', true, true)],
  { shape: 'object', fields: ['n'] },
);

/** The name appears as a placeholder, inside a literal and inside a comment: only the first binds. */
export const HERO_BY_NAME = endpoint(
  'getHeroByName',
  'hero-by-name',
  "SELECT id, hero_name FROM hero WHERE hero_name = :name OR hero_name = ':name' -- or :name\nORDER BY id",
  [param('name', 'string', true, 'Batman')],
  list('id', 'hero_name'),
);

/** Counts up to :n with a recursive CTE: a large n runs until the timeout stops it. */
export const COUNT_UP_TO = endpoint(
  'countUpTo',
  'count-up-to',
  RUNAWAY_SQL.replace('1000000000000', ':n'),
  [param('n', 'integer', true, 10)],
  { shape: 'object', fields: ['count'] },
);

/** Valid spec, but the column does not exist: SQLite fails it at run time. */
export const BROKEN = endpoint(
  'getBroken',
  'broken',
  'SELECT no_such_column FROM hero WHERE id = :id',
  [param('id', 'integer', true, 1)],
  list('no_such_column'),
);

export const NUMBERS = endpoint(
  'getNumbers',
  'numbers',
  'SELECT v FROM n WHERE v >= coalesce(:from_value, 0) ORDER BY v',
  [param('from_value', 'integer', false, 2)],
  list('v'),
  'numbers',
);

export const HEROES_ENDPOINTS = [HEROES_BY_PUBLISHER, TALLER_THAN, COUNT_BY_AVATAR, HERO_BY_NAME, COUNT_UP_TO, BROKEN];

/** A pino logger writing into `lines`, to check what is logged server-side. */
export function captureLogger(lines: string[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

/** A body that leaks nothing: no SQL, no stack trace, no file path, no SQLite message. */
export function expectNoLeak(body: string, dbPath: string): void {
  for (const forbidden of [
    /select/i,
    /\bfrom\b/i,
    /\n\s+at /,
    /stack/i,
    /sqlite/i,
    /no_such_column/,
    /\.ts\b|\.js\b/,
  ]) {
    expect(body).not.toMatch(forbidden);
  }
  expect(body).not.toContain(dbPath);
}
