import type { SqlValue } from '../../core/model.js';
import type { ParameterSite } from './endpoint-sites.js';

/**
 * How one hop's output becomes the next hop's argument (issue 36): each transform says when it
 * applies (the next parameter's site, the rows the hop gave), the one value it makes of them
 * in JavaScript (what an agent does with a response), and the same value in SQL (the composed
 * statement), so that both ways can be run and compared. A transform that cannot make exactly
 * one value of the rows does not apply: a bridge is never ambiguous.
 *
 * No "first row" transform: an ordered list's first row is the first of the rows tied on its
 * sort keys, which SQLite versions and plans put first differently (seen: Python's sqlite3
 * 3.40 and better-sqlite3's took different ones, and the reordered variant did not tell).
 */

export const TRANSFORM_KINDS = [
  'value',
  'max',
  'min',
  'alphabetical_first',
  'alphabetical_last',
  'year',
  'month',
] as const;
export type TransformKind = (typeof TRANSFORM_KINDS)[number];

export interface Transform {
  kind: TransformKind;
  /** Whether it can feed this parameter site. */
  feeds(site: ParameterSite): boolean;
  /** The value made of a field's values, or undefined: not exactly one value. */
  apply(values: readonly SqlValue[]): SqlValue | undefined;
  /**
   * The fewest values it is chosen for: a list's transforms are for lists (a single row is
   * `value`'s). Only where the chain is made, on the database: on a variant, the largest of
   * one value is that value.
   */
  chosenFrom: number;
  /** The same, in SQL: `column` of the rows of `rows` (a table name) as one scalar expression's SELECT. */
  sql(rows: string, column: string): string;
  /** The value in words, for a question: `field` is the field's name in words. */
  phrase(field: string): string;
}

/** A value compared as it is: `=`, `!=`, an order, a BETWEEN bound or an IN item (a LIKE pattern is not a value). */
const bareComparison = (site: ParameterSite) => site.fn === null && site.op !== 'LIKE' && site.op !== 'NOT LIKE';
const datePart = (format: string) => (site: ParameterSite) =>
  site.fn === 'STRFTIME' && site.fnFormat === format && (site.op === '=' || site.op === '!=');

const single = (values: readonly SqlValue[]) => (values.length === 1 && values[0] !== null ? values[0] : undefined);
const allNumbers = (values: readonly SqlValue[]): values is number[] =>
  values.length >= 1 && values.every((v) => typeof v === 'number');
/** Texts that compare alike in JavaScript (UTF-16 code units) and SQLite's BINARY collation (bytes): ASCII. */
const allAscii = (values: readonly SqlValue[]): values is string[] =>
  values.length >= 1 && values.every((v) => typeof v === 'string' && /^[\x20-\x7e]+$/.test(v));
const textMin = (values: string[]) => values.reduce((a, b) => (b < a ? b : a));
const textMax = (values: string[]) => values.reduce((a, b) => (b > a ? b : a));

/** An ISO date's text (`YYYY-MM-DD…`), SQLite's own form: its parts are where STRFTIME reads them. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/;

/**
 * The largest or smallest of a list's values, as SQL's MAX or MIN gives it, for the values
 * `fits` accepts. BINARY collation in the SQL: a column's own (NOCASE) would order text
 * otherwise than JavaScript does.
 */
function extremum<V extends SqlValue>(
  kind: TransformKind,
  fits: (values: readonly SqlValue[]) => values is V[],
  aggregate: 'MAX' | 'MIN',
  pick: (values: V[]) => V,
  words: string,
): Transform {
  return {
    kind,
    chosenFrom: 2,
    feeds: bareComparison,
    apply: (values) => (fits(values) ? pick(values) : undefined),
    sql: (rows, column) => `SELECT ${aggregate}(${column} COLLATE BINARY) FROM ${rows}`,
    phrase: (field) => `${words} ${field} it lists`,
  };
}

/**
 * One part of an ISO date (`YYYY-MM-DD…`, SQLite's own form: where STRFTIME reads its parts),
 * into a parameter compared with STRFTIME's `format` of a column: characters `start` (1-based)
 * to `start + length - 1`, as SQL's substr counts them.
 */
function datePartOf(kind: TransformKind, format: string, start: number, length: number): Transform {
  return {
    kind,
    chosenFrom: 1,
    feeds: datePart(format),
    apply: (values) => {
      const value = single(values);
      return typeof value === 'string' && ISO_DATE.test(value) ? value.slice(start - 1, start - 1 + length) : undefined;
    },
    sql: (rows, column) => `SELECT substr(${column}, ${start}, ${length}) FROM ${rows}`,
    phrase: (field) => `the ${kind} of the ${field} it gives`,
  };
}

const TRANSFORMS: Record<TransformKind, Transform> = {
  value: {
    kind: 'value',
    chosenFrom: 1,
    feeds: bareComparison,
    apply: single,
    sql: (rows, column) => `SELECT ${column} FROM ${rows}`,
    phrase: (field) => `the ${field} it gives`,
  },
  max: extremum('max', allNumbers, 'MAX', (v) => Math.max(...v), 'the largest'),
  min: extremum('min', allNumbers, 'MIN', (v) => Math.min(...v), 'the smallest'),
  alphabetical_first: extremum('alphabetical_first', allAscii, 'MIN', textMin, 'the alphabetically first'),
  alphabetical_last: extremum('alphabetical_last', allAscii, 'MAX', textMax, 'the alphabetically last'),
  year: datePartOf('year', '%Y', 1, 4),
  month: datePartOf('month', '%m', 6, 2),
};

export const transformOf = (kind: TransformKind): Transform => TRANSFORMS[kind];

/** The transforms that can carry a field's values into this parameter site, in TRANSFORM_KINDS order. */
export function transformsFor(site: ParameterSite): Transform[] {
  return TRANSFORM_KINDS.map((kind) => TRANSFORMS[kind]).filter((t) => t.feeds(site));
}
