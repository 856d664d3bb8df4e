// Text taken from mail (names, addresses, subjects, bodies, reasons that quote them), made safe to
// show: control characters and bidirectional overrides are removed before it reaches the approvals
// page, a Discord message, the CLI's terminal or a log line. A right-to-left override can make
// `moc.live@yrollam` read as an innocent address, an escape sequence can rewrite a terminal, a line
// break can forge a log line. Used where text leaves for a person to read, never on stored data.

/**
 * C0 controls but tab and line feed, DEL, C1 controls, the bidi embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), the directional marks (U+200E, U+200F, U+061C), and the line and
 * paragraph separators (U+2028, U+2029).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export interface DisplayOptions {
  /** Keep line breaks (a reply's text); otherwise every line break and tab becomes a space. */
  multiline?: boolean;
}

export function displaySafe(text: string, options: DisplayOptions = {}): string {
  const withoutCr = text.replace(/\r\n?/g, '\n');
  const flat = options.multiline ? withoutCr : withoutCr.replace(/[\n\t]+/g, ' ');
  return flat.replace(UNSAFE, '');
}
