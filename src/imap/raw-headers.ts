// Small operations on a raw message's header block (bytes kept one char per byte, so 8-bit content
// survives): read a header, drop one, the block itself (for hashing).
function split(raw: Uint8Array): { head: string; rest: string; eol: string } {
  const text = Buffer.from(raw).toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const firstBreak = text.indexOf('\n');
  const eol = firstBreak > 0 && text[firstBreak - 1] !== '\r' ? '\n' : '\r\n';
  return end === -1 ? { head: text, rest: '', eol } : { head: text.slice(0, end), rest: text.slice(end), eol };
}

/** The header block's bytes (without the blank line): stable across IMAP moves, so fit for hashing. */
export function headerBlock(raw: Uint8Array): Uint8Array {
  return Buffer.from(split(raw).head, 'latin1');
}

/** Every value of a header, unfolded, undecoded. */
export function rawHeaderValues(raw: Uint8Array, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  let current: string | undefined;
  for (const line of split(raw).head.split(/\r?\n/)) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && current !== undefined) {
      current += line;
      continue;
    }
    if (current !== undefined) values.push(current.trim());
    const colon = line.indexOf(':');
    current = colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted ? line.slice(colon + 1) : undefined;
  }
  if (current !== undefined) values.push(current.trim());
  return values;
}

export function rawHeader(raw: Uint8Array, name: string): string | undefined {
  return rawHeaderValues(raw, name)[0];
}

/** The message without any `name` header (folded lines included). */
export function withoutHeader(raw: Uint8Array, name: string): Uint8Array {
  const { head, rest, eol } = split(raw);
  const wanted = name.toLowerCase();
  const kept: string[] = [];
  let dropping = false;
  for (const line of head.split(/\r?\n/)) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (!dropping) kept.push(line);
      continue;
    }
    const colon = line.indexOf(':');
    dropping = colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted;
    if (!dropping) kept.push(line);
  }
  return Buffer.from(kept.join(eol) + rest, 'latin1');
}

/** 8-bit header bytes that are valid UTF-8 (RFC 6532) read as UTF-8; anything else stays one char per byte. */
export function utf8IfValid(latin1: string): string {
  if (!/[\x80-\xff]/.test(latin1)) return latin1;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
}
