// The IMAP side's pure pieces: raw RFC 822 into Gmail's payload tree read by the product's reader,
// and the ids, keywords and cursor of mail-ids.ts.
import { describe, expect, it } from 'vitest';
import { rawToPayload, readRawMessage } from '../../src/imap/raw-message.js';
import {
  decodeCursor,
  decodeMessageRef,
  encodeCursor,
  keywordToLabel,
  labelToKeyword,
  locationIdOf,
  messageIdOf,
  threadIdOf,
  threadRootOf,
} from '../../src/imap/mail-ids.js';

const facts = { id: 'm', threadId: 't', labelIds: ['INBOX'], internalDate: 1, modseq: '7' };
const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'));

describe('readRawMessage', () => {
  it('reads a multipart with an encoded subject, a quoted-printable body and an attachment', async () => {
    const raw = crlf([
      'From: =?utf-8?q?J=C3=BCrgen?= <j@x.test>',
      'To: a@b.test',
      'Subject: =?utf-8?b?SMOkbGxv?=',
      'Message-ID: <abc@x>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="BB"',
      '',
      '--BB',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'Gr=C3=BC=C3=9Fe',
      '--BB',
      'Content-Type: application/pdf; name="a.pdf"',
      'Content-Disposition: attachment; filename="=?utf-8?q?=C3=A4.pdf?="',
      'Content-Transfer-Encoding: base64',
      '',
      'JVBERi0xLjQK',
      '--BB--',
      '',
    ]);
    const m = await readRawMessage(raw, facts);
    expect(m).toMatchObject({ subject: 'Hällo', from: { name: 'Jürgen', address: 'j@x.test' }, body: 'Grüße', messageId: '<abc@x>', historyId: '7', snippet: 'Grüße' });
    expect(m.attachments).toEqual([{ filename: 'ä.pdf', mimeType: 'application/pdf', size: 9, partId: '1' }]);
    const payload = await rawToPayload(raw);
    expect(payload.parts?.map((p) => p.partId)).toEqual(['0', '1']);
  });

  it('reads a multipart whose boundary never appears as text, with the defect noted', async () => {
    const m = await readRawMessage(crlf(['From: a@b.test', 'Content-Type: multipart/mixed; boundary="ZZ"', '', 'hello there', '']), facts);
    expect(m.body.trim()).toBe('hello there');
    expect(m.bodyDefect).toMatch(/never appears/);
  });

  it('reads bare LF mail without Content-Type as plain text, and keeps control characters out of the subject', async () => {
    const m = await readRawMessage(Buffer.from('From: a@b.test\nSubject: =?utf-8?q?line=0Abreak?=\n\nbody only\n'), facts);
    expect(m.body).toBe('body only\n');
    expect(m.subject).toBe('line break');
  });
});

describe('mail ids', () => {
  it('round-trips message ids, location ids and thread roots', () => {
    expect(decodeMessageRef(messageIdOf('<a.b@c>'))).toEqual({ kind: 'message-id', messageId: '<a.b@c>' });
    expect(decodeMessageRef(locationIdOf({ uidValidity: '17', uid: 4, folder: 'A:b/c' }))).toEqual({ kind: 'location', uidValidity: '17', uid: 4, folder: 'A:b/c' });
    expect(decodeMessageRef('nonsense')).toBeUndefined();
    const thread = threadIdOf({ messageId: '<c@x>', references: ['<a@x>', '<b@x>'], inReplyTo: '<b@x>' }, new Uint8Array());
    expect(threadRootOf(thread)).toBe('<a@x>');
    expect(threadIdOf({ messageId: '<c@x>', references: [], inReplyTo: '<b@x>' }, new Uint8Array())).toBe(messageIdOf('<b@x>').replace(/^m/, 't'));
    const orphan = threadIdOf({ messageId: '', references: [], inReplyTo: '' }, Buffer.from('From: a\r\n'));
    expect(orphan).toMatch(/^h[0-9a-f]{40}$/);
    expect(threadIdOf({ messageId: '', references: [], inReplyTo: '' }, Buffer.from('From: a\r\n'))).toBe(orphan);
  });

  it('encodes labels into keyword atoms and back', () => {
    for (const label of ['Outbox', 'Action Required', 'Snooze/2026-12-01T09:00', 'Remind/x_y', 'Done ✓', 'a(b)"c\\d]e%*{']) {
      const keyword = labelToKeyword(label);
      expect(keyword).toMatch(/^\$DI_[A-Za-z0-9\-./:+=@!#_]+$/);
      expect(keywordToLabel(keyword)).toBe(label);
    }
    expect(labelToKeyword('Action Required')).toBe('$DI_Action_20Required');
    expect(keywordToLabel('$di_Outbox')).toBe('Outbox'); // servers compare keywords case-insensitively
    expect(keywordToLabel('$Forwarded')).toBeUndefined();
  });

  it('round-trips the cursor and refuses a foreign one', () => {
    const cursor = { INBOX: { uidValidity: '1', highestModseq: '99', uidNext: 5 } };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor('12345')).toBeUndefined();
  });
});
