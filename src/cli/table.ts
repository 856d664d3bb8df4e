// Columns padded to their widest cell, two spaces apart: the CLI's tables.
export function printTable(out: (line: string) => void, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  out(format(header));
  for (const r of rows) out(format(r));
}
