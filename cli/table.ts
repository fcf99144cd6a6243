/** Plain-text tables for the terminal: the first row is the header, columns two spaces apart. */
export function textTable(
  rows: readonly string[][],
  options: { rule?: boolean; rightAligned?: (column: number) => boolean } = {},
): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const format = (cells: readonly string[]) =>
    cells
      .map((c, i) => (options.rightAligned?.(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows.map(format);
  return [header, ...(options.rule ? [widths.map((w) => '-'.repeat(w)).join('  ')] : []), ...body].join('\n');
}
