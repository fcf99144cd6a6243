import { parquetWriteBuffer } from 'hyparquet-writer';

/**
 * Sample records as one Parquet file (issue 13's Hugging Face layout), with hyparquet-writer:
 * a column per field in first-seen order; a field whose values are all strings is `STRING`,
 * all numbers `DOUBLE`, all booleans `BOOLEAN`, anything else (calls, answers, verdicts)
 * `JSON` text, which the Hugging Face viewer and `datasets` read as strings. A field a record
 * lacks is null there.
 */

type ColumnType = 'STRING' | 'DOUBLE' | 'BOOLEAN' | 'JSON';

export function recordsToParquet(records: readonly Record<string, unknown>[]): ArrayBuffer {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const record of records)
    for (const name of Object.keys(record))
      if (!seen.has(name)) {
        seen.add(name);
        names.push(name);
      }
  const columnData = names.map((name) => {
    const values = records.map((record) => record[name] ?? null);
    const type = columnType(values);
    const data = type === 'JSON' ? values.map((v) => (v === null ? null : JSON.stringify(v))) : values;
    return { name, data, type };
  });
  return parquetWriteBuffer({ columnData });
}

function columnType(values: readonly unknown[]): ColumnType {
  const present = values.filter((v) => v !== null);
  if (present.length > 0 && present.every((v) => typeof v === 'string')) return 'STRING';
  if (present.length > 0 && present.every((v) => typeof v === 'number')) return 'DOUBLE';
  if (present.length > 0 && present.every((v) => typeof v === 'boolean')) return 'BOOLEAN';
  return 'JSON';
}
