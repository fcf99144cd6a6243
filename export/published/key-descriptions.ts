import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { databaseFile, tableColumnsOf } from './first-columns.js';
import { makeSafe, type PublishedInitArguments } from '../../eval/predictions/published-names.js';
import { PANDAS_MISSING } from './pandas-reading.js';

/**
 * A starting table's `key_values_and_descriptions` as the published builders list them
 * (IBM/live-api-bench's `set_query_specific_columns_and_descriptions`, IBM/m3-train-eval's
 * method of that name): `{key_name, description, dtype}` per key of the table the init call
 * builds, in their order: per table (in `alias_to_table_dict` order, a table once), per alias
 * of it, per row of the table's BIRD description CSV (`<db>/database_description/<table>.csv`).
 * They read the CSV with pandas, so the description is the field as written (a missing one,
 * or one pandas reads as missing, is `null`: IBM/live-api-bench's `clean_for_json` makes NaN
 * None) and the dtype is their `translate_data_type` of the `data_format`'s Python type:
 * `text` → "string", `integer` → "integer", `real` → "number", none at all (NaN, a float) →
 * "number", anything else (`date`, `datetime`, another word) → "object".
 *
 * The published builders refuse a sample whose starting table has a column its CSV does not
 * list under the same name (their key count assertion); such keys are listed here after the
 * others, in SQLite's column order, with description `null` and dtype "object", so that a
 * record names every key its starting table has.
 */

export interface KeyDescription {
  key_name: string;
  description: string | null;
  dtype: string;
}

/** A description CSV row as the published loaders keep it: the column made safe, its description and dtype. */
interface DescribedColumn {
  column: string;
  description: string | null;
  dtype: string;
}

/** `data_format` (stripped) → the dtype string the published builders derive from its Python type. */
const DTYPES: Record<string, string> = {
  text: 'string',
  integer: 'integer',
  real: 'number',
  date: 'object',
  datetime: 'object',
  '': 'object',
};

const dtypeOf = (format: string) => (Object.hasOwn(DTYPES, format) ? DTYPES[format] : 'object');

const missing = (value: string | undefined): value is undefined => value === undefined || PANDAS_MISSING.has(value);

/** pandas' read_csv of one description file: UTF-8 (its BOM dropped), else Latin-1, as the published loaders retry. */
export function parseDescriptionCsv(bytes: Uint8Array): DescribedColumn[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    text = Buffer.from(bytes).toString('latin1');
  }
  const records = parse<Record<string, string | undefined>>(text, {
    columns: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
  });
  return records.flatMap((record) => {
    const original = record.original_column_name;
    if (missing(original)) return []; // make_safe fails on NaN there: no such key
    const format = record.data_format;
    return [
      {
        column: makeSafe(original),
        description: missing(record.column_description) ? null : record.column_description,
        dtype: missing(format) ? 'number' : dtypeOf(format.trim()),
      },
    ];
  });
}

/** Per database folder: table name (lower case, as IBM/live-api-bench finds it) → its described columns. */
const descriptionCache = new Map<string, Map<string, DescribedColumn[]>>();

function descriptionsOf(dir: string): Map<string, DescribedColumn[]> {
  let tables = descriptionCache.get(dir);
  if (tables) return tables;
  tables = new Map();
  const folder = path.join(dir, 'database_description');
  if (existsSync(folder))
    for (const file of readdirSync(folder).sort()) {
      if (file.startsWith('.') || !file.endsWith('.csv')) continue;
      try {
        tables.set(file.slice(0, -4).toLowerCase(), parseDescriptionCsv(readFileSync(path.join(folder, file))));
      } catch {
        // A file pandas could not read either: its table's keys are listed undescribed.
      }
    }
  descriptionCache.set(dir, tables);
  return tables;
}

/**
 * The starting table's keys with their descriptions, as the published builders list them, for
 * the published init arguments of database `db` under a source's databases folder (`[]` when
 * its file is not found).
 */
export function keyDescriptions(databases: string, db: string, init: PublishedInitArguments): KeyDescription[] {
  const file = databaseFile(databases, db);
  if (!file) return [];
  const aliases = Object.entries(init.alias_to_table_dict);
  const joined = init.condition_sequence.length > 0;
  // The runtime's key of each column: bare for one table without an alias, else prefixed (a join's prefix made safe too).
  const keys = aliases.flatMap(([alias, { original_table_name: table, modified_table_name: modified }]) =>
    (tableColumnsOf(file).get(table.toLowerCase()) ?? []).map((name) => {
      const column = makeSafe(name);
      const prefix = alias === '' ? '' : `${joined ? makeSafe(modified) : modified}_`;
      return { alias, column, key: prefix + column };
    }),
  );
  const described =
    path.basename(path.dirname(file)) === db
      ? descriptionsOf(path.dirname(file))
      : new Map<string, DescribedColumn[]>();
  const listed: KeyDescription[] = [];
  const done = new Set<string>();
  for (const table of new Set(aliases.map(([, t]) => t.original_table_name))) {
    const rows: DescribedColumn[] = described.get(table.toLowerCase()) ?? [];
    for (const [alias] of aliases.filter(([, t]) => t.original_table_name === table))
      for (const row of rows) {
        const key = keys.find((k) => k.alias === alias && k.column === row.column);
        if (!key || done.has(key.key)) continue;
        done.add(key.key);
        listed.push({ key_name: key.key, description: row.description, dtype: row.dtype });
      }
  }
  for (const { key } of keys)
    if (!done.has(key)) {
      done.add(key);
      listed.push({ key_name: key, description: null, dtype: 'object' });
    }
  return listed;
}
