import { describe, expect, it } from 'vitest';
import {
  buildPlainTextMessage,
  buildReply,
  parseAddressList,
  parseGmailMessage,
  replyRecipients,
  replyReferences,
  replySubject,
  MAX_REFERENCES,
  type ReplyParent,
} from '../../src/gmail/index.js';
import { decodeBase64Url, decodeHeaderText, decodeQuotedPrintable } from '../../src/gmail/mime-encoding.js';
import { withTopHeader } from '../../src/gmail/mime.js';

/** Splits RFC 2822 text into unfolded headers and the body, the way a receiving MTA would. */
function splitMessage(rfc2822: string): { headers: Array<[string, string]>; body: string } {
  const end = rfc2822.indexOf('\r\n\r\n');
  const head = rfc2822.slice(0, end).replace(/\r\n(?=[ \t])/g, '');
  const headers = head.split('\r\n').map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  return { headers, body: rfc2822.slice(end + 4) };
}

function header(headers: Array<[string, string]>, name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
}

const parent: ReplyParent = {
  messageId: '<m3@example.com>',
  references: ['<m1@example.com>', '<m2@example.com>'],
  inReplyTo: '<m2@example.com>',
  subject: 'Quarterly numbers',
};

describe('replySubject', () => {
  it.each([
    ['Hello', 'Re: Hello'],
    ['Re: Hello', 'Re: Hello'],
    ['RE: Hello', 'RE: Hello'],
    ['re : Hello', 're : Hello'],
    ['  Hello  ', 'Re: Hello'],
    ['Fwd: Hello', 'Re: Fwd: Hello'],
    ['Regarding the plan', 'Re: Regarding the plan'],
    ['', 'Re:'],
  ])('%j → %j', (input, expected) => {
    expect(replySubject(input)).toBe(expected);
  });
});

describe('replyReferences', () => {
  it('appends the parent Message-ID to its References', () => {
    expect(replyReferences(parent)).toEqual(['<m1@example.com>', '<m2@example.com>', '<m3@example.com>']);
  });

  it('falls back to In-Reply-To when the parent has no References', () => {
    expect(replyReferences({ ...parent, references: [] })).toEqual(['<m2@example.com>', '<m3@example.com>']);
  });

  it('starts a chain from the Message-ID alone for a thread starter', () => {
    expect(replyReferences({ ...parent, references: [], inReplyTo: '' })).toEqual(['<m3@example.com>']);
  });

  it('does not repeat an id already in the chain', () => {
    expect(replyReferences({ ...parent, references: ['<m1@example.com>', '<m3@example.com>'] })).toEqual([
      '<m1@example.com>',
      '<m3@example.com>',
    ]);
  });

  it('keeps the root and the newest ids of a very long chain', () => {
    const references = Array.from({ length: 50 }, (_, i) => `<r${i}@example.com>`);
    const chain = replyReferences({ ...parent, references });
    expect(chain).toHaveLength(MAX_REFERENCES);
    expect(chain[0]).toBe('<r0@example.com>');
    expect(chain.at(-1)).toBe('<m3@example.com>');
    expect(chain.at(-2)).toBe('<r49@example.com>');
  });
});

