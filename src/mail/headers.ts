// Header helpers for already-decoded header text (RFC 2047 decoding happens when the message is read).
// Pure functions: safe in activities and in workflow code. Addresses are read in one place only,
// src/gmail/addresses.ts (activities), never here.

/** A header's value by case-insensitive name, or undefined when the message has no such header. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
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
