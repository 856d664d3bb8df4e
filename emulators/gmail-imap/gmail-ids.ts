// X-GM-MSGID and X-GM-THRID as the stand-in makes them: 63-bit numbers (IMAP prints them in decimal)
// from the message's own headers, so every folder and every session gives a message the same ids,
// as Gmail does. A thread's id is the X-GM-MSGID of its first message, as on Gmail: here the message
// named first in References (else In-Reply-To, else the message itself). Gmail also joins messages by
// subject and starts a new thread past 100 messages; the stand-in does neither (README).
import { createHash } from 'node:crypto';

export interface GmailIds {
  msgid: string;
  thrid: string;
}

/** One header's unfolded value (the first of that name) from a raw header block. */
export function headerValue(headers: Buffer, name: string): string | undefined {
  const text = headers.toString('latin1').replace(/\r?\n[ \t]+/g, ' ');
  const match = new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(text);
  return match?.[1]?.trim();
}

function firstId(value: string | undefined): string | undefined {
  return value ? /<[^<>\s]+>/.exec(value)?.[0] : undefined;
}

function idOf(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return (BigInt(`0x${hex}`) & 0x7fff_ffff_ffff_ffffn).toString();
}

export function gmailIds(headers: Buffer): GmailIds {
  const own = firstId(headerValue(headers, 'message-id'));
  const root = firstId(headerValue(headers, 'references')) ?? firstId(headerValue(headers, 'in-reply-to')) ?? own;
  const msgid = idOf(own ?? headers.toString('latin1'));
  return { msgid, thrid: root ? idOf(root) : msgid };
}
