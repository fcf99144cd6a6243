import type { ArgumentValue, ParameterSpec } from '../../generators/rest/spec.js';
import type { SqlParam } from '../sql/executor.js';

/**
 * Named placeholders → positional `?` parameters (the executor binds positionally).
 *
 * Interim: the synthesizer will provide `bindPlaceholders(sql, args, params)` in
 * generators/rest/bind.ts; this one has the same shape so that the server can switch to
 * it by changing one import. A `:name` counts only outside string literals, quoted
 * identifiers ("..", `..`, [..]) and comments, so a value can never become SQL: values
 * are always bound, never spliced.
 */

export interface BoundSql {
  /** The SQL with each `:name` replaced by `?`. */
  sql: string;
  /** One value per `?`, in order (a name used twice is bound twice). */
  params: SqlParam[];
}

/** The endpoint's SQL or the call's arguments do not fit its parameter specs. */
export class PlaceholderError extends Error {
  override name = 'PlaceholderError';
}

/** Binds `args` (already typed by the parameter specs) into `sql`; an absent optional argument binds NULL. */
export function bindPlaceholders(sql: string, args: Readonly<Record<string, ArgumentValue>>, params: readonly ParameterSpec[]): BoundSql {
  const specs = new Map(params.map((param) => [param.name, param]));
  for (const name of Object.keys(args)) {
    if (!specs.has(name)) throw new PlaceholderError(`argument '${name}' is not a declared parameter`);
  }
  const values: SqlParam[] = [];
  const text = rewritePlaceholders(sql, (name) => {
    const spec = specs.get(name);
    if (!spec) throw new PlaceholderError(`placeholder ':${name}' is not a declared parameter`);
    values.push(toSqlParam(spec, Object.hasOwn(args, name) ? args[name] : undefined));
    return '?';
  });
  return { sql: text, params: values };
}

function toSqlParam(spec: ParameterSpec, value: ArgumentValue | undefined): SqlParam {
  if (value === undefined) {
    if (spec.required) throw new PlaceholderError(`required parameter '${spec.name}' is missing`);
    return null;
  }
  const ok =
    spec.type === 'string'
      ? typeof value === 'string'
      : spec.type === 'boolean'
        ? typeof value === 'boolean'
        : typeof value === 'number' && Number.isFinite(value) && (spec.type === 'number' || Number.isInteger(value));
  if (!ok) throw new PlaceholderError(`parameter '${spec.name}' must be of type ${spec.type}`);
  // SQLite has no boolean: true/false are the integers 1/0, as in its own literals.
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;
/** Characters of an unquoted SQLite identifier (`$` is allowed after the first). */
const IDENTIFIER_PART = /[A-Za-z0-9_$]/;

/**
 * Copies `sql`, replacing every `:name` outside literals, quoted identifiers and comments
 * by `replace(name)`. SQLite's other parameter markers (`?`, `?NNN`, `@name`, `$name`)
 * would shift the positional binding, so they are refused.
 */
export function rewritePlaceholders(sql: string, replace: (name: string) => string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    let end: number;
    if (c === "'" || c === '"' || c === '`') end = quotedEnd(sql, i, c);
    else if (c === '[') end = until(sql, i + 1, ']');
    else if (c === '-' && next === '-') end = until(sql, i + 2, '\n');
    else if (c === '/' && next === '*') end = until(sql, i + 2, '*/');
    else if (c === ':' && next !== undefined && NAME_START.test(next) && !followsIdentifier(sql, i)) {
      let stop = i + 1;
      while (stop < sql.length && NAME_PART.test(sql[stop])) stop++;
      out += replace(sql.slice(i + 1, stop));
      i = stop;
      continue;
    } else if (c === '?' || ((c === '@' || c === '$') && next !== undefined && NAME_START.test(next) && !followsIdentifier(sql, i))) {
      throw new PlaceholderError(`only :name placeholders are supported, found '${c}' at offset ${i}`);
    } else end = i + 1;
    out += sql.slice(i, end);
    i = end;
  }
  return out;
}

/** End (exclusive) of the quoted token opening at `start`; a doubled quote is an escaped one. */
function quotedEnd(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length; // unterminated: SQLite will refuse the statement
}

/** End (exclusive) of the text up to and including `terminator`, or the end of the SQL. */
function until(sql: string, from: number, terminator: string): number {
  const at = sql.indexOf(terminator, from);
  return at < 0 ? sql.length : at + terminator.length;
}

function followsIdentifier(sql: string, at: number): boolean {
  return at > 0 && IDENTIFIER_PART.test(sql[at - 1]);
}