describe('buildReply', () => {
  const body = 'Thanks — the numbers look right.\nLine with trailing space \n' + 'x'.repeat(120) + '\nprice = 5€\n';
  const reply = buildReply({
    parent,
    from: { name: 'Ana Lima', address: 'ana@example.com' },
    to: [{ name: 'Bob, Jr.', address: 'bob@example.com' }],
    cc: [{ address: 'carol@example.com' }],
    body,
  });
  const text = Buffer.from(decodeBase64Url(reply.raw)).toString('utf8');
  const { headers, body: encodedBody } = splitMessage(text);

  it('writes threading headers from the parent', () => {
    expect(reply.subject).toBe('Re: Quarterly numbers');
    expect(header(headers, 'Subject')).toBe('Re: Quarterly numbers');
    expect(header(headers, 'In-Reply-To')).toBe('<m3@example.com>');
    expect(header(headers, 'References')).toBe('<m1@example.com> <m2@example.com> <m3@example.com>');
    expect(reply.references).toEqual(['<m1@example.com>', '<m2@example.com>', '<m3@example.com>']);
  });

  it('writes From/To/Cc with quoting where needed', () => {
    expect(header(headers, 'From')).toBe('Ana Lima <ana@example.com>');
    expect(header(headers, 'To')).toBe('"Bob, Jr." <bob@example.com>');
    expect(header(headers, 'Cc')).toBe('carol@example.com');
    expect(parseAddressList(header(headers, 'To'))).toEqual([{ name: 'Bob, Jr.', address: 'bob@example.com' }]);
  });

  it('declares a UTF-8 plain-text body in quoted-printable', () => {
    expect(header(headers, 'MIME-Version')).toBe('1.0');
    expect(header(headers, 'Content-Type')).toBe('text/plain; charset=UTF-8');
    expect(header(headers, 'Content-Transfer-Encoding')).toBe('quoted-printable');
  });

  it('uses CRLF line endings only, and keeps encoded lines within 76 characters', () => {
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text).not.toMatch(/\r(?!\n)/);
    for (const line of encodedBody.split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
  });

  it('round-trips the body through quoted-printable', () => {
    const decoded = Buffer.from(decodeQuotedPrintable(encodedBody)).toString('utf8');
    expect(decoded).toBe(body.replace(/\n/g, '\r\n'));
  });

  it('can use base64 instead', () => {
    const b64 = buildReply({ parent, from: { address: 'ana@example.com' }, to: [{ address: 'bob@example.com' }], body, transferEncoding: 'base64' });
    const split = splitMessage(Buffer.from(decodeBase64Url(b64.raw)).toString('utf8'));
    expect(header(split.headers, 'Content-Transfer-Encoding')).toBe('base64');
    expect(Buffer.from(split.body.replace(/\r\n/g, ''), 'base64').toString('utf8')).toBe(body.replace(/\n/g, '\r\n'));
  });

  it('omits In-Reply-To when the parent has no Message-ID', () => {
    const orphan = buildReply({ parent: { ...parent, messageId: '', references: [], inReplyTo: '' }, from: { address: 'a@example.com' }, to: [], body: 'x' });
    const split = splitMessage(Buffer.from(decodeBase64Url(orphan.raw)).toString('utf8'));
    expect(header(split.headers, 'In-Reply-To')).toBeUndefined();
    expect(header(split.headers, 'References')).toBeUndefined();
  });
});

