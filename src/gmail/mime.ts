// Building outgoing replies as RFC 2822 text (Gmail's `raw`), and reading incoming messages from the
// parsed `payload` tree that users.messages.get / threads.get return with format=full.

import type { gmail_v1 } from 'googleapis';
import { formatAddress, formatAddressList, MAX_SENDER_HEADER, parseAddressList, parseSender, sameAddress, stripHeaderBreaks } from './addresses.js';
import { htmlToText } from './html-text.js';
import {
  decodeBase64Url,
  decodeCharset,
  decodeHeaderText,
  decodeQuotedPrintable,
  encodeBase64Url,
  encodeHeaderText,
  encodeQuotedPrintable,
} from './mime-encoding.js';
import type { AttachmentInfo, BodySource, EmailAddress, ThreadMessage } from '../mail/message.js';

// ---------------------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------------------

export type TransferEncoding = 'quoted-printable' | 'base64';

export interface PlainTextMessageInput {
  from: EmailAddress;
  to: EmailAddress[];
  cc?: EmailAddress[];
  subject: string;
  body: string;
  /** Message-ID (with angle brackets) of the message this replies to. */
  inReplyTo?: string;
  /** Full References chain, oldest first. */
  references?: string[];
  /** Omitted by default: Gmail stamps Date and Message-ID itself when the draft is sent. */
  date?: Date;
  messageId?: string;
  transferEncoding?: TransferEncoding;
  /** More headers (an X- marker, say), written after the threading headers. */
  extraHeaders?: Record<string, string>;
}

/** RFC 2822 text with CRLF line endings: plain-text UTF-8 body, non-ASCII header text RFC 2047-encoded. */
export function buildPlainTextMessage(input: PlainTextMessageInput): string {
  const encoding = input.transferEncoding ?? 'quoted-printable';
  const headers: Array<[string, string]> = [['From', formatAddress(input.from)]];
  if (input.to.length > 0) headers.push(['To', formatAddressList(input.to)]);
  if (input.cc && input.cc.length > 0) headers.push(['Cc', formatAddressList(input.cc)]);
  // Encoded, not stripped: a line break or NUL in a subject travels inside encoded words, where it cannot
  // start a header, and a reply keeps its parent's very subject, which Gmail's threading compares.
  headers.push(['Subject', encodeHeaderText(input.subject)]);
  if (input.date) headers.push(['Date', formatRfc2822Date(input.date)]);
  if (input.messageId) headers.push(['Message-ID', stripHeaderBreaks(input.messageId)]);
  if (input.inReplyTo) headers.push(['In-Reply-To', stripHeaderBreaks(input.inReplyTo)]);
  if (input.references && input.references.length > 0) {
    headers.push(['References', input.references.map(stripHeaderBreaks).join(' ')]);
  }
  for (const [name, value] of Object.entries(input.extraHeaders ?? {})) headers.push([name, stripHeaderBreaks(value)]);
  headers.push(['MIME-Version', '1.0']);
  headers.push(['Content-Type', 'text/plain; charset=UTF-8']);
  headers.push(['Content-Transfer-Encoding', encoding]);

  const head = headers.map(([name, value]) => foldHeader(name, value)).join('\r\n');
  // No CRLF appended after the body: the text the user sees must round-trip exactly.
  return `${head}\r\n\r\n${encodeBody(input.body, encoding)}`;
}

function encodeBody(body: string, encoding: TransferEncoding): string {
  const normalized = body.replace(/\r\n?/g, '\n');
  if (encoding === 'quoted-printable') return encodeQuotedPrintable(normalized);
  const base64 = Buffer.from(normalized.replace(/\n/g, '\r\n'), 'utf8').toString('base64');
  return base64.replace(/.{1,76}/g, '$&\r\n').replace(/\r\n$/, '');
}

