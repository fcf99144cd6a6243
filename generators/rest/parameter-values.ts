import type { DatabaseInfo, SqlValue } from '../../core/model.js';
import { LruMap } from '../../core/lru.js';
import { SqlExecutionError, SqlTimeoutError, type SqlExecutor } from '../../runtime/sql/executor.js';
import { quoteIdent } from '../../runtime/slot/sqlfrag.js';
import {
  MAX_ENUM_TEXT,
  MAX_ENUM_VALUES,
  type ArgumentValue,
  type EndpointSpec,
  type ParameterSpec,
} from '../../runtime/rest/spec.js';
import { parseQuery } from '../sql/normalize.js';
import { columnAffinity, type ResolvedColumn } from './columns.js';
import { withSampleValues } from './format-check.js';
import { clip } from './naming.js';
import { placeholderSites } from './placeholder-sites.js';
import type { SiteOp } from './value-sites.js';

/**
 * A parameter's values as its column holds them (issue 33): the description of a parameter
 * compared with a column ends with its type and format and two or three of the column's
 * values — the most frequent for a value to match, the range for a bound — read from the
 * database, as a caller reading the spec needs to know what to pass (`"Active"`, not
 * `active`; a date as `1997-03-12`). A column that holds a few values, each many times (a
 * status, a type), declares them as the parameter's `enum`, which the server then enforces,
 * when the call's own values are among them. Any synthesizer's endpoint gets this at its
 * trial run, from the same database and executor.
 */

/** At most this many distinct values make a column categorical (within what a spec's enum may list)... */
const ENUM_MAX_VALUES = Math.min(12, MAX_ENUM_VALUES);
/** ...when each is held by this many rows on average (a handful of names is no category). */
const ENUM_MIN_ROWS_PER_VALUE = 3;
const EXAMPLES = 3;

const MATCHED: ReadonlySet<SiteOp> = new Set(['=', '!=', 'IN', 'NOT IN', 'LIKE', 'NOT LIKE']);
const ENUMERABLE: ReadonlySet<SiteOp> = new Set(['=', '!=', 'IN', 'NOT IN']);

/** What a column holds: its most frequent values, and all of them when they are few. */
interface ColumnValues {
  /** Most frequent first, ties by value. */
  frequent: SqlValue[];
  /** Every distinct value, when the column is categorical; else null. */
  categories: SqlValue[] | null;
  min: SqlValue;
  max: SqlValue;
}

