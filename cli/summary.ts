import type { RunStats, Tally } from '../pipeline/stats.js';
import { topRejections } from '../pipeline/stats.js';

/** The end-of-run table: per formulation and database, with coverage and top rejection reasons. */
export function summaryTable(stats: RunStats, topN = 3): string {
  const header = ['formulation', 'db', 'input', 'accepted', 'rejected', 'coverage', 'top rejections'];
  const rows: string[][] = [];
  for (const [formulation, fs] of Object.entries(stats.formulations)) {
    for (const [db, tally] of Object.entries(fs.byDb)) rows.push(row(formulation, db, tally, topN));
    rows.push(row(formulation, 'TOTAL', fs.total, topN));
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(format)].join('\n');
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
