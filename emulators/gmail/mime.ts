// RFC 2822/2045/2047 in both directions: parse a raw message into a part tree (for Gmail's `full`
// and `metadata` formats, snippets and search fields) and build raw messages for the emulator's
// own mail (seed data, deliveries, UI sends). The store keeps raw bytes only; this module turns
// them into Gmail's shapes on demand.

export interface Header {
  name: string;
  value: string;
}

export interface MimePart {
  headers: Header[];
  /** Lower-case `type/subtype`. */
  mimeType: string;
  params: Record<string, string>;
  filename: string;
  isAttachment: boolean;
  /** Decoded (transfer encoding removed) body of a leaf part. */
  body: Buffer;
  parts: MimePart[];
}

// ---------------------------------------------------------------- RFC 2047 encoded words

const encodedWord = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;

function decodeCharset(bytes: Buffer, charset: string): string {
  const label = charset.toLowerCase().split('*')[0] ?? 'utf-8';
  if (label === 'utf-8' || label === 'utf8' || label === 'us-ascii') return bytes.toString('utf8');
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

function decodeQEncoding(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '_') bytes.push(0x20);
    else if (c === '=' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

/** Decodes RFC 2047 encoded words; whitespace between adjacent encoded words is dropped. */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  return value
    .replace(/(=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[bBqQ]\?)/g, '$1')
    .replace(encodedWord, (_m, charset: string, enc: string, text: string) => {
      const bytes = enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQEncoding(text);
      return decodeCharset(bytes, charset);
    });
}

const isAscii = (s: string): boolean => /^[\x20-\x7e\t]*$/.test(s);

/** Encodes a header value as UTF-8 B encoded words when it is not plain ASCII. */
export function encodeHeaderValue(value: string): string {
  if (isAscii(value)) return value;
  // Split on code points so that no UTF-8 sequence is cut; 45 bytes per word keeps lines < 76.
  const words: string[] = [];
  let chunk = '';
  for (const ch of value) {
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join('\r\n ');
}

export interface Address {
  name?: string;
  email: string;
}

export function formatAddress(address: Address | string): string {
  if (typeof address === 'string') return address;
  if (!address.name) return address.email;
  const name = isAscii(address.name)
    ? /[()<>[\]:;@\\,."]/.test(address.name)
      ? `"${address.name.replace(/(["\\])/g, '\\$1')}"`
      : address.name
    : encodeHeaderValue(address.name);
  return `${name} <${address.email}>`;
}

/** Email addresses found in an address-list header value (lower-cased). */
export function extractEmails(value: string): string[] {
  const found = value.match(/[^\s<>,;:"()]+@[^\s<>,;:"()]+/g) ?? [];
  return found.map((e) => e.toLowerCase());
}

// ---------------------------------------------------------------- transfer encodings

export function decodeQuotedPrintable(input: Buffer): Buffer {
  const text = input.toString('latin1').replace(/=\r?\n/g, '');
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3d && i + 2 < text.length + 1) {
      const hex = text.slice(i + 1, i + 3);
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        out[n++] = parseInt(hex, 16);
        i += 2;
        continue;
      }
    }
    out[n++] = c;
  }
  return out.subarray(0, n);
}

export function encodeQuotedPrintable(input: Buffer): string {
  const lines: string[] = [];
  let line = '';
  const push = (token: string) => {
    if (line.length + token.length > 75) {
      lines.push(line + '=');
      line = '';
    }
    line += token;
  };
  for (let i = 0; i < input.length; i++) {
    const b = input[i] as number;
    if (b === 0x0d && input[i + 1] === 0x0a) {
      lines.push(line);
      line = '';
      i++;
    } else if (b === 0x0a) {
      lines.push(line);
      line = '';
    } else if ((b >= 33 && b <= 126 && b !== 61) || ((b === 32 || b === 9) && input[i + 1] !== 0x0a && input[i + 1] !== 0x0d && i + 1 < input.length)) {
      push(String.fromCharCode(b));
    } else {
      push('=' + b.toString(16).toUpperCase().padStart(2, '0'));
    }
  }
  lines.push(line);
  return lines.join('\r\n');
}

function decodeTransfer(body: Buffer, encoding: string): Buffer {
  switch (encoding) {
    case 'base64':
      return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=_-]/g, ''), 'base64');
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    default:
      return body;
  }
}