/** Fold at existing spaces so header lines stay under 78 characters where possible (RFC 5322 §2.2.3). */
export function foldHeader(name: string, value: string): string {
  const words = value.split(' ');
  const lines: string[] = [];
  let current = `${name}:`;
  for (const word of words) {
    if (current.length + 1 + word.length > 78 && current.trim() !== `${name}:`) {
      lines.push(current);
      current = ` ${word}`;
    } else {
      current += ` ${word}`;
    }
  }
  lines.push(current);
  return lines.join('\r\n');
}

export function formatRfc2822Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

/** Gmail's `raw`: base64url of the RFC 2822 text. */
export function toRaw(rfc2822: string): string {
  return encodeBase64Url(rfc2822);
}

/**
 * The message (raw RFC 2822 bytes) with one top-level header set to `value`, any earlier occurrence
 * of it (folded lines included) taken out; everything else byte for byte as it was: the other
 * headers, every part, attachment and encoding.
 */
export function withTopHeader(raw: Uint8Array, name: string, value: string): Uint8Array {
  const text = Buffer.from(raw).toString('latin1'); // one char per byte: 8-bit content survives
  const end = text.search(/\r?\n\r?\n/);
  const head = end === -1 ? text : text.slice(0, end);
  const firstBreak = text.indexOf('\n');
  const eol = firstBreak > 0 && text[firstBreak - 1] !== '\r' ? '\n' : '\r\n'; // the message's own line end
  const wanted = name.toLowerCase();
  const kept: string[] = [];
  let dropping = false;
  for (const line of head.split(/\r?\n/)) {
    if (line === '') continue;
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (!dropping) kept.push(line); // a folded continuation of the header above
      continue;
    }
    const colon = line.indexOf(':');
    dropping = colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted;
    if (!dropping) kept.push(line);
  }
  const header = foldHeader(name, stripHeaderBreaks(value));
  return Buffer.from([header, ...kept].join(eol) + (end === -1 ? eol : text.slice(end)), 'latin1');
}

/** `Re: ` prefixed exactly once; existing `Re:`/`RE:`/`re :` prefixes are kept as they are. */
export function replySubject(subject: string): string {
  const trimmed = subject.trim();
  if (/^re\s*:/i.test(trimmed)) return trimmed;
  return trimmed === '' ? 'Re:' : `Re: ${trimmed}`;
}

/** The parent fields a reply's threading headers are derived from. */
export type ReplyParent = Pick<ThreadMessage, 'messageId' | 'references' | 'inReplyTo' | 'subject'>;

/** Long chains keep the root and the most recent ids, as mail clients do, to bound header size. */
export const MAX_REFERENCES = 20;

/**
 * References for a reply (RFC 5322 §3.6.4): the parent's References plus its Message-ID; when the parent
 * has no References but a single In-Reply-To, that id stands in for them.
 */
export function replyReferences(parent: ReplyParent): string[] {
  const chain = parent.references.length > 0 ? [...parent.references] : extractMessageIds(parent.inReplyTo).slice(0, 1);
  if (parent.messageId) chain.push(parent.messageId);
  const unique = chain.filter((id, index) => chain.indexOf(id) === index);
  if (unique.length <= MAX_REFERENCES) return unique;
  return [unique[0]!, ...unique.slice(unique.length - (MAX_REFERENCES - 1))];
}

export interface ReplyInput {
  /** The message being answered (normally the thread's latest inbound message). */
  parent: ReplyParent;
  from: EmailAddress;
  to: EmailAddress[];
  cc?: EmailAddress[];
  body: string;
  transferEncoding?: TransferEncoding;
  date?: Date;
  extraHeaders?: Record<string, string>;
}

export interface BuiltReply {
  raw: string;
  subject: string;
  inReplyTo: string | undefined;
  references: string[];
}

