// Byte-level codecs for mail: base64url (Gmail's wire format for raw/body data), quoted-printable
// (RFC 2045 §6.7), RFC 2047 encoded-words for header text, and charset decoding through TextDecoder.
// Decoders are lenient and never throw: mail in the wild is often slightly broken.

const utf8Encoder = new TextEncoder();

export function encodeBase64Url(input: string | Uint8Array): string {
  const bytes = typeof input === 'string' ? utf8Encoder.encode(input) : input;
  return Buffer.from(bytes).toString('base64url');
}

/** Accepts base64url and standard base64, with or without padding; invalid characters are skipped. */
export function decodeBase64Url(data: string): Uint8Array {
  return new Uint8Array(Buffer.from(data, 'base64url'));
}

/**
 * Decode bytes in `charset` to a string. Unknown charsets fall back to UTF-8 (with a warning); malformed
 * sequences become U+FFFD rather than an exception.
 */
export function decodeCharset(bytes: Uint8Array, charset: string | undefined, warnings?: string[]): string {
  const label = (charset ?? 'utf-8').trim().toLowerCase() || 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    warnings?.push(`unknown charset "${label}", decoded as UTF-8`);
    decoder = new TextDecoder('utf-8');
  }
  // WHATWG maps us-ascii, iso-8859-1 and windows-1252 to windows-1252, but Node 20 decodes that as plain
  // latin1, turning Outlook's curly quotes (0x93/0x94) into C1 controls.
  if (decoder.encoding === 'windows-1252') return decodeWindows1252(bytes);
  return decoder.decode(bytes);
}

// windows-1252 0x80–0x9F; the five undefined positions keep their latin1 code point, as WHATWG does.
const WINDOWS_1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += String.fromCharCode(byte >= 0x80 && byte <= 0x9f ? WINDOWS_1252_HIGH[byte - 0x80]! : byte);
  return out;
}

const HEX = '0123456789ABCDEF';

function isHexDigit(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66));
}

function hexValue(byte: number): number {
  if (byte <= 0x39) return byte - 0x30;
  if (byte <= 0x46) return byte - 0x41 + 10;
  return byte - 0x61 + 10;
}

/**
 * Quoted-printable encode UTF-8 text for a body. Hard line breaks become CRLF; lines are soft-wrapped so that
 * no encoded line exceeds 76 characters; trailing whitespace before a hard break is escaped.
 */
export function encodeQuotedPrintable(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  return lines.map(encodeQuotedPrintableLine).join('\r\n');
}

function encodeQuotedPrintableLine(line: string): string {
  const bytes = utf8Encoder.encode(line);
  const tokens: string[] = [];
  bytes.forEach((byte, index) => {
    const isLast = index === bytes.length - 1;
    const isWhitespace = byte === 0x20 || byte === 0x09;
    const isLiteral = (byte >= 0x21 && byte <= 0x7e && byte !== 0x3d) || (isWhitespace && !isLast);
    tokens.push(isLiteral ? String.fromCharCode(byte) : `=${HEX[byte >> 4]}${HEX[byte & 0x0f]}`);
  });
  const out: string[] = [];
  let current = '';
  for (const token of tokens) {
    // 75 leaves room for the '=' of a soft line break.
    if (current.length + token.length > 75) {
      out.push(`${current}=`);
      current = '';
    }
    current += token;
  }
  out.push(current);
  return out.join('\r\n');
}

/** Quoted-printable decode to bytes. Malformed escapes are kept literally; soft breaks (`=` + EOL) vanish. */
export function decodeQuotedPrintable(input: string | Uint8Array): Uint8Array {
  const bytes = typeof input === 'string' ? latin1OrUtf8Bytes(input) : input;
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte !== 0x3d) {
      out.push(byte);
      continue;
    }
    const a = bytes[i + 1];
    const b = bytes[i + 2];
    if (isHexDigit(a) && isHexDigit(b)) {
      out.push((hexValue(a!) << 4) | hexValue(b!));
      i += 2;
      continue;
    }
    // Soft line break, tolerating transport-added trailing whitespace between '=' and the line end.
    let j = i + 1;
    while (bytes[j] === 0x20 || bytes[j] === 0x09) j++;
    if (bytes[j] === 0x0d && bytes[j + 1] === 0x0a) {
      i = j + 1;
      continue;
    }
    if (bytes[j] === 0x0a || j >= bytes.length) {
      i = j;
      continue;
    }
    out.push(byte);
  }
  return new Uint8Array(out);
}