/** Base64url with padding, as Gmail returns `raw` and `body.data`. */
export function toBase64Url(bytes: Buffer): string {
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export function fromBase64Url(text: string): Buffer {
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

// ---------------------------------------------------------------- parsing

/** Index of the blank line ending the header section, and where the body starts. */
function findHeaderEnd(raw: Buffer, from = 0, to = raw.length): { headerEnd: number; bodyStart: number } {
  for (let i = from; i < to; i++) {
    if (raw[i] !== 0x0a) continue;
    if (i === from) return { headerEnd: from, bodyStart: i + 1 };
    if (raw[i + 1] === 0x0a) return { headerEnd: i, bodyStart: i + 2 };
    if (raw[i + 1] === 0x0d && raw[i + 2] === 0x0a) return { headerEnd: i, bodyStart: i + 3 };
  }
  return { headerEnd: to, bodyStart: to };
}

export function parseHeaderBlock(text: string, decode = true): Header[] {
  const headers: Header[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '') continue;
    const last = headers[headers.length - 1];
    if ((line[0] === ' ' || line[0] === '\t') && last) {
      last.value += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
  }
  if (decode) for (const h of headers) h.value = decodeEncodedWords(h.value);
  return headers;
}

/** Only the top-level headers of a raw message (cheap: the body is not touched). */
export function parseTopHeaders(raw: Buffer): Header[] {
  const { headerEnd } = findHeaderEnd(raw);
  return parseHeaderBlock(raw.toString('utf8', 0, headerEnd));
}

export function headerValue(headers: readonly Header[], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const h of headers) if (h.name.toLowerCase() === lower) return h.value;
  return undefined;
}

/** RFC 2231 %XX escapes → bytes (the charset is applied afterwards). */
function percentDecode(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

/** `type/subtype; a=b; c="d"` → {value, params}; RFC 2231 `name*=utf-8''...` is decoded. */
export function parseStructuredHeader(value: string): { value: string; params: Record<string, string> } {
  // Split on semicolons outside quoted strings.
  const pieces: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (c === '"' && value[i - 1] !== '\\') quoted = !quoted;
    if (c === ';' && !quoted) {
      pieces.push(current);
      current = '';
    } else current += c;
  }
  pieces.push(current);
  const [first = '', ...rest] = pieces;
  const params: Record<string, string> = {};
  // RFC 2231 continuations: name*0*=utf-8''a%C3, name*1*=%A9 ... joined before charset decoding.
  const continued = new Map<string, Array<{ index: number; text: string; encoded: boolean }>>();
  for (const piece of rest) {
    const eq = piece.indexOf('=');
    if (eq < 0) continue;
    const key = piece.slice(0, eq).trim().toLowerCase();
    let val = piece.slice(eq + 1).trim();
    if (val.startsWith('"') && val.endsWith('"')) val = val.slice(1, -1).replace(/\\(.)/g, '$1');
    const continuation = /^(.+?)\*(\d+)(\*?)$/.exec(key);
    if (continuation) {
      const list = continued.get(continuation[1] as string) ?? [];
      list.push({ index: Number(continuation[2]), text: val, encoded: continuation[3] === '*' });
      continued.set(continuation[1] as string, list);
    } else if (key.endsWith('*')) {
      const m = /^([^']*)'[^']*'(.*)$/.exec(val);
      params[key.slice(0, -1)] = m ? decodeCharset(percentDecode(m[2] ?? ''), m[1] || 'utf-8') : val;
    } else {
      params[key] = decodeEncodedWords(val);
    }
  }
  for (const [name, segments] of continued) {
    segments.sort((a, b) => a.index - b.index);
    let charset = 'utf-8';
    const bytes = segments.map((seg, i) => {
      let text = seg.text;
      if (i === 0 && seg.encoded) {
        const m = /^([^']*)'[^']*'(.*)$/.exec(text);
        if (m) {
          charset = m[1] || 'utf-8';
          text = m[2] ?? '';
        }
      }
      return seg.encoded ? percentDecode(text) : Buffer.from(text, 'utf8');
    });
    params[name] = decodeCharset(Buffer.concat(bytes), charset);
  }
  return { value: (first ?? '').trim().toLowerCase(), params };
}

function parsePart(raw: Buffer, start: number, end: number, depth: number): MimePart {
  const { headerEnd, bodyStart } = findHeaderEnd(raw, start, end);
  const headers = parseHeaderBlock(raw.toString('utf8', start, headerEnd));
  const ct = parseStructuredHeader(headerValue(headers, 'content-type') ?? 'text/plain; charset=us-ascii');
  const mimeType = ct.value.includes('/') ? ct.value : 'text/plain';
  const disposition = parseStructuredHeader(headerValue(headers, 'content-disposition') ?? '');
  const filename = disposition.params.filename ?? ct.params.name ?? '';
  const part: MimePart = {
    headers,
    mimeType,
    params: ct.params,
    filename,
    isAttachment: filename !== '' || disposition.value === 'attachment',
    body: Buffer.alloc(0),
    parts: [],
  };
  const boundary = ct.params.boundary;
  if (mimeType.startsWith('multipart/') && boundary && depth < 20) {
    part.parts = splitMultipart(raw, bodyStart, end, boundary).map(([s, e]) => parsePart(raw, s, e, depth + 1));
    return part;
  }
  const encoding = (headerValue(headers, 'content-transfer-encoding') ?? '7bit').trim().toLowerCase();
  part.body = decodeTransfer(raw.subarray(bodyStart, end), encoding);
  return part;
}

/** [start, end) byte ranges of the body parts between `--boundary` delimiter lines. */
function splitMultipart(raw: Buffer, start: number, end: number, boundary: string): Array<[number, number]> {
  const delimiter = Buffer.from('--' + boundary);
  const ranges: Array<[number, number]> = [];
  let partStart = -1;
  let pos = start;
  while (pos < end) {
    const at = raw.indexOf(delimiter, pos);
    if (at < 0 || at >= end) break;
    const atLineStart = at === start || raw[at - 1] === 0x0a;
    if (!atLineStart) {
      pos = at + delimiter.length;
      continue;
    }
    if (partStart >= 0) {
      // The CRLF before the delimiter belongs to the delimiter, not to the part.
      let partEnd = at;
      if (raw[partEnd - 1] === 0x0a) partEnd--;
      if (raw[partEnd - 1] === 0x0d) partEnd--;
      ranges.push([partStart, Math.max(partStart, partEnd)]);
    }
    const afterDelimiter = at + delimiter.length;
    if (raw[afterDelimiter] === 0x2d && raw[afterDelimiter + 1] === 0x2d) return ranges;
    const eol = raw.indexOf(0x0a, afterDelimiter);
    if (eol < 0 || eol >= end) break;
    partStart = eol + 1;
    pos = partStart;
  }
  if (partStart >= 0 && partStart < end) ranges.push([partStart, end]); // unterminated final part
  return ranges;
}

export function parseMime(raw: Buffer): MimePart {
  return parsePart(raw, 0, raw.length, 0);
}

/** The part at a Gmail partId ("", "0", "1.0", ...). */
export function findPart(root: MimePart, partId: string): MimePart | undefined {
  if (partId === '') return root;
  let part: MimePart | undefined = root;
  for (const index of partId.split('.')) part = part?.parts[Number(index)];
  return part;
}

function leafText(part: MimePart): string {
  return decodeCharset(part.body, part.params.charset ?? 'utf-8');
}

/** The first text/plain (else text/html, tags stripped) body in the tree, as text. */
export function extractText(root: MimePart): string {
  let html: string | undefined;
  const visit = (part: MimePart): string | undefined => {
    if (part.parts.length > 0) {
      for (const child of part.parts) {
        const found = visit(child);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (part.isAttachment) return undefined;
    if (part.mimeType === 'text/plain') return leafText(part);
    if (part.mimeType === 'text/html' && html === undefined) html = leafText(part);
    return undefined;
  };
  const plain = visit(root);
  if (plain !== undefined) return plain;
  return html === undefined ? '' : html.replace(/<(style|script)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]+>/g, ' ').replace(/&nbsp;/g, ' ');
}

/** Gmail-like snippet: whitespace collapsed, about 200 characters, HTML-escaped like Gmail's. */
export function makeSnippet(text: string): string {
  const collapsed = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return collapsed.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The file names of a message's attachments ('' for an attachment without one). */
export function attachmentFilenames(root: MimePart): string[] {
  if (root.parts.length === 0) return root.isAttachment ? [root.filename] : [];
  return root.parts.flatMap(attachmentFilenames);
}

// ---------------------------------------------------------------- building

export interface Attachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface MessageSpec {
  from: Address | string;
  to: Array<Address | string>;
  cc?: Array<Address | string>;
  subject: string;
  date: number;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  /** Extra headers such as List-Unsubscribe, Precedence, Auto-Submitted. */
  headers?: Record<string, string>;
  text?: string;
  html?: string;
  attachments?: Attachment[];
}

export function textPart(contentType: string, text: string): string {
  const bytes = Buffer.from(text.replace(/\r?\n/g, '\r\n'));
  const plain = isAscii(text.replace(/\r?\n/g, '')) && !text.split('\n').some((l) => l.length > 900);
  return plain
    ? `Content-Type: ${contentType}; charset="UTF-8"\r\nContent-Transfer-Encoding: 7bit\r\n\r\n${bytes.toString('latin1')}`
    : `Content-Type: ${contentType}; charset="UTF-8"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${encodeQuotedPrintable(bytes)}`;
}

function base64Lines(bytes: Buffer): string {
  return (bytes.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n');
}

function attachmentPart(a: Attachment): string {
  const name = isAscii(a.filename) ? `"${a.filename}"` : `"${encodeHeaderValue(a.filename)}"`;
  return (
    `Content-Type: ${a.contentType}; name=${name}\r\n` +
    `Content-Disposition: attachment; filename=${name}\r\n` +
    `Content-Transfer-Encoding: base64\r\n\r\n${base64Lines(a.content)}`
  );
}

function multipart(subtype: string, boundary: string, parts: string[]): string {
  return `Content-Type: multipart/${subtype}; boundary="${boundary}"\r\n\r\n` + parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('') + `--${boundary}--\r\n`;
}

export function formatDate(ms: number): string {
  // RFC 2822 date in UTC, e.g. "Tue, 04 Nov 2025 09:15:00 +0000".
  return new Date(ms).toUTCString().replace('GMT', '+0000');
}

/** Builds the raw RFC 2822 bytes of a message. Boundaries derive from the Message-ID, so output is deterministic. */
export function buildMessage(spec: MessageSpec): Buffer {
  const lines: string[] = [
    'MIME-Version: 1.0',
    `Date: ${formatDate(spec.date)}`,
    `Message-ID: ${spec.messageId}`,
    `Subject: ${encodeHeaderValue(spec.subject)}`,
    `From: ${formatAddress(spec.from)}`,
    `To: ${spec.to.map(formatAddress).join(', ')}`,
  ];
  if (spec.cc && spec.cc.length > 0) lines.push(`Cc: ${spec.cc.map(formatAddress).join(', ')}`);
  if (spec.inReplyTo) lines.push(`In-Reply-To: ${spec.inReplyTo}`);
  if (spec.references && spec.references.length > 0) lines.push(`References: ${spec.references.join(' ')}`);
  for (const [name, value] of Object.entries(spec.headers ?? {})) lines.push(`${name}: ${encodeHeaderValue(value)}`);

  const token = spec.messageId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24);
  const text = spec.text ?? (spec.html === undefined ? '' : undefined);
  let body: string;
  const alternatives: string[] = [];
  if (text !== undefined) alternatives.push(textPart('text/plain', text));
  if (spec.html !== undefined) alternatives.push(textPart('text/html', spec.html));
  const content = alternatives.length > 1 ? multipart('alternative', `alt_${token}`, alternatives) : (alternatives[0] ?? '');
  if (spec.attachments && spec.attachments.length > 0) {
    body = multipart('mixed', `mix_${token}`, [content, ...spec.attachments.map(attachmentPart)]);
  } else {
    body = content;
  }
  return Buffer.from(lines.join('\r\n') + '\r\n' + body, 'latin1');
}

/** Adds Date, Message-ID and From when a client-built message lacks them, as Gmail does on send. */
export function completeOutgoing(raw: Buffer, defaults: { from: string; date: number; messageId: string }): Buffer {
  const headers = parseTopHeaders(raw);
  const missing: string[] = [];
  if (!headerValue(headers, 'from')) missing.push(`From: ${defaults.from}`);
  if (!headerValue(headers, 'date')) missing.push(`Date: ${formatDate(defaults.date)}`);
  if (!headerValue(headers, 'message-id')) missing.push(`Message-ID: ${defaults.messageId}`);
  return missing.length === 0 ? raw : Buffer.concat([Buffer.from(missing.join('\r\n') + '\r\n', 'latin1'), raw]);
}

/** The same message with a new plain (and optionally HTML) body; other top-level headers are kept. */
export function replaceBody(raw: Buffer, text: string, html?: string): Buffer {
  const { headerEnd } = findHeaderEnd(raw);
  const kept = raw
    .toString('latin1', 0, headerEnd)
    .split(/\r?\n(?![ \t])/)
    .filter((line) => line !== '' && !/^(content-[a-z-]+|mime-version):/i.test(line));
  const parts = [textPart('text/plain', text), ...(html === undefined ? [] : [textPart('text/html', html)])];
  const body = parts.length > 1 ? multipart('alternative', `alt_edit_${Date.now().toString(36)}`, parts) : (parts[0] as string);
  return Buffer.from([...kept, 'MIME-Version: 1.0'].join('\r\n') + '\r\n' + body, 'latin1');
}
