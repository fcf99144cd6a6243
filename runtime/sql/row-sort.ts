import type { SqlValue } from '../../core/model.js';

/**
 * One total order over result rows, for answers whose order SQL leaves open (a query
 * without ORDER BY): whichever plan produced them, the same rows come out the same way.
 * Values compare as NULL, then numbers by value, then text by UTF-16 code units; rows
 * column by column.
 */
export function sortedRows<Row extends readonly SqlValue[]>(rows: readonly Row[]): Row[] {
  return [...rows].sort(compareRows);
}

function compareRows(a: readonly SqlValue[], b: readonly SqlValue[]): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = compareValues(a[i], b[i]);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

function compareValues(a: SqlValue, b: SqlValue): number {
  const rank = rankOf(a) - rankOf(b);
  if (rank !== 0 || a === null) return rank;
  if (typeof a === 'number') return a - (b as number);
  return a < (b as string) ? -1 : a > (b as string) ? 1 : 0;
}

function rankOf(value: SqlValue): number {
  return value === null ? 0 : typeof value === 'number' ? 1 : 2;
}