/** The endpoint with its parameters' descriptions (and enums) completed from the database. */
export async function describeParameterValues(
  spec: EndpointSpec,
  args: Readonly<Record<string, ArgumentValue>>,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<EndpointSpec> {
  if (spec.parameters.length === 0) return spec;
  const parsed = parseQuery(withSampleValues(spec), db);
  if (!parsed.ok) return spec;
  const firstSites = new Map<string, { op: SiteOp; column: ResolvedColumn; format: string | null }>();
  for (const { name, site, column } of placeholderSites(spec.sql, parsed.value.query, db)) {
    // A column as it is, or a date column read through STRFTIME (`STRFTIME('%Y', day) = :year`).
    const format = site.fn === 'STRFTIME' ? site.fnFormat : null;
    const readable = site.bare ? site.fn === null : format !== null;
    if (column && readable && !firstSites.has(name)) firstSites.set(name, { op: site.op, column, format });
  }
  const parameters = await Promise.all(
    spec.parameters.map(async (param) => {
      const at = firstSites.get(param.name);
      if (!at) return param;
      try {
        const values = await columnValues(at.column, at.format, db, executor, timeoutMs);
        return withValues(param, at.op, values, args[param.name], at.format);
      } catch (error) {
        // A column too slow to read within the trial's budget keeps its plain description; a lost worker is no verdict.
        if (error instanceof SqlTimeoutError || error instanceof SqlExecutionError) return param;
        throw error;
      }
    }),
  );
  return { ...spec, parameters };
}

/** A parameter's description with its type and values appended; its enum when the column is categorical. */
export function withValues(
  param: ParameterSpec,
  op: SiteOp,
  values: ColumnValues,
  argument: ArgumentValue | undefined,
  format: string | null = null,
): ParameterSpec {
  const type = format === null ? typeText(param) : `text (${formPattern(format)})`;
  const categories =
    ENUMERABLE.has(op) && param.type === 'string' && values.categories?.every(isEnumText) ? values.categories : null;
  // The call's own value, and the spec's example (a spec's example must be one of its values), among them.
  const among = (value: ArgumentValue | undefined) => value === undefined || categories!.includes(String(value));
  const enumerated = categories !== null && among(argument) && among(param.example);
  const listed = (list: readonly SqlValue[]) => list.map(shown).join(', ');
  const suffix = enumerated
    ? `${type}, one of ${listed(categories)}`
    : MATCHED.has(op)
      ? values.frequent.length
        ? `${type}, e.g. ${listed(values.frequent)}`
        : type
      : values.min !== null
        ? `${type}; the column holds ${shown(values.min)} to ${shown(values.max)}`
        : type;
  const tail = `; ${clip(suffix, 300)}`;
  return {
    ...param,
    description: clip(param.description, 500 - tail.length) + tail,
    ...(enumerated ? { enum: categories } : {}),
  };
}

/** A value a spec's enum can list. */
const isEnumText = (value: SqlValue): value is string => typeof value === 'string' && value.length <= MAX_ENUM_TEXT;

function typeText(param: ParameterSpec): string {
  if (param.format === 'date') return 'a date (YYYY-MM-DD)';
  if (param.format === 'date-time') return 'a date and time (YYYY-MM-DD HH:MM:SS)';
  return { string: 'text', integer: 'an integer', number: 'a number', boolean: 'true or false' }[param.type];
}

const STRFTIME_FIELDS: Record<string, string> = {
  Y: 'YYYY',
  m: 'MM',
  d: 'DD',
  H: 'HH',
  M: 'MM',
  S: 'SS',
  j: 'DDD',
  w: 'weekday 0-6',
};

/** A STRFTIME format as the form of its text (`%Y-%m` → YYYY-MM). */
function formPattern(format: string): string {
  return format.replace(/%(.)/g, (all, field: string) => STRFTIME_FIELDS[field] ?? all);
}

function shown(value: SqlValue): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  return String(value);
}

/** One read per column of a database file (the file's fingerprint in the key): endpoints share columns. */
const cache = new LruMap<string, Promise<ColumnValues>>(4096);

/** A column's values, or (`format`) the values STRFTIME makes of it. */
function columnValues(
  { table, column }: ResolvedColumn,
  format: string | null,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<ColumnValues> {
  const key = JSON.stringify([db.path, db.fingerprint, table.name, column.name, format]);
  return cache.getOrSet(key, () => {
    const categorical = format === null && columnAffinity(column) === 'text' && !column.collation;
    const read = readColumnValues(table.name, column.name, format, categorical, db, executor, timeoutMs);
    // A failed read is no fact about the column: the next endpoint tries again.
    read.catch(() => cache.delete(key));
    return read;
  });
}

async function readColumnValues(
  tableName: string,
  columnName: string,
  format: string | null,
  mayBeCategorical: boolean,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<ColumnValues> {
  const c = format === null ? quoteIdent(columnName) : `STRFTIME(?, ${quoteIdent(columnName)})`;
  const params = format === null ? [] : [format];
  const t = quoteIdent(tableName);
  // One scan: the values by frequency (ties by value), how many rows hold one, and the range (over every group, before LIMIT).
  const frequency = await executor.run({
    dbPath: db.path,
    sql: `SELECT v, COUNT(*) AS n, SUM(COUNT(*)) OVER () AS total, MIN(v) OVER () AS low, MAX(v) OVER () AS high FROM (SELECT ${c} AS v FROM ${t}) WHERE v IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT ${ENUM_MAX_VALUES + 1}`,
    params,
    timeoutMs,
  });
  const rows = frequency.rows;
  const total = Number(rows[0]?.[2] ?? 0);
  const few = rows.length > 0 && rows.length <= ENUM_MAX_VALUES && total >= rows.length * ENUM_MIN_ROWS_PER_VALUE;
  return {
    // An empty text tells a caller nothing of the values' form.
    frequent: rows
      .map((r) => r[0])
      .filter((v) => v !== '')
      .slice(0, EXAMPLES),
    categories: mayBeCategorical && few ? rows.map((r) => r[0]).sort(compareValues) : null,
    min: rows[0]?.[3] ?? null,
    max: rows[0]?.[4] ?? null,
  };
}

function compareValues(a: SqlValue, b: SqlValue): number {
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}
