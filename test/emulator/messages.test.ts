// Contract tests for profile, labels, messages and threads — only through googleapis.
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, failure, raw, startEmulator, type ConnectedAccount } from '../helpers/googleapis-clients.js';

const OWNER = 'owner@example.com';
let emu: RunningGmailEmulator;
let owner: ConnectedAccount;
let gmail: gmail_v1.Gmail;
const DAY = 86_400_000;
const base = Date.UTC(2026, 0, 10, 12, 0, 0);

beforeAll(async () => {
  emu = await startEmulator();
  owner = await connect(emu, OWNER, 'Olivia Owner');
  gmail = owner.gmail;
  // Three dated messages (one a reply), plus a newsletter and an automated notification.
  const first = await emu.control.deliver(OWNER, { from: { name: 'Zoë Müller', email: 'zoe@example.de' }, subject: 'Überprüfung des Vertrags', text: 'Können wir morgen reden?', internalDate: base });
  await emu.control.deliver(OWNER, { from: 'zoe@example.de', threadId: first.threadId, text: 'Any news?', internalDate: base + DAY });
  await emu.control.deliver(OWNER, {
    from: { name: 'Weekly Digest', email: 'news@digest.example.com' },
    subject: 'This week in durable execution',
    text: 'Stories...',
    html: '<p>Stories...</p>',
    headers: { 'List-Unsubscribe': '<mailto:unsub@digest.example.com>', Precedence: 'bulk' },
    internalDate: base + 2 * DAY,
  });
  await emu.control.deliver(OWNER, {
    from: 'no-reply@ci.example.com',
    subject: 'Build failed: main #42',
    text: 'See the log.',
    headers: { 'Auto-Submitted': 'auto-generated' },
    attachments: [{ filename: 'build.log', contentType: 'text/plain', contentBase64: Buffer.from('error: boom\n').toString('base64') }],
    internalDate: base + 3 * DAY,
  });
});

afterAll(async () => {
  await emu.close();
});

describe('users.getProfile and labels', () => {
  it('reports the mailbox address, totals and a string historyId', async () => {
    const { data } = await gmail.users.getProfile({ userId: 'me' });
    expect(data.emailAddress).toBe(OWNER);
    expect(data.messagesTotal).toBe(4);
    expect(data.threadsTotal).toBe(3);
    expect(data.historyId).toMatch(/^\d+$/);
  });

  it('accepts the account address as userId and refuses another one', async () => {
    const { data } = await gmail.users.getProfile({ userId: OWNER });
    expect(data.emailAddress).toBe(OWNER);
    const err = await failure(gmail.users.getProfile({ userId: 'someone.else@example.com' }));
    expect(err.status).toBe(403);
    expect(err.data.error.message).toContain('Delegation denied');
  });

  it('lists system labels, creates a user label, and gets counts', async () => {
    const list = await gmail.users.labels.list({ userId: 'me' });
    const ids = list.data.labels?.map((l) => l.id) ?? [];
    expect(ids).toEqual(expect.arrayContaining(['INBOX', 'SENT', 'DRAFT', 'UNREAD', 'TRASH', 'SPAM', 'CATEGORY_PROMOTIONS']));
    const created = await gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Clients/ACME', labelListVisibility: 'labelShow', messageListVisibility: 'show' } });
    expect(created.data).toMatchObject({ id: expect.stringMatching(/^Label_\d+$/), name: 'Clients/ACME', type: 'user' });
    const dup = await failure(gmail.users.labels.create({ userId: 'me', requestBody: { name: 'clients/acme' } }));
    expect(dup.status).toBe(409);
    const inbox = await gmail.users.labels.get({ userId: 'me', id: 'INBOX' });
    expect(inbox.data).toMatchObject({ id: 'INBOX', type: 'system', messagesTotal: 4, threadsTotal: 3, messagesUnread: 4 });
  });
});

