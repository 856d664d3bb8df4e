// Raw RFC 822 messages (what IMAP FETCH BODY[] gives) into the payload-part tree the Gmail API returns
// (gmail_v1.Schema$MessagePart), so the product's one hardened reader, parseGmailMessage() in
// src/gmail/mime.ts, reads IMAP mail exactly as it reads Gmail mail. The MIME structure is split by
// @zone-eu/mailsplit (the splitter under mailparser and imapflow); everything the reader decides
// (charsets, encoded words, broken multiparts, attachments, display safety) stays in mime.ts.
import type { gmail_v1 } from 'googleapis';
import { Splitter } from '@zone-eu/mailsplit';
import { decodeQuotedPrintable, encodeBase64Url } from '../gmail/mime-encoding.js';
import { decodeHeaderText } from '../gmail/mime-encoding.js';
import { bodyOnlyInRaw, parseGmailMessage } from '../gmail/mime.js';
import type { ThreadMessage } from '../mail/message.js';
import { utf8IfValid } from './raw-headers.js';

type Part = gmail_v1.Schema$MessagePart;

/** Node's mailsplit nodes, as far as they are read here. */
interface SplitNode {
  type: 'node';
  root: boolean;
  parentNode: SplitNode | false;
  multipart: string | false;
  contentType: string | false;
  encoding: string | false;
  filename: string | false;
  headers: { getList(): Array<{ key: string; line: string | Buffer }> } | false;
}

interface Building {
  node: SplitNode;
  part: Part;
  children: Building[];
  chunks: Buffer[];
}

/** Header lines of one node as Gmail lists them: original name, value unfolded, not decoded. */
function headerList(node: SplitNode): gmail_v1.Schema$MessagePartHeader[] {
  if (!node.headers) return [];
  return node.headers.getList().map(({ line }) => {
    const text = Buffer.isBuffer(line) ? line.toString('latin1') : line;
    const colon = text.indexOf(':');
    const name = (colon >= 0 ? text.slice(0, colon) : text).trim();
    const value = (colon >= 0 ? text.slice(colon + 1) : '').replace(/\r?\n(?=[ \t])/g, '').replace(/\r?\n$/, '').trim();
    // Header bytes are kept as Latin-1 code points (8-bit headers included), as mime.ts expects of raw values.
    return { name, value: utf8IfValid(value) };
  });
}

/** The content bytes of a leaf, its Content-Transfer-Encoding undone (as Gmail's format=full gives body.data). */
function decodeTransfer(bytes: Buffer, encoding: string | false): Uint8Array {
  if (encoding === 'base64') return new Uint8Array(Buffer.from(bytes.toString('latin1').replace(/[^A-Za-z0-9+/]/g, ''), 'base64'));
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(bytes);
  return new Uint8Array(bytes);
}

/**
 * The message as a format=full payload: partId '' for the top, '0', '1', '0.1' below (Gmail's
 * numbering), mimeType, filename (decoded), headers, body {size, data (base64url, decoded content)}.
 * Embedded message/rfc822 parts stay leaves (the reader lists them as attachments). Never throws on
 * malformed MIME: the splitter's leniency and the reader's warnings handle it.
 */
export async function rawToPayload(raw: Uint8Array): Promise<Part> {
  const splitter = new Splitter({ ignoreEmbedded: true, maxHeadSize: 2 * 1024 * 1024 });
  const built = new Map<SplitNode, Building>();
  let root: Building | undefined;
  let current: Building | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const events = splitter as unknown as NodeJS.EventEmitter;
    events.on('data', (chunk: unknown) => {
      const data = chunk as { type: string; value?: Buffer };
      if (data.type === 'node') {
        const node = chunk as SplitNode;
        const building: Building = { node, part: {}, children: [], chunks: [] };
        built.set(node, building);
        const parent = node.parentNode ? built.get(node.parentNode) : undefined;
        if (parent) parent.children.push(building);
        else root ??= building;
        current = building;
      } else if (data.type === 'body' && current && data.value) {
        current.chunks.push(data.value);
      }
    });
    events.on('end', () => resolve());
    events.on('error', reject);
  });
  splitter.end(Buffer.from(raw));
  await done;
  if (!root) return { partId: '', mimeType: 'text/plain', filename: '', headers: [], body: { size: 0 } };
  return finish(root, '');
}

function finish(building: Building, partId: string): Part {
  const { node } = building;
  const headers = headerList(node);
  const declared = headers.find((h) => h.name?.toLowerCase() === 'content-type');
  const mimeType = (node.contentType || (declared ? '' : 'text/plain')).toLowerCase();
  const filename = node.filename ? decodeHeaderText(String(node.filename)) : '';
  const part: Part = { partId, mimeType, filename, headers };
  if (building.children.length > 0) {
    part.body = { size: 0 };
    part.parts = building.children.map((child, i) => finish(child, partId === '' ? String(i) : `${partId}.${i}`));
    return part;
  }
  const bytes = Buffer.concat(building.chunks);
  if (node.multipart) {
    // A multipart whose boundary never appears: Gmail gives neither parts nor data (bodyOnlyInRaw).
    part.body = { size: 0 };
    return part;
  }
  const content = decodeTransfer(bytes, node.encoding);
  part.body = { size: content.length, data: encodeBase64Url(content) };
  return part;
}

export interface ImapMessageFacts {
  id: string;
  threadId: string;
  labelIds: string[];
  /** INTERNALDATE, epoch ms. */
  internalDate: number;
  /** The message's MODSEQ (decimal), standing in for Gmail's historyId. */
  modseq: string;
  size?: number;
}

/** A raw message read through the product's reader, with the mailbox's facts (ids, labels, dates). */
export async function readRawMessage(raw: Uint8Array, facts: ImapMessageFacts): Promise<ThreadMessage> {
  const payload = await rawToPayload(raw);
  const message: gmail_v1.Schema$Message = {
    id: facts.id,
    threadId: facts.threadId,
    labelIds: facts.labelIds,
    internalDate: String(facts.internalDate),
    historyId: facts.modseq,
    ...(facts.size !== undefined ? { sizeEstimate: facts.size } : {}),
    payload,
  };
  const parsed = parseGmailMessage(message, bodyOnlyInRaw(payload) ? raw : undefined);
  return { ...parsed, snippet: snippetOf(parsed.body) };
}

/** Gmail's snippet stands in for the start of the body: the first 200 characters, whitespace collapsed. */
function snippetOf(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? flat.slice(0, 200) : flat;
}
