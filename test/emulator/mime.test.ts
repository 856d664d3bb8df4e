// MIME fidelity through googleapis: tricky real-world messages are imported over the control API
// and read back with messages.get (full, raw) and attachments.get.
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, startEmulator } from '../helpers/googleapis-clients.js';

const OWNER = 'mime@example.com';
let emu: RunningGmailEmulator;
let gmail: gmail_v1.Gmail;

const NESTED = [
  'From: =?ISO-8859-1?Q?Andr=E9_Gide?= <andre@example.fr>',
  'To: mime@example.com',
  'Subject: =?UTF-8?Q?Caf=C3=A9?= =?UTF-8?Q?_cr=C3=A8me?= report',
  'Date: Wed, 05 Nov 2025 08:00:00 +0100',
  'Message-ID: <nested-1@example.fr>',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="outer"',
  '',
  'This is a multi-part message in MIME format.',
  '--outer',
  'Content-Type: multipart/alternative; boundary="inner"',
  '',
  '--inner',
  'Content-Type: text/plain; charset=ISO-8859-1',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Voil=E0 le rapport, tr=E8s long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=',
  'bbbbbbbbbb.',
  '--inner',
  'Content-Type: text/html; charset=UTF-8',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('<p>Voilà le rapport</p>').toString('base64'),
  '--inner--',
  '',
  '--outer',
  'Content-Type: application/pdf',
  "Content-Disposition: attachment; filename*=UTF-8''R%C3%A9sum%C3%A9%202025.pdf",
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('%PDF-1.4 fake').toString('base64'),
  '--outer',
  'Content-Type: text/csv; name="=?UTF-8?B?w6l0w6kuY3N2?="',
  'Content-Disposition: attachment;',
  " filename*0*=UTF-8''Donn%C3%A9es%20;",
  ' filename*1="de l\'ann";',
  ' filename*2*=%C3%A9e.csv',
  '',
  'a;b',
  '--outer--',
  '',
].join('\n'); // bare LF line ends, as many mbox exports have

beforeAll(async () => {
  emu = await startEmulator();
  gmail = (await connect(emu, OWNER)).gmail;
  await emu.control.importMail(OWNER, { format: 'eml', data: Buffer.from(NESTED, 'latin1') });
});

afterAll(async () => {
  await emu.close();
});

describe('MIME parsing', () => {
  it('builds the nested part tree with Gmail part ids, decoded headers and bodies', async () => {
    const id = (await gmail.users.messages.list({ userId: 'me' })).data.messages?.[0]?.id ?? '';
    const { data } = await gmail.users.messages.get({ userId: 'me', id });
    const headers = Object.fromEntries((data.payload?.headers ?? []).map((h) => [h.name, h.value]));
    expect(headers.Subject).toBe('Café crème report');
    expect(headers.From).toBe('André Gide <andre@example.fr>');
    expect(data.internalDate).toBe(String(Date.parse('2025-11-05T07:00:00Z')));

    const [alternative, attachment, csv] = data.payload?.parts ?? [];
    expect(csv).toMatchObject({ partId: '2', mimeType: 'text/csv', filename: "Données de l'année.csv" });
    expect(data.payload?.mimeType).toBe('multipart/mixed');
    expect(alternative).toMatchObject({ partId: '0', mimeType: 'multipart/alternative', body: { size: 0 } });
    const [plain, html] = alternative?.parts ?? [];
    expect(plain?.partId).toBe('0.0');
    expect(Buffer.from(plain?.body?.data ?? '', 'base64url').toString('latin1')).toBe('Voilà le rapport, très long: ' + 'a'.repeat(50) + 'bbbbbbbbbb.');
    expect(html?.partId).toBe('0.1');
    expect(Buffer.from(html?.body?.data ?? '', 'base64url').toString('utf8')).toBe('<p>Voilà le rapport</p>');
    expect(attachment).toMatchObject({ partId: '1', mimeType: 'application/pdf', filename: 'Résumé 2025.pdf' });
    const file = await gmail.users.messages.attachments.get({ userId: 'me', messageId: id, id: attachment?.body?.attachmentId ?? '' });
    expect(Buffer.from(file.data.data ?? '', 'base64url').toString()).toBe('%PDF-1.4 fake');
    expect(data.snippet).toBe('Voilà le rapport, très long: ' + 'a'.repeat(50) + 'bbbbbbbbbb.');
  });

  it('keeps the original bytes for format=raw', async () => {
    const id = (await gmail.users.messages.list({ userId: 'me' })).data.messages?.[0]?.id ?? '';
    const { data } = await gmail.users.messages.get({ userId: 'me', id, format: 'raw' });
    expect(Buffer.from(data.raw ?? '', 'base64url').toString('latin1')).toBe(NESTED);
  });
});