describe('users.messages.list', () => {
  it('lists newest first with ids, threadIds and resultSizeEstimate', async () => {
    const { data } = await gmail.users.messages.list({ userId: 'me' });
    expect(data.resultSizeEstimate).toBe(4);
    expect(data.messages).toHaveLength(4);
    expect(data.messages?.[0]).toEqual({ id: expect.any(String), threadId: expect.any(String) });
    const dates = await Promise.all((data.messages ?? []).map(async (m) => Number((await gmail.users.messages.get({ userId: 'me', id: m.id ?? '', format: 'minimal' })).data.internalDate)));
    expect([...dates].sort((a, b) => b - a)).toEqual(dates);
  });

  it('pages with maxResults and pageToken without repeats', async () => {
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const { data } = await gmail.users.messages.list({ userId: 'me', maxResults: 3, ...(pageToken ? { pageToken } : {}) });
      seen.push(...(data.messages ?? []).map((m) => m.id ?? ''));
      pageToken = data.nextPageToken ?? undefined;
      pages++;
    } while (pageToken);
    expect(pages).toBe(2);
    expect(new Set(seen).size).toBe(4);
  });

  it('slices time with after:/before: epoch seconds (after inclusive, before exclusive)', async () => {
    const after = Math.floor((base + DAY) / 1000);
    const before = Math.floor((base + 3 * DAY) / 1000);
    const { data } = await gmail.users.messages.list({ userId: 'me', q: `after:${after} before:${before}` });
    expect(data.resultSizeEstimate).toBe(2);
  });

  it('filters by from:, subject:, in:, label: and labelIds, and answers an empty result without messages', async () => {
    const count = async (q: string, labelIds?: string[]) => (await gmail.users.messages.list({ userId: 'me', q, ...(labelIds ? { labelIds } : {}) })).data.resultSizeEstimate;
    expect(await count('from:zoe@example.de')).toBe(2);
    expect(await count('subject:"build failed"')).toBe(1);
    expect(await count('in:inbox')).toBe(4);
    expect(await count('label:inbox -from:zoe')).toBe(2);
    expect(await count('', ['CATEGORY_PROMOTIONS'])).toBe(1);
    expect(await count('has:attachment')).toBe(1);
    expect(await count('', ['INBOX', 'CATEGORY_UPDATES'])).toBe(1);
    const empty = await gmail.users.messages.list({ userId: 'me', q: 'from:nobody@nowhere.example' });
    expect(empty.data).toEqual({ resultSizeEstimate: 0 });
  });
});

describe('resultSizeEstimate', () => {
  it('follows changes to the mailbox between pages of the same query', async () => {
    const count = async () => (await gmail.users.messages.list({ userId: 'me', q: 'subject:estimate' })).data.resultSizeEstimate;
    expect(await count()).toBe(0);
    const first = await emu.control.deliver(OWNER, { from: 'e@example.com', subject: 'estimate one', text: 'x' });
    expect(await count()).toBe(1);
    await emu.control.importMail(OWNER, { format: 'eml', data: 'From: e@example.com\r\nSubject: estimate two\r\n\r\nx\r\n' });
    expect(await count()).toBe(2);
    await gmail.users.messages.delete({ userId: 'me', id: first.id });
    expect(await count()).toBe(1);
  });
});