// A JS string holding QP text is usually ASCII; treat chars ≤ 0xFF as bytes and anything wider as UTF-8.
function latin1OrUtf8Bytes(input: string): Uint8Array {
  // eslint-disable-next-line no-control-regex
  return /^[\u0000-\u00ff]*$/.test(input) ? new Uint8Array(Buffer.from(input, 'latin1')) : utf8Encoder.encode(input);
}

// Printable ASCII plus tab: header text that needs no encoding.
const PLAIN_HEADER_TEXT = /^[\t\x20-\x7e]*$/;

/** Bytes per encoded word: 39 bytes → 52 base64 chars, so `=?UTF-8?B?…?=` stays at 64 chars (limit 75). */
const ENCODED_WORD_MAX_BYTES = 39;

/**
 * RFC 2047-encode header text if it is not plain ASCII. Returns space-separated `=?UTF-8?B?…?=` words (the
 * header folder may break lines at those spaces); splits only on code point boundaries.
 */
export function encodeHeaderText(value: string): string {
  if (PLAIN_HEADER_TEXT.test(value)) return value;
  const words: string[] = [];
  let chunk: number[] = [];
  for (const char of value) {
    const bytes = utf8Encoder.encode(char);
    if (chunk.length + bytes.length > ENCODED_WORD_MAX_BYTES) {
      words.push(encodedWord(chunk));
      chunk = [];
    }
    chunk.push(...bytes);
  }
  if (chunk.length > 0) words.push(encodedWord(chunk));
  return words.join(' ');
}

function encodedWord(bytes: number[]): string {
  return `=?UTF-8?B?${Buffer.from(bytes).toString('base64')}?=`;
}

export function needsHeaderEncoding(value: string): boolean {
  return !PLAIN_HEADER_TEXT.test(value);
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/**
 * Decode RFC 2047 encoded-words in a header value. Whitespace between adjacent encoded-words is dropped
 * (§6.2), and adjacent words in the same charset are decoded together so a multi-byte character split
 * across two words survives. Unfolds CRLF + WSP.
 */
export function decodeHeaderText(value: string, warnings?: string[]): string {
  const unfolded = value.replace(/\r?\n(?=[ \t])/g, '').replace(/\r?\n/g, ' ');
  if (!unfolded.includes('=?')) return unfolded;

  let result = '';
  let cursor = 0;
  let pending: { charset: string; bytes: number[] } | null = null;
  const flush = (): void => {
    if (pending) result += decodeCharset(new Uint8Array(pending.bytes), pending.charset, warnings);
    pending = null;
  };

  for (const match of unfolded.matchAll(ENCODED_WORD)) {
    const between = unfolded.slice(cursor, match.index);
    const adjacent = pending !== null && /^[ \t]*$/.test(between);
    if (!adjacent) {
      flush();
      result += between;
    }
    // RFC 2231 allows a language suffix: charset*lang.
    const charset = match[1]!.split('*')[0]!.toLowerCase();
    const bytes = decodeEncodedWordPayload(match[2]!, match[3]!);
    const current = pending as { charset: string; bytes: number[] } | null;
    if (current && current.charset === charset) {
      current.bytes.push(...bytes);
    } else {
      flush();
      pending = { charset, bytes: [...bytes] };
    }
    cursor = match.index + match[0].length;
  }
  flush();
  return result + unfolded.slice(cursor);
}

function decodeEncodedWordPayload(encoding: string, text: string): Uint8Array {
  if (encoding.toUpperCase() === 'B') return new Uint8Array(Buffer.from(text, 'base64'));
  // Q encoding: '_' is a space, otherwise quoted-printable.
  return decodeQuotedPrintable(text.replace(/_/g, ' '));
}
