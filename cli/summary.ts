import type { RunStats, Tally } from '../pipeline/stats.js';
import { topRejections } from '../pipeline/stats.js';
import { textTable } from './table.js';

/** The end-of-run table: per formulation and database, with coverage and top rejection reasons. */
export function summaryTable(stats: RunStats, topN = 3): string {
  const header = ['formulation', 'db', 'input', 'accepted', 'rejected', 'coverage', 'top rejections'];
  const rows: string[][] = [];
  for (const [formulation, fs] of Object.entries(stats.formulations)) {
    for (const [db, tally] of Object.entries(fs.byDb)) rows.push(row(formulation, db, tally, topN));
    rows.push(row(formulation, 'TOTAL', fs.total, topN));
  }
  return textTable([header, ...rows], { rule: true, rightAligned: (column) => column >= 2 && column <= 5 });
}

export function coverage(tally: Tally): string {
  return tally.input === 0 ? '-' : `${((100 * tally.accepted) / tally.input).toFixed(1)}%`;
}

function row(formulation: string, db: string, tally: Tally, topN: number): string[] {
  return [
    formulation,
    db,
    String(tally.input),
    String(tally.accepted),
    String(tally.rejected),
    coverage(tally),
    topRejections(tally, topN)
      .map(([reason, n]) => `${reason} (${n})`)
      .join(', '),
  ];
}