describe('users.messages.get formats', () => {
  let newsletterId: string;
  let notificationId: string;

  beforeAll(async () => {
    newsletterId = (await gmail.users.messages.list({ userId: 'me', q: 'from:digest' })).data.messages?.[0]?.id ?? '';
    notificationId = (await gmail.users.messages.list({ userId: 'me', q: 'has:attachment' })).data.messages?.[0]?.id ?? '';
  });

  it('minimal carries ids, labels, snippet, sizeEstimate, historyId and internalDate but no payload', async () => {
    const { data } = await gmail.users.messages.get({ userId: 'me', id: newsletterId, format: 'minimal' });
    expect(data).toMatchObject({ id: newsletterId, labelIds: expect.arrayContaining(['INBOX', 'CATEGORY_PROMOTIONS']), internalDate: String(base + 2 * DAY) });
    expect(data.payload).toBeUndefined();
    expect(Number(data.sizeEstimate)).toBeGreaterThan(100);
  });

  it('metadata narrows headers with metadataHeaders', async () => {
    const { data } = await gmail.users.messages.get({ userId: 'me', id: newsletterId, format: 'metadata', metadataHeaders: ['Subject', 'List-Unsubscribe'] });
    expect(data.payload?.headers).toEqual([
      { name: 'Subject', value: 'This week in durable execution' },
      { name: 'List-Unsubscribe', value: '<mailto:unsub@digest.example.com>' },
    ]);
  });

  it('full has a MIME part tree with base64url bodies and attachment ids', async () => {
    const { data } = await gmail.users.messages.get({ userId: 'me', id: newsletterId });
    expect(data.payload?.mimeType).toBe('multipart/alternative');
    const [plain, html] = data.payload?.parts ?? [];
    expect(plain).toMatchObject({ partId: '0', mimeType: 'text/plain' });
    expect(html).toMatchObject({ partId: '1', mimeType: 'text/html' });
    expect(Buffer.from(html?.body?.data ?? '', 'base64url').toString()).toBe('<p>Stories...</p>');

    const withFile = await gmail.users.messages.get({ userId: 'me', id: notificationId, format: 'full' });
    const file = withFile.data.payload?.parts?.find((p) => p.filename === 'build.log');
    expect(file?.body?.attachmentId).toBeTruthy();
    expect(file?.body?.data).toBeUndefined();
    const attachment = await gmail.users.messages.attachments.get({ userId: 'me', messageId: notificationId, id: file?.body?.attachmentId ?? '' });
    expect(Buffer.from(attachment.data.data ?? '', 'base64url').toString()).toBe('error: boom\n');
    expect(attachment.data.size).toBe(12);
  });

  it('decodes RFC 2047 headers in full, and raw returns the RFC 2822 bytes', async () => {
    const id = (await gmail.users.messages.list({ userId: 'me', q: 'subject:Überprüfung from:Zoë' })).data.messages?.[0]?.id ?? '';
    const full = await gmail.users.messages.get({ userId: 'me', id });
    expect(full.data.payload?.headers?.find((h) => h.name === 'From')?.value).toBe('Zoë Müller <zoe@example.de>');
    expect(full.data.snippet).toBe('Können wir morgen reden?');
    const rawMsg = await gmail.users.messages.get({ userId: 'me', id, format: 'raw' });
    const text = Buffer.from(rawMsg.data.raw ?? '', 'base64url').toString('latin1');
    expect(text).toContain('Subject: =?UTF-8?B?');
    expect(text).toContain('Message-ID: <');
  });

  it('delivers raw mail without a Message-ID with one added, as Gmail\'s MX did (SMTPIN_ADDED_MISSING), and keeps a present one', async () => {
    const bare = Buffer.from('From: cron@backup.example\r\nTo: owner@example.com\r\nSubject: disk report\r\n\r\n91% used\r\n');
    const added = await emu.control.deliver(OWNER, { from: '', raw: bare.toString('base64url') });
    const meta = await gmail.users.messages.get({ userId: 'me', id: added.id, format: 'metadata', metadataHeaders: ['Message-ID'] });
    expect(meta.data.payload?.headers?.[0]?.value).toMatch(/^<[0-9a-f.]+SMTPIN_ADDED_MISSING@mx\.google\.com>$/);
    const rawAdded = Buffer.from((await gmail.users.messages.get({ userId: 'me', id: added.id, format: 'raw' })).data.raw ?? '', 'base64url');
    expect(rawAdded.subarray(rawAdded.length - bare.length).equals(bare)).toBe(true);

    const withId = Buffer.from('From: cron@backup.example\r\nMessage-ID: <kept-1@backup.example>\r\nSubject: disk report 2\r\n\r\n92% used\r\n');
    const kept = await emu.control.deliver(OWNER, { from: '', raw: withId.toString('base64url') });
    const rawKept = Buffer.from((await gmail.users.messages.get({ userId: 'me', id: kept.id, format: 'raw' })).data.raw ?? '', 'base64url');
    expect(rawKept.equals(withId)).toBe(true);
  });

  it('answers 404 in Google error format for an unknown id', async () => {
    const err = await failure(gmail.users.messages.get({ userId: 'me', id: '7fffffffffffffff' }));
    expect(err.status).toBe(404);
    expect(err.data.error).toMatchObject({ code: 404, status: 'NOT_FOUND', errors: [{ reason: 'notFound', domain: 'global' }] });
  });
});

