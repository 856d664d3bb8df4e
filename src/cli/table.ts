// Columns padded to their widest cell, two spaces apart: the CLI's tables. Cells hold text from mail
// (senders, subjects, reasons quoting them): control characters and bidi overrides are dropped.
import { displaySafe } from '../shared/display-text.js';

export function printTable(out: (line: string) => void, header: string[], cells: string[][]): void {
  const rows = cells.map((r) => r.map((c) => displaySafe(c)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  out(format(header));
  for (const r of rows) out(format(r));
}
