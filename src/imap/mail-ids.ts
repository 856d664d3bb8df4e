// How IMAP mail gets the product's ids, computed from the mail itself so they survive restarts and
// moves without stored state (docs/imap.md "Mapping"):
//
// - message id: 'm' + base64url(Message-ID), the same in every folder and session; a message without
//   a Message-ID gets a location id 'u' + base64url("<UIDVALIDITY>:<UID>:<folder>"), valid until it moves.
// - thread id: 't' + base64url(root Message-ID), the root being the first References id, else the
//   In-Reply-To id, else the message's own Message-ID; a message with none of them is a thread of its
//   own, 'h' + the SHA-256 of its header block (moves copy the bytes, so this too is stable).
//   A Message-ID longer than MAX_ENCODED_ID is hashed ('H' + SHA-256): such a thread is found only by
//   the messages already seen in the session (see ImapMailbox.getThread).
// - labels: our labels are IMAP keywords '$DI_' + an atom-safe, reversible encoding of the name.
import { createHash } from 'node:crypto';
import { decodeBase64Url, encodeBase64Url } from '../gmail/mime-encoding.js';
import { extractMessageIds, readMessageId } from '../gmail/mime.js';

/** Message-IDs longer than this (bytes) are hashed in thread ids. Real ones are far shorter. */
export const MAX_ENCODED_ID = 250;

const utf8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

export function messageIdOf(messageId: string): string {
  return `m${encodeBase64Url(messageId)}`;
}

export function locationIdOf(location: { uidValidity: string; uid: number; folder: string }): string {
  return `u${encodeBase64Url(`${location.uidValidity}:${location.uid}:${location.folder}`)}`;
}

export type DecodedMessageId =
  | { kind: 'message-id'; messageId: string }
  | { kind: 'location'; uidValidity: string; uid: number; folder: string };

/** What an id names; undefined for a string that is not one of ours. */
export function decodeMessageRef(id: string): DecodedMessageId | undefined {
  if (id.length < 2) return undefined;
  let text: string;
  try {
    text = utf8(decodeBase64Url(id.slice(1)));
  } catch {
    return undefined;
  }
  if (id[0] === 'm') return /^<[^<>\s]+>$/.test(text) ? { kind: 'message-id', messageId: text } : undefined;
  if (id[0] !== 'u') return undefined;
  const match = /^(\d+):(\d+):(.+)$/s.exec(text);
  if (!match) return undefined;
  return { kind: 'location', uidValidity: match[1]!, uid: Number(match[2]), folder: match[3]! };
}

export interface ThreadingHeaders {
  messageId: string;
  references: string[];
  inReplyTo: string;
}

/** The threading headers of a raw header block (Message-ID bracketed as the reader does). */
export function threadingHeaders(get: (name: string) => string | undefined): ThreadingHeaders {
  return {
    messageId: readMessageId(get('message-id')),
    references: extractMessageIds(get('references')),
    inReplyTo: extractMessageIds(get('in-reply-to'))[0] ?? '',
  };
}

/** The Message-ID that names a message's thread: first of References, else In-Reply-To, else its own. */
export function threadRoot(headers: ThreadingHeaders): string {
  return headers.references[0] ?? (headers.inReplyTo || headers.messageId);
}

export function threadIdOf(headers: ThreadingHeaders, headerBlock: Uint8Array): string {
  const root = threadRoot(headers);
  if (!root) return `h${sha256(headerBlock)}`;
  if (Buffer.byteLength(root) > MAX_ENCODED_ID) return `H${sha256(Buffer.from(root))}`;
  return `t${encodeBase64Url(root)}`;
}

/** The root Message-ID a 't' thread id carries; undefined for hashed or foreign ids. */
export function threadRootOf(threadId: string): string | undefined {
  if (threadId[0] !== 't' || threadId.length < 2) return undefined;
  try {
    const root = utf8(decodeBase64Url(threadId.slice(1)));
    return /^<[^<>\s]+>$/.test(root) ? root : undefined;
  } catch {
    return undefined;
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 40);
}

// ---------------------------------------------------------------------------------------------------
// Labels as keywords
// ---------------------------------------------------------------------------------------------------

export const KEYWORD_PREFIX = '$DI_';

/**
 * A flag-keyword is an IMAP atom: no SP, CTL, ( ) { % * " \ ], ASCII only, and servers compare it
 * case-insensitively. Letters, digits and - . / : + = @ ! # stay; every other byte of the UTF-8 name
 * (also '_' itself) becomes _XX (upper-case hex). 'Snooze/2026-01-02' → '$DI_Snooze/2026-01-02',
 * 'Action Required' → '$DI_Action_20Required'.
 */
export function labelToKeyword(label: string): string {
  let out = KEYWORD_PREFIX;
  for (const byte of Buffer.from(label, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-./:+=@!#]/.test(char) ? char : `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The label a keyword of ours names; undefined for anybody else's keyword. Prefix matched case-insensitively. */
export function keywordToLabel(keyword: string): string | undefined {
  if (keyword.slice(0, KEYWORD_PREFIX.length).toUpperCase() !== KEYWORD_PREFIX.toUpperCase()) return undefined;
  const body = keyword.slice(KEYWORD_PREFIX.length);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char === '_' && /^[0-9A-Fa-f]{2}$/.test(body.slice(i + 1, i + 3))) {
      bytes.push(parseInt(body.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(char.charCodeAt(0) & 0xff);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

// ---------------------------------------------------------------------------------------------------
// The change cursor
// ---------------------------------------------------------------------------------------------------

export interface FolderCursor {
  uidValidity: string;
  highestModseq: string;
  uidNext: number;
}

/** Per watched folder (by path): where the last listChanges stopped. Opaque to callers. */
export type ChangeCursor = Record<string, FolderCursor>;

export function encodeCursor(cursor: ChangeCursor): string {
  return `c1.${encodeBase64Url(JSON.stringify(cursor))}`;
}

export function decodeCursor(text: string): ChangeCursor | undefined {
  if (!text.startsWith('c1.')) return undefined;
  try {
    const value = JSON.parse(utf8(decodeBase64Url(text.slice(3)))) as unknown;
    if (!value || typeof value !== 'object') return undefined;
    const out: ChangeCursor = {};
    for (const [folder, entry] of Object.entries(value as Record<string, unknown>)) {
      const e = entry as Partial<FolderCursor>;
      if (typeof e?.uidValidity !== 'string' || typeof e.highestModseq !== 'string' || typeof e.uidNext !== 'number') return undefined;
      out[folder] = { uidValidity: e.uidValidity, highestModseq: e.highestModseq, uidNext: e.uidNext };
    }
    return out;
  } catch {
    return undefined;
  }
}