describe('message changes', () => {
  it('modify adds and removes labels, rejecting labels only Gmail sets', async () => {
    const id = (await gmail.users.messages.list({ userId: 'me', q: 'from:no-reply' })).data.messages?.[0]?.id ?? '';
    const { data } = await gmail.users.messages.modify({ userId: 'me', id, requestBody: { addLabelIds: ['STARRED'], removeLabelIds: ['UNREAD'] } });
    expect(data.labelIds).toContain('STARRED');
    expect(data.labelIds).not.toContain('UNREAD');
    const bad = await failure(gmail.users.messages.modify({ userId: 'me', id, requestBody: { addLabelIds: ['SENT'] } }));
    expect(bad.status).toBe(400);
  });

  it('batchModify changes many messages and refuses more than 1000 ids', async () => {
    const ids = ((await gmail.users.messages.list({ userId: 'me', q: 'from:zoe' })).data.messages ?? []).map((m) => m.id ?? '');
    const res = await gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids, addLabelIds: ['IMPORTANT'] } });
    expect(res.status).toBe(204);
    expect((await gmail.users.messages.list({ userId: 'me', labelIds: ['IMPORTANT'] })).data.resultSizeEstimate).toBe(2);
    const tooMany = Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(16, '0'));
    const err = await failure(gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids: tooMany, addLabelIds: ['IMPORTANT'] } }));
    expect(err.status).toBe(400);
  });

  it('send stores a SENT message, fills in Date/Message-ID, and delivers to another emulated mailbox', async () => {
    const other = await connect(emu, 'friend@example.org');
    const sent = await gmail.users.messages.send({ userId: 'me', requestBody: { raw: raw('To: friend@example.org\nSubject: Hello friend\n\nHi there!') } });
    expect(sent.data.labelIds).toEqual(['SENT']);
    const full = await gmail.users.messages.get({ userId: 'me', id: sent.data.id ?? '', format: 'metadata' });
    const names = full.data.payload?.headers?.map((h) => h.name) ?? [];
    expect(names).toEqual(expect.arrayContaining(['From', 'Date', 'Message-ID']));
    const inbox = await other.gmail.users.messages.list({ userId: 'me', q: 'subject:"Hello friend"' });
    expect(inbox.data.resultSizeEstimate).toBe(1);
    const noRecipient = await failure(gmail.users.messages.send({ userId: 'me', requestBody: { raw: raw('Subject: nobody\n\nx') } }));
    expect(noRecipient.status).toBe(400);
  });

  it('send with threadId joins the thread only with matching subject and references', async () => {
    const thread = (await gmail.users.threads.list({ userId: 'me', q: 'from:zoe' })).data.threads?.[0];
    const head = await gmail.users.messages.get({ userId: 'me', id: thread?.id ?? '', format: 'metadata', metadataHeaders: ['Message-ID', 'Subject'] });
    const msgId = head.data.payload?.headers?.find((h) => h.name === 'Message-ID')?.value ?? '';
    const reply = await gmail.users.messages.send({
      userId: 'me',
      requestBody: { threadId: thread?.id ?? '', raw: raw(`To: zoe@example.de\nSubject: Re: Überprüfung des Vertrags\nIn-Reply-To: ${msgId}\nReferences: ${msgId}\n\nJa, gern.`) },
    });
    expect(reply.data.threadId).toBe(thread?.id);
    const unrelated = await gmail.users.messages.send({ userId: 'me', requestBody: { threadId: thread?.id ?? '', raw: raw('To: zoe@example.de\nSubject: Something else\n\nNew topic') } });
    expect(unrelated.data.threadId).not.toBe(thread?.id);
  });

  it('import takes internalDate from the Date header, insert from the time of receipt', async () => {
    const message = raw('From: old@example.com\nTo: owner@example.com\nSubject: imported\nDate: Mon, 01 Jan 2024 10:00:00 +0000\n\nfrom the archive');
    const imported = await gmail.users.messages.import({ userId: 'me', requestBody: { raw: message, labelIds: ['INBOX', 'UNREAD'] } });
    expect(imported.data.labelIds).toEqual(['INBOX', 'UNREAD']);
    const got = await gmail.users.messages.get({ userId: 'me', id: imported.data.id ?? '', format: 'minimal' });
    expect(got.data.internalDate).toBe(String(Date.parse('2024-01-01T10:00:00Z')));
    const inserted = await gmail.users.messages.insert({ userId: 'me', requestBody: { raw: message } });
    const insertedDate = Number((await gmail.users.messages.get({ userId: 'me', id: inserted.data.id ?? '', format: 'minimal' })).data.internalDate);
    expect(Math.abs(insertedDate - Date.now())).toBeLessThan(60_000);
    const bad = await failure(gmail.users.messages.insert({ userId: 'me', requestBody: { raw: message, labelIds: ['NO_SUCH_LABEL'] } }));
    expect(bad.status).toBe(400);
  });

  it('trash moves a message to TRASH (hidden from lists unless includeSpamTrash), delete removes it', async () => {
    const sent = await gmail.users.messages.send({ userId: 'me', requestBody: { raw: raw('To: x@example.net\nSubject: to be trashed\n\nbye') } });
    const id = sent.data.id ?? '';
    const trashed = await gmail.users.messages.trash({ userId: 'me', id });
    expect(trashed.data.labelIds).toContain('TRASH');
    expect((await gmail.users.messages.list({ userId: 'me', q: 'subject:trashed' })).data.resultSizeEstimate).toBe(0);
    expect((await gmail.users.messages.list({ userId: 'me', q: 'subject:trashed', includeSpamTrash: true })).data.resultSizeEstimate).toBe(1);
    expect((await gmail.users.messages.delete({ userId: 'me', id })).status).toBe(204);
    expect((await failure(gmail.users.messages.get({ userId: 'me', id }))).status).toBe(404);
  });
});