/** A plain-text reply with threading headers, ready for drafts.create `{message: {raw, threadId}}`. */
export function buildReply(input: ReplyInput): BuiltReply {
  const subject = replySubject(input.parent.subject);
  const inReplyTo = input.parent.messageId || undefined;
  const references = replyReferences(input.parent);
  const rfc2822 = buildPlainTextMessage({
    from: input.from,
    to: input.to,
    cc: input.cc,
    subject,
    body: input.body,
    inReplyTo,
    references,
    date: input.date,
    transferEncoding: input.transferEncoding,
    extraHeaders: input.extraHeaders,
  });
  return { raw: toRaw(rfc2822), subject, inReplyTo, references };
}

/**
 * Who a plain "Reply" goes to: Reply-To if set, else From. When answering the user's own message, the reply
 * goes to that message's original recipients instead.
 */
export function replyRecipients(parent: Pick<ThreadMessage, 'from' | 'to' | 'replyTo'>, userEmail: string): EmailAddress[] {
  const chosen = parent.from && sameAddress(parent.from.address, userEmail) ? parent.to : parent.replyTo.length > 0 ? parent.replyTo : parent.from ? [parent.from] : [];
  // Each address once (a list can name one twice).
  return chosen.filter((a, i) => chosen.findIndex((b) => sameAddress(a.address, b.address)) === i);
}

/**
 * The Message-ID in its `<...>` form. Some senders leave out the angle brackets (`Message-ID: abc@host`);
 * a reply's In-Reply-To/References must carry them (RFC 5322 §3.6.4), or Gmail files the reply draft in a
 * thread of its own, so a bare id is bracketed. '' when there is none.
 */
export function readMessageId(value: string | undefined): string {
  const bracketed = extractMessageIds(value)[0];
  if (bracketed) return bracketed;
  const bare = (value ?? '').trim();
  return /^[^\s<>]+$/.test(bare) ? `<${bare}>` : bare;
}

export function extractMessageIds(value: string | undefined): string[] {
  if (!value) return [];
  return value.match(/<[^<>\s]+>/g) ?? [];
}

// ---------------------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------------------

type Part = gmail_v1.Schema$MessagePart;

interface PartHeaders {
  get(name: string): string | undefined;
  /** Every value of a header that may appear more than once (two From headers, say). */
  all(name: string): string[];
}

function partHeaders(part: Part): PartHeaders {
  const list = Array.isArray(part.headers) ? part.headers : [];
  return {
    get(name: string) {
      const wanted = name.toLowerCase();
      const found = list.find((h) => typeof h?.name === 'string' && h.name.toLowerCase() === wanted);
      return typeof found?.value === 'string' ? found.value : undefined;
    },
    all(name: string) {
      const wanted = name.toLowerCase();
      return list.flatMap((h) => (typeof h?.name === 'string' && h.name.toLowerCase() === wanted && typeof h.value === 'string' ? [h.value] : []));
    },
  };
}

/** Top-level headers, lower-cased names, RFC 2047-decoded values; the first occurrence of a name wins. */
export function decodeHeaders(headers: gmail_v1.Schema$MessagePartHeader[] | null | undefined, warnings?: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const header of headers ?? []) {
    if (typeof header?.name !== 'string' || typeof header.value !== 'string') continue;
    const key = header.name.toLowerCase();
    if (!(key in out)) out[key] = decodeHeaderText(header.value, warnings);
  }
  return out;
}

/** Case-insensitive header lookup on a `headers` record. */
export function getHeader(headers: Record<string, string>, name: string): string | undefined {
  return headers[name.toLowerCase()];
}

export interface ContentType {
  type: string;
  params: Record<string, string>;
}

export function parseContentType(value: string | undefined): ContentType {
  if (!value) return { type: '', params: {} };
  const [type = '', ...rest] = splitParams(value);
  const params: Record<string, string> = {};
  for (const param of rest) {
    const eq = param.indexOf('=');
    if (eq <= 0) continue;
    const key = param.slice(0, eq).trim().toLowerCase();
    let val = param.slice(eq + 1).trim();
    if (val.startsWith('"') && val.endsWith('"') && val.length >= 2) val = val.slice(1, -1).replace(/\\(.)/g, '$1');
    params[key] = val;
  }
  return { type: type.trim().toLowerCase(), params };
}

