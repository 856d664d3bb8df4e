// RFC 5322 address lists: parse From/To/Cc values as they arrive (raw, possibly with encoded-words in display
// names) and format them back for outgoing headers. Parsing is structural first, then decodes each display
// name, so a decoded name containing a comma or '<' cannot split an address.

import { decodeHeaderText, encodeHeaderText, needsHeaderEncoding } from './mime-encoding.js';
import type { EmailAddress } from './types.js';

export function parseAddressList(value: string | undefined, warnings?: string[]): EmailAddress[] {
  if (!value) return [];
  const unfolded = value.replace(/\r?\n[ \t]*/g, ' ');
  const addresses: EmailAddress[] = [];
  for (const entry of splitTopLevel(unfolded)) {
    const parsed = parseMailbox(entry, warnings);
    if (parsed) addresses.push(parsed);
  }
  return addresses;
}

export function parseAddress(value: string | undefined, warnings?: string[]): EmailAddress | null {
  return parseAddressList(value, warnings)[0] ?? null;
}

/** Splits on top-level commas, treating group syntax (`Team: a@x, b@y;`) as a flat list. */
function splitTopLevel(value: string): string[] {
  const entries: string[] = [];
  let current = '';
  let inQuotes = false;
  let angleDepth = 0;
  let commentDepth = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (inQuotes) {
      current += char;
      if (char === '\\' && i + 1 < value.length) current += value[++i];
      else if (char === '"') inQuotes = false;
      continue;
    }
    if (commentDepth > 0) {
      current += char;
      if (char === '\\' && i + 1 < value.length) current += value[++i];
      else if (char === '(') commentDepth++;
      else if (char === ')') commentDepth--;
      continue;
    }
    if (char === '"') inQuotes = true;
    else if (char === '(') commentDepth++;
    else if (char === '<') angleDepth++;
    else if (char === '>') angleDepth = Math.max(0, angleDepth - 1);
    else if (angleDepth === 0 && (char === ',' || char === ';')) {
      entries.push(current);
      current = '';
      continue;
    } else if (angleDepth === 0 && char === ':') {
      // Group display name ("undisclosed-recipients:"): drop it, keep its members.
      current = '';
      continue;
    }
    current += char;
  }
  entries.push(current);
  return entries.map((e) => e.trim()).filter((e) => e !== '');
}

function parseMailbox(entry: string, warnings?: string[]): EmailAddress | null {
  const angle = /<([^<>]*)>/.exec(entry);
  if (angle) {
    const address = angle[1]!.trim();
    const rawName = (entry.slice(0, angle.index) + entry.slice(angle.index + angle[0].length)).trim();
    const name = cleanDisplayName(stripComments(rawName).trim() || commentText(rawName), warnings);
    if (!address) return null;
    return name ? { name, address } : { address };
  }
  // Bare addr-spec, maybe with an old-style "(Real Name)" comment.
  const address = stripComments(entry).trim().replace(/^"(.*)"$/, '$1');
  if (!address.includes('@')) {
    warnings?.push(`address without "@" ignored: ${address.slice(0, 60)}`);
    return null;
  }
  const name = cleanDisplayName(commentText(entry), warnings);
  return name ? { name, address } : { address };
}

function stripComments(text: string): string {
  let out = '';
  let depth = 0;
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      if (depth === 0) out += char + text[i + 1];
      i++;
      continue;
    }
    if (!inQuotes && char === '(') depth++;
    else if (!inQuotes && char === ')' && depth > 0) depth--;
    else if (depth === 0) {
      if (char === '"') inQuotes = !inQuotes;
      out += char;
    }
  }
  return out;
}

function commentText(text: string): string {
  const match = /\(([^()]*)\)/.exec(text);
  return match ? match[1]!.trim() : '';
}

function cleanDisplayName(raw: string, warnings?: string[]): string {
  if (!raw) return '';
  // Decode encoded-words first (they are not allowed inside quotes, but senders put them there anyway).
  let name = decodeHeaderText(raw, warnings).trim();
  if (name.startsWith('"') && name.endsWith('"') && name.length >= 2) {
    name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  } else {
    name = name.replace(/"/g, '');
  }
  return name.replace(/\s+/g, ' ').trim();
}

// RFC 5322 "specials" that force a display name into a quoted-string.
const NEEDS_QUOTING = /[()<>[\]:;@\\,."]/;

/** `Name <addr>` with the name RFC 2047-encoded when not ASCII, quoted when it has specials. */
export function formatAddress(address: EmailAddress): string {
  const addr = stripHeaderBreaks(address.address).trim();
  const name = stripHeaderBreaks(address.name ?? '').trim();
  if (!name) return addr;
  if (needsHeaderEncoding(name)) return `${encodeHeaderText(name)} <${addr}>`;
  if (NEEDS_QUOTING.test(name)) return `"${name.replace(/(["\\])/g, '\\$1')}" <${addr}>`;
  return `${name} <${addr}>`;
}

export function formatAddressList(addresses: EmailAddress[]): string {
  return addresses.map(formatAddress).join(', ');
}

/** Case-insensitive comparison of bare addresses. */
export function sameAddress(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Removes CR/LF (and other C0 controls but tab) so caller data cannot inject headers. */
export function stripHeaderBreaks(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\r\n]+/g, ' ').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
}