describe('users.threads', () => {
  it('lists threads with snippet and historyId, gets a thread in order, and modifies all its messages', async () => {
    const list = await gmail.users.threads.list({ userId: 'me', q: 'from:zoe' });
    const thread = list.data.threads?.[0];
    expect(thread).toMatchObject({ id: expect.any(String), snippet: expect.any(String), historyId: expect.stringMatching(/^\d+$/) });
    const full = await gmail.users.threads.get({ userId: 'me', id: thread?.id ?? '' });
    const messages = full.data.messages ?? [];
    expect(messages.length).toBeGreaterThanOrEqual(2);
    const dates = messages.map((m) => Number(m.internalDate));
    expect([...dates].sort((a, b) => a - b)).toEqual(dates);
    expect(messages.every((m) => m.threadId === thread?.id)).toBe(true);
    const modified = await gmail.users.threads.modify({ userId: 'me', id: thread?.id ?? '', requestBody: { removeLabelIds: ['INBOX'] } });
    expect(modified.data.messages?.every((m) => !m.labelIds?.includes('INBOX'))).toBe(true);
    const metadata = await gmail.users.threads.get({ userId: 'me', id: thread?.id ?? '', format: 'metadata', metadataHeaders: ['Subject'] });
    expect(metadata.data.messages?.[0]?.payload?.headers?.map((h) => h.name)).toEqual(['Subject']);
  });

  it('pages threads without repeating a thread', async () => {
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const { data } = await gmail.users.threads.list({ userId: 'me', maxResults: 1, includeSpamTrash: true, ...(pageToken ? { pageToken } : {}) });
      ids.push(...(data.threads ?? []).map((t) => t.id ?? ''));
      pageToken = data.nextPageToken ?? undefined;
    } while (pageToken);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe((await gmail.users.getProfile({ userId: 'me' })).data.threadsTotal);
  });
});
