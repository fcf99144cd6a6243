import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/**
 * BIRD's column descriptions: `<db>/database_description/<table>.csv` with columns
 * original_column_name, column_name, column_description, data_format, value_description.
 * The files come from many hands: a BOM, Windows-1252 bytes, extra or missing fields and
 * blank rows all occur, and none of that may stop a load.
 */

export interface ColumnDescription {
  description: string;
  valueDescription: string;
}

/** lower-cased table name → lower-cased column name → description. */
export type TableDescriptions = Map<string, Map<string, ColumnDescription>>;

export async function readDescriptions(dir: string, warnings: string[]): Promise<TableDescriptions> {
  const tables: TableDescriptions = new Map();
  let files: string[];
  try {
    files = (await readdir(dir)).filter((file) => file.toLowerCase().endsWith('.csv')).sort();
  } catch {
    return tables; // descriptions are optional
  }
  for (const file of files) {
    const filePath = path.join(dir, file);
    try {
      tables.set(
        path.basename(file, path.extname(file)).toLowerCase(),
        parseDescriptions(decodeText(await readFile(filePath))),
      );
    } catch (error) {
      warnings.push(
        `column descriptions ${filePath} unreadable, column names used instead: ${(error as Error).message}`,
      );
    }
  }
  return tables;
}

/** UTF-8 when the bytes are valid UTF-8, else Windows-1252 (BIRD's bullets are 0x95); BOM dropped. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Node decodes every "latin1"/"windows-1252" label as ISO-8859-1: map 0x80-0x9F ourselves.
    return Buffer.from(bytes)
      .toString('latin1')
      .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80] || c);
  }
}

/** Windows-1252 characters for bytes 0x80-0x9F ('' where the byte is undefined). */
const WINDOWS_1252_HIGH = [
  '\u20ac',
  '',
  '\u201a',
  '\u0192',
  '\u201e',
  '\u2026',
  '\u2020',
  '\u2021',
  '\u02c6',
  '\u2030',
  '\u0160',
  '\u2039',
  '\u0152',
  '',
  '\u017d',
  '',
  '',
  '\u2018',
  '\u2019',
  '\u201c',
  '\u201d',
  '\u2022',
  '\u2013',
  '\u2014',
  '\u02dc',
  '\u2122',
  '\u0161',
  '\u203a',
  '\u0153',
  '',
  '\u017e',
  '\u0178',
];

export function parseDescriptions(text: string): Map<string, ColumnDescription> {
  const records = parse<Record<string, string | undefined>>(text, {
    columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()),
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    bom: true,
  });
  const columns = new Map<string, ColumnDescription>();
  for (const record of records) {
    const original = clean(record.original_column_name);
    if (!original) continue; // an odd row: nothing to attach it to
    const description = clean(record.column_description) || clean(record.column_name);
    columns.set(original.toLowerCase(), { description, valueDescription: clean(record.value_description) });
  }
  return columns;
}

function clean(value: string | undefined): string {
  return (value ?? '').trim();
}
