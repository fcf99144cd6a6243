import { vakraHandlePrefix } from '../../eval/predictions/vakra.js';
import type { ColumnReading } from './pandas-reading.js';

/**
 * Where the two published runtimes of SLOT/SEL differ (calls.ts translates for either):
 *
 * - VAKRA's capability-1 MCP server (IBM/vakra environment/m3/python_tools): tables stay on
 *   the server under handles (`data_label`, `data_label_1`/`_2`), a value is written in (it
 *   resolves no `$LABEL$`), `aggregation_operation`, a count of rows leaves `key_name` out (it
 *   checks key names against the table), datetime parts and the Calculator exist; one starting
 *   table per universe, its aliases sorted as its mapping holds them.
 * - Live API-Bench's runtime (IBM/m3-train-eval invocable_api_hub/tool_calling): outputs are
 *   passed by `$LABEL$` (`data_source`, `data_source_1`/`_2`), which it resolves for any output,
 *   so SEL's truncate and select_unique_values read a getter's list; `aggregation_type`; a count
 *   of rows is `key_name: ""`; transforms are substring and abs (SEL: substring only), no
 *   calculator; an init call in the sequence starts a nested SELECT's table; every join INNER.
 *   Its tables pass through CSV files (pandas-reading.ts), and its `like` is broken (pattern
 *   and value swapped), so a filter is written in the equivalent form it runs right: a
 *   `LIKE '%text%'` as `contains` (case-insensitive, as SQLite's LIKE is for ASCII), a
 *   comparison of a column it reads back as numbers with integer text as the number (SQLite
 *   compares a TEXT column with an integer as text, and a numeric one with text as a number).
 */

export interface Dialect {
  name: string;
  /** Tables kept under handles (VAKRA) rather than passed by label. */
  handles: boolean;
  handlePrefix(tool: string): string;
  names: { data: string; data1: string; data2: string; aggregation: string };
  /** A count of rows: the arguments that say it. */
  countRows: Record<string, unknown>;
  slotTransforms: ReadonlySet<string>;
  selTransforms: ReadonlySet<string>;
  calculator: boolean;
  /** SEL's select_unique_values and truncate may read a getter's list by reference. */
  listsByReference: boolean;
  nestedStartingTables: boolean;
  cannotNest: string;
  /** Where a nested SELECT's further init call finds the database (the runtime rewrites only the first's). */
  nestedDatabasePath(db: string): string;
  sortsAliases: boolean;
  innerJoinsOnly: boolean;
  /** Its min and max are `int(np.nanmin(…))`: a fraction loses its digits. */
  minMaxAsIntegers: boolean;
  /**
   * A filter of `key` (nl2api's name: a starting key or a derived one) with a published
   * condition and value, as the runtime runs it (an equivalent form where it would not run the
   * one given right), and what it meets of the runtime's departures from SQLite.
   */
  filter(key: string, condition: string, value: unknown): PublishedFilter;
}

export interface PublishedFilter {
  condition: string;
  value: unknown;
  departures: string[];
}

/** Departures of the filter both runtimes share (slot_filling_tools.py filter_data). */
function sharedFilterDepartures(name: string, condition: string, value: unknown): string[] {
  const departures: string[] = [];
  if (condition === 'contains') departures.push(`contains: ${name} matches case-insensitively, as a regex`);
  if (typeof value === 'number' && !Number.isInteger(value))
    departures.push(`fractional value: ${name} truncates it when the column holds integers`);
  return departures;
}

export const VAKRA: Dialect = {
  name: 'VAKRA',
  handles: true,
  handlePrefix: (tool) => vakraHandlePrefix(tool) ?? 'result',
  names: { data: 'data_label', data1: 'data_label_1', data2: 'data_label_2', aggregation: 'aggregation_operation' },
  countRows: {},
  slotTransforms: new Set(['substring', 'abs', 'datetime']),
  selTransforms: new Set(['substring', 'abs', 'datetime']),
  calculator: true,
  listsByReference: false,
  nestedStartingTables: false,
  cannotNest: "VAKRA's get_data loads one starting table",
  nestedDatabasePath: (db) => `${db}/${db}.sqlite`,
  sortsAliases: true,
  innerJoinsOnly: true,
  minMaxAsIntegers: false,
  filter: (_key, condition, value) => ({
    condition,
    value,
    departures: [
      ...sharedFilterDepartures('VAKRA', condition, value),
      ...(condition === 'like' ? ['like: VAKRA matches case-sensitively, as a regex, and fails on NULL'] : []),
    ],
  }),
};

/**
 * Live API-Bench's runtime; `databasePath` is where a nested SELECT's init call finds its
 * database, `columns` how its pandas reads each starting key's column back (pandas-reading.ts).
 */
export function liveApiBenchDialect(
  databasePath: (db: string) => string,
  columns: Readonly<Record<string, ColumnReading>> = {},
): Dialect {
  const name = 'the Live API-Bench runtime';
  const readsNumbers = (key: string) => columns[key]?.comparedAsNumbers === true;
  return {
    name,
    handles: false,
    handlePrefix: () => '',
    names: { data: 'data_source', data1: 'data_source_1', data2: 'data_source_2', aggregation: 'aggregation_type' },
    countRows: { key_name: '' },
    slotTransforms: new Set(['substring', 'abs']),
    selTransforms: new Set(['substring']),
    calculator: false,
    listsByReference: true,
    nestedStartingTables: true,
    cannotNest: '',
    nestedDatabasePath: databasePath,
    sortsAliases: false,
    innerJoinsOnly: true,
    minMaxAsIntegers: true,
    filter: (key, condition, value) => {
      const text = condition === 'like' && typeof value === 'string' ? /^%([^%_]+)%$/.exec(value)?.[1] : undefined;
      if (text !== undefined && PLAIN_ASCII.test(text) && !REGEX_METACHARACTERS.test(text))
        return { condition: 'contains', value: text, departures: [] };
      const number =
        readsNumbers(key) &&
        typeof value === 'string' &&
        INTEGER_TEXT.test(value) &&
        Number.isSafeInteger(Number(value));
      if (number) return { condition, value: Number(value), departures: [] };
      const departures = [
        ...sharedFilterDepartures(name, condition, value),
        ...(condition === 'like'
          ? [`like: ${name} swaps the pattern and the value, matches as a regex and fails on NULL`]
          : []),
        ...(value === null ? [`null test: ${name} compares with None and keeps no row`] : []),
        // A starting key's column is known; a derived one (a substring, say) may hold digits too.
        ...(typeof value === 'string' && /^-?\d+$/.test(value) && (readsNumbers(key) || !(key in columns))
          ? [`digit string: ${name} reads a CSV that retypes such a column as numbers`]
          : []),
      ];
      return { condition, value, departures };
    },
  };
}

/** Text `contains` matches as SQLite's LIKE '%text%' does: ASCII (SQLite folds ASCII case only), no regex metacharacter. */
const PLAIN_ASCII = /^[\x20-\x7e]+$/;
const REGEX_METACHARACTERS = /[.^$*+?()[\]{}|\\]/;
/** Integer text as SQLite writes an integer: no leading zero, no plus sign. */
const INTEGER_TEXT = /^(0|-?[1-9]\d*)$/;
