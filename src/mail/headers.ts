// Header helpers for already-decoded header text (RFC 2047 decoding happens when the message is read).
// Pure functions: safe in activities and in workflow code.

export interface MailAddress {
  /** The display name without quotes, when there is one. */
  name?: string;
  /** The addr-spec, lower-cased: mail systems treat addresses case-insensitively in practice. */
  address: string;
}

const ADDR_SPEC = /^[^\s@<>",]+@[^\s@<>",]+$/;

/**
 * Parses one mailbox: `Name <a@b>`, `"Doe, Jane" <a@b>`, `<a@b>`, `a@b` or `a@b (Name)`.
 * Returns null when there is no usable address.
 */
export function parseAddress(raw: string): MailAddress | null {
  const text = raw.trim();
  const angle = /<([^<>]*)>\s*$/.exec(text);
  if (angle) {
    const address = (angle[1] ?? '').trim().toLowerCase();
    if (!ADDR_SPEC.test(address)) return null;
    return withName(address, text.slice(0, angle.index));
  }
  const comment = /^(\S+)\s*\(([^()]*)\)$/.exec(text);
  const address = (comment ? (comment[1] ?? '') : text).toLowerCase();
  if (!ADDR_SPEC.test(address)) return null;
  return withName(address, comment?.[2] ?? '');
}

function withName(address: string, rawName: string): MailAddress {
  let name = rawName.trim();
  if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) {
    name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  name = name.trim();
  return name ? { name, address } : { address };
}

/** Parses an address-list header (To, Cc): commas inside quotes or angle brackets do not split. */
export function parseAddressList(raw: string): MailAddress[] {
  const parts: string[] = [];
  let current = '';
  let inQuotes = false;
  let inAngle = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '\\' && inQuotes && i + 1 < raw.length) {
      current += ch + raw[++i];
      continue;
    }
    if (ch === '"') inQuotes = !inQuotes;
    else if (ch === '<' && !inQuotes) inAngle = true;
    else if (ch === '>' && !inQuotes) inAngle = false;
    if (ch === ',' && !inQuotes && !inAngle) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts.map(parseAddress).filter((a): a is MailAddress => a !== null);
}

/** The lower-cased domain of an address (`jane@Mail.Example.com` → `mail.example.com`), or '' without one. */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

/** A header's value by case-insensitive name, or undefined when the message has no such header. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

/** The sender's address and domain from a From header ('' for both when it has no usable address). */
export function senderOf(from: string): { address: string; domain: string } {
  const address = parseAddress(from)?.address ?? '';
  return { address, domain: domainOf(address) };
}

const HTML_HINT = /<(?:br|div|p|span|html|body|blockquote|table)\b[^>]*>/i;

/** True when text is an HTML fragment rather than plain text (as Gmail's editor produces). */
export function looksLikeHtml(text: string): boolean {
  return HTML_HINT.test(text);
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * A plain-text rendering of an HTML fragment good enough to read what a user typed: block elements and
 * <br> become line breaks, other tags go, entities are decoded. Not a general HTML renderer.
 */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(?:div|p|li|tr|h[1-6]|blockquote)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
      if (entity[0] === '#') {
        const code =
          entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
    });
}
