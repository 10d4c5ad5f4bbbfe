/** The value at quantile q (0..1) of ascending `sorted`, by the nearest-rank method; NaN when empty. */
export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

/** Rounds for display: three significant digits at most, never more than `decimals` decimals. */
export function round(value: number, decimals = 2): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.floor(Math.log10(Math.abs(value) || 1));
  const digits = Math.min(decimals, Math.max(0, 2 - magnitude));
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A plain-text table with right-aligned columns, for a terminal and for Markdown alike. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [
    header,
    ...rows.map((row) => row.map((cell) => (typeof cell === 'number' ? show(cell) : cell))),
  ];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (i === 0 ? `-${'-'.repeat(width)}-` : `-${'-'.repeat(width)}:`)).join('|')}|`;
  return [line(cells[0] as string[]), rule, ...cells.slice(1).map(line)].join('\n');
}

function show(value: number): string {
  if (Number.isNaN(value)) return '–';
  return String(round(value, Math.abs(value) < 0.1 ? 3 : 2));
}