function splitParams(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let inQuotes = false;
  for (const char of value) {
    if (char === '"') inQuotes = !inQuotes;
    if (char === ';' && !inQuotes) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

export interface ExtractedBody {
  body: string;
  bodySource: BodySource;
  attachments: AttachmentInfo[];
  parseWarnings: string[];
  /** Set when the body was read as text despite its MIME (a multipart whose boundary never appears): what was wrong. */
  bodyDefect?: string;
}

const MAX_DEPTH = 32;
const MAX_PARTS = 2000;

interface WalkState {
  warnings: string[];
  attachments: AttachmentInfo[];
  partsSeen: number;
  /** The raw message's body (after its header block), when the caller read the raw message. */
  rawBody?: Uint8Array;
  bodyDefect?: string;
}

interface BodyCandidate {
  source: 'text/plain' | 'text/html';
  text: string;
}

/**
 * The readable body and the attachment list of a format=full payload. Never throws: whatever is odd about
 * the tree is reported in parseWarnings and skipped. `raw`: the same message in Gmail's raw format, read
 * when the payload does not carry its body (bodyOnlyInRaw).
 */
export function extractBody(payload: Part | null | undefined, raw?: Uint8Array): ExtractedBody {
  const state: WalkState = { warnings: [], attachments: [], partsSeen: 0, ...(raw ? { rawBody: bodyOfRaw(raw) } : {}) };
  if (!payload || typeof payload !== 'object') {
    return { body: '', bodySource: 'none', attachments: [], parseWarnings: ['message has no payload'] };
  }
  let candidate: BodyCandidate | null = null;
  try {
    candidate = walk(payload, 0, state);
  } catch (err) {
    // Defensive: a bug in the walker must not fail an activity that could otherwise use headers.
    state.warnings.push(`MIME walk aborted: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!candidate) return { body: '', bodySource: 'none', attachments: state.attachments, parseWarnings: state.warnings };
  const text = candidate.source === 'text/html' ? htmlToText(candidate.text) : candidate.text.replace(/\r\n?/g, '\n');
  return {
    body: text,
    bodySource: candidate.source,
    attachments: state.attachments,
    parseWarnings: state.warnings,
    ...(state.bodyDefect ? { bodyDefect: state.bodyDefect } : {}),
  };
}

/**
 * A format=full payload whose top-level multipart came with neither parts nor bytes (its boundary never
 * appears): only the raw message holds its body.
 */
export function bodyOnlyInRaw(payload: Part | null | undefined): boolean {
  if (!payload || typeof payload !== 'object') return false;
  const mimeType = (typeof payload.mimeType === 'string' ? payload.mimeType : '').toLowerCase();
  const parts = Array.isArray(payload.parts) ? payload.parts : [];
  return mimeType.startsWith('multipart/') && parts.length === 0 && typeof payload.body?.data !== 'string';
}

/** What follows the header block of a raw message (nothing when it has no blank line). */
function bodyOfRaw(raw: Uint8Array): Uint8Array {
  const text = Buffer.from(raw).toString('latin1');
  const end = /\r?\n\r?\n/.exec(text);
  return end ? raw.subarray(end.index + end[0].length) : new Uint8Array(0);
}

function walk(part: Part, depth: number, state: WalkState): BodyCandidate | null {
  state.partsSeen++;
  if (depth > MAX_DEPTH || state.partsSeen > MAX_PARTS) {
    state.warnings.push(depth > MAX_DEPTH ? `MIME tree deeper than ${MAX_DEPTH}, rest ignored` : `more than ${MAX_PARTS} parts, rest ignored`);
    return null;
  }
  const headers = partHeaders(part);
  const contentType = parseContentType(headers.get('content-type'));
  const mimeType = (typeof part.mimeType === 'string' && part.mimeType ? part.mimeType : contentType.type).toLowerCase();
  const listed: unknown[] = Array.isArray(part.parts) ? part.parts : [];
  const children = listed.filter((p): p is Part => typeof p === 'object' && p !== null);
  if (children.length < listed.length) state.warnings.push(`${partLabel(part)} has ${listed.length - children.length} empty child entries`);

  if (isAttachment(part, headers)) {
    state.attachments.push(attachmentInfo(part, mimeType));
    return null;
  }

  if (mimeType.startsWith('multipart/') || (children.length > 0 && !mimeType.startsWith('text/'))) {
    if (children.length === 0) return brokenMultipart(part, headers, mimeType, contentType, depth, state);
    const found = children.map((child) => walk(child, depth + 1, state)).filter((c): c is BodyCandidate => c !== null);
    if (mimeType === 'multipart/alternative') {
      // Prefer plain text among the alternatives, whatever their order.
      return found.find((c) => c.source === 'text/plain') ?? found.find((c) => c.source === 'text/html') ?? null;
    }
    // mixed/related/signed/unknown: inline text parts are shown in order, so join them.
    const plain = found.filter((c) => c.source === 'text/plain');
    if (plain.length > 0) return { source: 'text/plain', text: plain.map((c) => c.text).join('\n\n') };
    const html = found.filter((c) => c.source === 'text/html');
    if (html.length > 0) return { source: 'text/html', text: html.map((c) => c.text).join('<br>') };
    return null;
  }

  if (mimeType === 'message/rfc822') {
    // A forwarded message without a filename: list it; its own body is not ours to answer.
    state.attachments.push(attachmentInfo(part, mimeType));
    return null;
  }

  const isPlain = mimeType === 'text/plain' || mimeType === '';
  if (!isPlain && mimeType !== 'text/html') {
    if (mimeType.startsWith('text/')) return null; // text/calendar, text/csv inline: not a body
    state.warnings.push(`inline ${mimeType} ${partLabel(part)} ignored`);
    return null;
  }
  if (mimeType === '') state.warnings.push(`${partLabel(part)} has no mime type, assumed text/plain`);

  const text = decodePartText(part, headers, contentType, state.warnings);
  if (text === null) return null;
  return { source: isPlain ? 'text/plain' : 'text/html', text };
}

/**
 * A multipart without parts. When its boundary never appears in its body (or it names none), mail clients
 * show that body as text, and so do we, with the defect noted. A multipart that is only empty (its
 * delimiter is there, with nothing between) or whose body is not text has no body.
 */
function brokenMultipart(part: Part, headers: PartHeaders, mimeType: string, contentType: ContentType, depth: number, state: WalkState): BodyCandidate | null {
  const label = `${mimeType || 'multipart'} ${partLabel(part)}`;
  const boundary = contentType.params.boundary;
  const data = part.body?.data;
  const bytes = typeof data === 'string' ? decodeBase64Url(data) : depth === 0 ? state.rawBody : undefined;
  if (!bytes || bytes.length === 0 || (boundary && hasDelimiterLine(bytes, boundary))) {
    state.warnings.push(`${label} has no children`);
    return null;
  }
  const transferEncoding = (headers.get('content-transfer-encoding') ?? '').trim().toLowerCase();
  const decoded = undoLeftoverTransferEncoding(bytes, transferEncoding, contentType.params.charset, state.warnings);
  if (!looksLikeText(decoded)) {
    state.warnings.push(`${label} has no parts, and its body is not text`);
    return null;
  }
  const defect = `${label} has no parts (${boundary ? `its boundary ${JSON.stringify(boundary)} never appears` : 'it names no boundary'}): read as text`;
  state.warnings.push(defect);
  state.bodyDefect ??= defect;
  return { source: 'text/plain', text: decodeUnlabelledText(decoded, contentType.params.charset, state.warnings) };
}

/** Whether a `--boundary` delimiter starts a line of the body. */
function hasDelimiterLine(bytes: Uint8Array, boundary: string): boolean {
  const text = Buffer.from(bytes).toString('latin1');
  const delimiter = `--${boundary}`;
  for (let at = text.indexOf(delimiter); at >= 0; at = text.indexOf(delimiter, at + 1)) {
    if (at === 0 || text[at - 1] === '\n') return true;
  }
  return false;
}

/** No NUL, and few other control characters (tab, line ends, form feed and ESC, which ISO-2022 text uses, are text). */
function looksLikeText(bytes: Uint8Array): boolean {
  let controls = 0;
  for (const b of bytes) {
    if (b === 0) return false;
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b) || b === 0x7f) controls++;
  }
  return controls * 20 <= bytes.length;
}

/** Text in its declared charset; without one, UTF-8 when it is valid UTF-8, else windows-1252 (8-bit mail of the Latin-1 era). */
function decodeUnlabelledText(bytes: Uint8Array, charset: string | undefined, warnings: string[]): string {
  if (charset) return decodeCharset(bytes, charset, warnings);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return decodeCharset(bytes, 'windows-1252', warnings);
  }
}

function partLabel(part: Part): string {
  return part.partId ? `part ${part.partId}` : 'top-level part';
}

function isAttachment(part: Part, headers: PartHeaders): boolean {
  const disposition = (headers.get('content-disposition') ?? '').trim().toLowerCase();
  if (disposition.startsWith('attachment')) return true;
  return typeof part.filename === 'string' && part.filename !== '';
}

function attachmentInfo(part: Part, mimeType: string): AttachmentInfo {
  const info: AttachmentInfo = {
    filename: typeof part.filename === 'string' ? part.filename : '',
    mimeType: mimeType || 'application/octet-stream',
    size: typeof part.body?.size === 'number' ? part.body.size : 0,
  };
  if (typeof part.body?.attachmentId === 'string') info.attachmentId = part.body.attachmentId;
  if (typeof part.partId === 'string') info.partId = part.partId;
  return info;
}

function decodePartText(part: Part, headers: PartHeaders, contentType: ContentType, warnings: string[]): string | null {
  const data = part.body?.data;
  if (typeof data !== 'string') {
    if (part.body?.attachmentId) warnings.push(`text ${partLabel(part)} stored as attachment, not downloaded`);
    return null;
  }
  let bytes = decodeBase64Url(data);
  const transferEncoding = (headers.get('content-transfer-encoding') ?? '').trim().toLowerCase();
  bytes = undoLeftoverTransferEncoding(bytes, transferEncoding, contentType.params.charset, warnings);
  return decodeCharset(bytes, contentType.params.charset, warnings);
}

/**
 * Gmail's format=full already removes the Content-Transfer-Encoding: body.data is the decoded content. Some
 * producers (and nested message/rfc822 parts) still hand over encoded text, so decode again only when the
 * bytes are demonstrably still quoted-printable or base64 — never on a guess that could corrupt real text.
 */
function undoLeftoverTransferEncoding(bytes: Uint8Array, transferEncoding: string, charset: string | undefined, warnings: string[]): Uint8Array {
  if (transferEncoding !== 'quoted-printable' && transferEncoding !== 'base64') return bytes;
  if (bytes.some((b) => b > 0x7e || (b < 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09))) return bytes; // encoded text is 7-bit
  const text = Buffer.from(bytes).toString('latin1');
  const lines = text.split(/\r?\n/);
  if (lines.some((line) => line.length > 76)) return bytes; // encoders wrap at 76

  if (transferEncoding === 'quoted-printable') {
    if (!/=[0-9A-F]{2}|=\r?\n|=$/.test(text)) return bytes;
    warnings.push('body still quoted-printable encoded, decoded');
    return decodeQuotedPrintable(bytes);
  }
  const compact = text.replace(/\r?\n/g, '');
  if (compact.length < 4 || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return bytes;
  const decoded = new Uint8Array(Buffer.from(compact, 'base64'));
  if (!isPlausibleText(decoded, charset)) return bytes;
  warnings.push('body still base64 encoded, decoded');
  return decoded;
}

function isPlausibleText(bytes: Uint8Array, charset: string | undefined): boolean {
  if (bytes.some((b) => b < 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09)) return false;
  const label = (charset ?? 'utf-8').toLowerCase();
  if (label !== 'utf-8' && label !== 'utf8') return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * A users.messages.get / threads.get (format full, metadata or minimal) message as our ThreadMessage.
 * `raw`: the same message in Gmail's raw format, for a payload whose body only the raw holds (bodyOnlyInRaw).
 */
export function parseGmailMessage(message: gmail_v1.Schema$Message, raw?: Uint8Array): ThreadMessage {
  const warnings: string[] = [];
  const payload = message.payload ?? undefined;
  const rawHeaders: PartHeaders = payload ? partHeaders(payload) : { get: () => undefined, all: () => [] };
  if (payload && payload.headers != null && !Array.isArray(payload.headers)) warnings.push('payload headers are not a list');
  const headers = decodeHeaders(Array.isArray(payload?.headers) ? payload.headers : [], warnings);
  const labelIds = Array.isArray(message.labelIds) ? message.labelIds.filter((l): l is string => typeof l === 'string') : [];

  const internalDate = Number(message.internalDate);
  if (!Number.isFinite(internalDate)) warnings.push('missing or invalid internalDate');

  const subject = (headers['subject'] ?? '').replace(/\r\n|[\r\n]/g, ' ');
  // Gmail hands the Subject over unfolded and decoded: a line break left in it came from an encoded word.
  const subjectValue = rawHeaders.get('subject') ?? '';
  const exactSubject = subjectValue.includes('=?') ? decodeHeaderText(subjectValue) : subjectValue;

  // Only format=full carries body parts; metadata/minimal messages have headers (or nothing) only.
  const hasBody = payload && (payload.body?.data != null || Array.isArray(payload.parts) || payload.body?.attachmentId != null);
  const extracted: ExtractedBody = hasBody || raw ? extractBody(payload, raw) : { body: '', bodySource: 'none', attachments: [], parseWarnings: [] };

  return {
    id: message.id ?? '',
    threadId: message.threadId ?? '',
    labelIds,
    internalDate: Number.isFinite(internalDate) ? internalDate : 0,
    historyId: message.historyId ?? '',
    ...(typeof message.sizeEstimate === 'number' && message.sizeEstimate >= 0 ? { sizeEstimate: message.sizeEstimate } : {}),
    snippet: decodeSnippet(message.snippet),
    messageId: readMessageId(rawHeaders.get('message-id')),
    references: extractMessageIds(rawHeaders.get('references')),
    inReplyTo: extractMessageIds(rawHeaders.get('in-reply-to'))[0] ?? '',
    from: parseSender(rawHeaders.all('from'), warnings),
    to: parseAddressList(rawHeaders.get('to'), warnings),
    cc: parseAddressList(rawHeaders.get('cc'), warnings),
    replyTo: rawHeaders.all('reply-to').flatMap((v) => parseAddressList(v, warnings, MAX_SENDER_HEADER)),
    subject,
    ...(exactSubject !== subject ? { exactSubject } : {}),
    date: headers['date'] ?? '',
    body: extracted.body,
    bodySource: extracted.bodySource,
    attachments: extracted.attachments,
    headers,
    isFromUser: labelIds.includes('SENT') || labelIds.includes('DRAFT'),
    isDraft: labelIds.includes('DRAFT'),
    parseWarnings: [...warnings, ...extracted.parseWarnings],
    ...(extracted.bodyDefect ? { bodyDefect: extracted.bodyDefect } : {}),
  };
}

// Gmail's snippet is HTML-escaped ("&#39;").
function decodeSnippet(snippet: string | null | undefined): string {
  return snippet ? htmlToText(snippet) : '';
}