describe('RFC 2047 header encoding', () => {
  const subject = 'Réunion 会議 — planning du trimestre 🚀 avec l’équipe de München und Zürich';
  const rfc2822 = buildPlainTextMessage({
    from: { name: 'José Müller', address: 'jose@example.com' },
    to: [{ name: '山田 太郎', address: 'taro@example.jp' }],
    subject,
    body: 'hola',
  });
  const { headers } = splitMessage(rfc2822);

  it('keeps the raw header block ASCII with encoded-words no longer than 75 characters', () => {
    const head = rfc2822.slice(0, rfc2822.indexOf('\r\n\r\n'));
    expect(head).toMatch(/^[\x20-\x7e\r\n\t]*$/);
    const words = head.match(/=\?[^?]+\?[BQ]\?[^?]*\?=/g) ?? [];
    expect(words.length).toBeGreaterThan(2);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    for (const line of head.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
  });

  it('decodes back to the original subject and names', () => {
    expect(decodeHeaderText(header(headers, 'Subject')!)).toBe(subject);
    expect(parseAddressList(header(headers, 'From'))).toEqual([{ name: 'José Müller', address: 'jose@example.com' }]);
    expect(parseAddressList(header(headers, 'To'))).toEqual([{ name: '山田 太郎', address: 'taro@example.jp' }]);
  });

  it('round-trips through the Gmail payload parser', () => {
    const message = parseGmailMessage({
      id: 'x',
      threadId: 't',
      internalDate: '1',
      payload: {
        mimeType: 'text/plain',
        headers: headers.map(([name, value]) => ({ name, value })),
        body: { data: Buffer.from('hola').toString('base64url'), size: 4 },
      },
    });
    expect(message.subject).toBe(subject);
    expect(message.from).toEqual({ name: 'José Müller', address: 'jose@example.com' });
    expect(message.headers['subject']).toBe(subject);
  });

  it('encodes the CR/LF of a subject, so it cannot inject headers and the subject keeps its text', () => {
    const injected = buildPlainTextMessage({
      from: { address: 'a@example.com' },
      to: [{ address: 'b@example.com' }],
      subject: 'Hi\r\nBcc: evil@example.com',
      body: 'x',
    });
    const split = splitMessage(injected);
    expect(header(split.headers, 'Bcc')).toBeUndefined();
    expect(injected.slice(0, injected.indexOf('\r\n\r\n'))).toMatch(/^[\x20-\x7e\r\n\t]*$/);
    expect(decodeHeaderText(header(split.headers, 'Subject')!)).toBe('Hi\r\nBcc: evil@example.com');
  });

  it('answers a subject holding an encoded CR/LF (or NUL) with that very subject, as Gmail\'s same-subject threading needs', () => {
    for (const subject of ['Quarterly\r\nnumbers', 'Quarterly\u0000 numbers']) {
      const reply = buildReply({ parent: { ...parent, subject }, from: { address: 'me@example.com' }, to: [{ address: 'bob@example.com' }], body: 'Sure.' });
      const { headers } = splitMessage(Buffer.from(decodeBase64Url(reply.raw)).toString('latin1'));
      expect(decodeHeaderText(header(headers, 'Subject')!)).toBe(`Re: ${subject}`);
      expect(header(headers, 'In-Reply-To')).toBe('<m3@example.com>');
      expect(header(headers, 'References')).toBe('<m1@example.com> <m2@example.com> <m3@example.com>');
    }
  });
});

describe('replyRecipients', () => {
  const base = { from: { address: 'bob@example.com' }, to: [{ address: 'me@example.com' }], replyTo: [] };

  it('answers the sender', () => {
    expect(replyRecipients(base, 'me@example.com')).toEqual([{ address: 'bob@example.com' }]);
  });

  it('honours Reply-To', () => {
    expect(replyRecipients({ ...base, replyTo: [{ address: 'list@example.com' }] }, 'me@example.com')).toEqual([{ address: 'list@example.com' }]);
  });

  it("answers the original recipients when the parent is the user's own message", () => {
    expect(replyRecipients({ from: { address: 'ME@example.com' }, to: [{ address: 'bob@example.com' }], replyTo: [] }, 'me@example.com')).toEqual([
      { address: 'bob@example.com' },
    ]);
  });
});

describe('withTopHeader', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8');
  const text = (raw: Uint8Array) => Buffer.from(raw).toString('utf8');

  it('sets the header and leaves every other byte as it was (8-bit text, parts)', () => {
    const body = '--b\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nGrüße\r\n--b--\r\n';
    const raw = `From: me@example.com\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${body}`;
    expect(text(withTopHeader(bytes(raw), 'X-Mark', 'a1'))).toBe(`X-Mark: a1\r\n${raw}`);
  });

  it('replaces an earlier occurrence, folded lines and any case included, and not a header that merely starts alike', () => {
    const raw = 'x-mark: old\r\n  folded rest\r\nX-Marker: keep\r\nSubject: Hi\r\n\r\nX-Mark: in the body stays';
    expect(text(withTopHeader(bytes(raw), 'X-Mark', 'new'))).toBe('X-Mark: new\r\nX-Marker: keep\r\nSubject: Hi\r\n\r\nX-Mark: in the body stays');
  });

  it('keeps bare LF line ends, and copes with a message of headers only', () => {
    expect(text(withTopHeader(bytes('Subject: Hi\n\nbody\n'), 'Date', 'Thu, 26 Nov 2026 14:00:00 +0000'))).toBe('Date: Thu, 26 Nov 2026 14:00:00 +0000\nSubject: Hi\n\nbody\n');
    expect(text(withTopHeader(bytes('Subject: Hi'), 'X-Mark', 'a1'))).toBe('X-Mark: a1\r\nSubject: Hi\r\n');
  });

  it('cannot be made to write a second header by the value', () => {
    expect(text(withTopHeader(bytes('Subject: Hi\r\n\r\n'), 'X-Mark', 'a1\r\nBcc: evil@example.com'))).not.toContain('\r\nBcc:');
  });
});
