// The compact in-memory message record and its rendering into Gmail's formats
// (minimal, metadata, full, raw). Only raw bytes and a few search fields are kept; the MIME
// tree is parsed on demand when a `full` or attachment read asks for it.
import { badRequest, notFound } from './errors.js';
import {
  attachmentFilenames,
  extractText,
  findPart,
  headerValue,
  makeSnippet,
  parseMime,
  parseTopHeaders,
  toBase64Url,
  type Header,
  type MimePart,
} from './mime.js';

export interface StoredMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  /** Epoch ms. */
  internalDate: number;
  historyId: number;
  raw: Buffer;
  /** Decoded header values kept for search (from:, to:, subject:). */
  from: string;
  to: string;
  subject: string;
  snippet: string;
  /** The RFC 2822 Message-ID, used for threading replies. */
  rfc822MessageId: string;
  hasAttachment: boolean;
  /** Attachment file names, lower-case, one per line (filename: search). */
  attachmentNames: string;
  /** Labels that trashing removed (INBOX, SPAM), put back when the message leaves the trash. */
  beforeTrash?: string[];
}

export type MessageFormat = 'minimal' | 'metadata' | 'full' | 'raw';

export function parseFormat(value: string | undefined): MessageFormat {
  const format = (value ?? 'full').toLowerCase();
  if (format === 'minimal' || format === 'metadata' || format === 'full' || format === 'raw') return format;
  throw badRequest(`Invalid value at 'format' (TYPE_ENUM), "${value}"`);
}

/** Search fields of a raw message, computed once when it enters the store. */
export function describeRaw(
  raw: Buffer,
): Pick<StoredMessage, 'from' | 'to' | 'subject' | 'snippet' | 'rfc822MessageId' | 'hasAttachment' | 'attachmentNames'> & { headers: Header[] } {
  const root = parseMime(raw);
  const headers = root.headers;
  const attachments = attachmentFilenames(root);
  const to = [headerValue(headers, 'to'), headerValue(headers, 'cc')].filter(Boolean).join(', ');
  return {
    headers,
    from: headerValue(headers, 'from') ?? '',
    to,
    subject: headerValue(headers, 'subject') ?? '',
    snippet: makeSnippet(extractText(root)),
    rfc822MessageId: (headerValue(headers, 'message-id') ?? '').trim(),
    hasAttachment: attachments.length > 0,
    attachmentNames: attachments.join('\n').toLowerCase(),
  };
}

export interface GmailMessagePart {
  partId: string;
  mimeType: string;
  filename: string;
  headers: Header[];
  body: { size: number; data?: string; attachmentId?: string };
  parts?: GmailMessagePart[];
}

/** Attachment ids are opaque to clients; ours encode the message id and the part id. */
function attachmentId(messageId: string, partId: string): string {
  return 'ANGjdJ' + Buffer.from(`${messageId}:${partId}`).toString('base64url');
}

export function parseAttachmentId(id: string): { messageId: string; partId: string } | undefined {
  if (!id.startsWith('ANGjdJ')) return undefined;
  const [messageId, partId] = Buffer.from(id.slice(6), 'base64url').toString('utf8').split(':');
  return messageId !== undefined && partId !== undefined ? { messageId, partId } : undefined;
}

function toPayload(part: MimePart, messageId: string, partId: string): GmailMessagePart {
  const payload: GmailMessagePart = {
    partId,
    mimeType: part.mimeType,
    filename: part.filename,
    headers: part.headers,
    body: { size: 0 },
  };
  if (part.parts.length > 0 || part.mimeType.startsWith('multipart/')) {
    payload.parts = part.parts.map((child, i) => toPayload(child, messageId, partId === '' ? String(i) : `${partId}.${i}`));
  } else if (part.isAttachment) {
    payload.body = { attachmentId: attachmentId(messageId, partId), size: part.body.length };
  } else {
    payload.body = { size: part.body.length, data: toBase64Url(part.body) };
  }
  return payload;
}

export interface GmailMessage {
  id: string;
  threadId: string;
  labelIds?: string[];
  snippet?: string;
  sizeEstimate?: number;
  historyId?: string;
  internalDate?: string;
  payload?: Partial<GmailMessagePart>;
  raw?: string;
}

/** Renders a message in one of Gmail's formats. `metadataHeaders` narrows `metadata` headers. */
export function renderMessage(msg: StoredMessage, format: MessageFormat, metadataHeaders?: string[]): GmailMessage {
  const out: GmailMessage = {
    id: msg.id,
    threadId: msg.threadId,
    labelIds: [...msg.labelIds],
    snippet: msg.snippet,
    sizeEstimate: msg.raw.length,
    historyId: String(msg.historyId),
    internalDate: String(msg.internalDate),
  };
  if (out.labelIds?.length === 0) delete out.labelIds;
  switch (format) {
    case 'minimal':
      return out;
    case 'raw':
      out.raw = toBase64Url(msg.raw);
      return out;
    case 'metadata': {
      const all = parseTopHeaders(msg.raw);
      let headers = all;
      if (metadataHeaders && metadataHeaders.length > 0) {
        const wanted = new Set(metadataHeaders.map((h) => h.toLowerCase()));
        headers = headers.filter((h) => wanted.has(h.name.toLowerCase()));
      }
      const contentType = headerValue(all, 'content-type') ?? 'text/plain';
      out.payload = { partId: '', mimeType: contentType.split(';')[0]?.trim().toLowerCase() ?? 'text/plain', filename: '', headers, body: { size: 0 } };
      return out;
    }
    case 'full':
      out.payload = toPayload(parseMime(msg.raw), msg.id, '');
      return out;
  }
}

export function readAttachment(msg: StoredMessage, id: string): { attachmentId: string; size: number; data: string } {
  const ref = parseAttachmentId(id);
  if (!ref || ref.messageId !== msg.id) throw badRequest('Invalid attachment token');
  const part = findPart(parseMime(msg.raw), ref.partId);
  if (!part || part.parts.length > 0) throw notFound();
  return { attachmentId: id, size: part.body.length, data: toBase64Url(part.body) };
}
