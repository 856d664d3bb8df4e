// ImapMailbox against the real Dovecot and Postfix of mail-servers: mail in through the
// MX, read as ThreadMessages with thread ids from the References chain; labels as keywords and the
// changes they make; drafts; an idempotent send; archive/trash/back; a reset folder; a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport } from 'nodemailer';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { outsideMta } from '../../mail-servers/deliver.js';
import { waitUntil } from '../helpers/wait-until.js';
import { ImapMailbox, type ImapChangePage } from '../../src/imap/imap-mailbox.js';
import { labelToKeyword, messageIdOf, threadIdOf } from '../../src/imap/mail-ids.js';
import { MailboxResetError } from '../../src/imap/mailbox-errors.js';
import { MailServerError } from '../../src/imap/errors.js';
import { imapAddress, imapClient, receivedInInbox, submissionAddress } from './mail-test-clients.js';

let servers: MailServers;
let mailbox: ImapMailbox;
const run = Date.now().toString(36);
const mid = (name: string) => `<${name}.${run}@correspondent.test>`;
/** A mailbox at an internationalised domain (exämple.test), in its ASCII form as mail systems route it. */
const ANNA = { address: 'anna@xn--exmple-cua.test', password: 'anna-password' };

beforeAll(async () => {
  servers = await startMailServers({ others: [ANNA] });
  const credentials = { user: servers.user.address, password: servers.user.password };
  mailbox = await ImapMailbox.open({
    address: servers.user.address,
    imap: { server: imapAddress(servers), credentials },
    smtp: { server: submissionAddress(servers), credentials },
  });
});

afterAll(async () => {
  await mailbox?.close();
  await servers?.stop();
});

/** A message from the correspondent's server to the user, through the MX port (no login). */
async function deliver(mail: { messageId?: string; subject: string; text: string; references?: string[]; inReplyTo?: string }) {
  const transport = createTransport({ host: servers.host, port: servers.smtp.mxPort, secure: false, tls: { ca: servers.caPem }, logger: false });
  const lines = [
    `From: Alice <${servers.correspondent.address}>`,
    `To: ${servers.user.address}`,
    `Subject: ${mail.subject}`,
    `Date: ${new Date().toUTCString()}`,
    ...(mail.messageId ? [`Message-ID: ${mail.messageId}`] : []),
    ...(mail.inReplyTo ? [`In-Reply-To: ${mail.inReplyTo}`] : []),
    ...(mail.references ? [`References: ${mail.references.join(' ')}`] : []),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    mail.text,
    '',
  ];
  try {
    await transport.sendMail({ envelope: { from: servers.correspondent.address, to: [servers.user.address] }, raw: lines.join('\r\n') });
  } finally {
    transport.close();
  }
}

const arrived = (messageId: string) =>
  waitUntil(`${messageId} in INBOX`, async () => {
    try {
      return await mailbox.getMessage(messageIdOf(messageId));
    } catch {
      return undefined;
    }
  });

const threadOf = (root: string) => threadIdOf({ messageId: root, references: [], inReplyTo: '' }, new Uint8Array());

/** listChanges until `accept` finds what it waits for; the cursor advances with each page. */
async function changesUntil(cursor: string, what: string, accept: (page: ImapChangePage) => boolean): Promise<{ page: ImapChangePage; pages: ImapChangePage[] }> {
  const pages: ImapChangePage[] = [];
  let at = cursor;
  const page = await waitUntil(what, async () => {
    const p = await mailbox.listChanges({ cursor: at });
    pages.push(p);
    at = p.cursor;
    return pages.some(accept) ? p : undefined;
  });
  return { page, pages };
}

describe('ImapMailbox', () => {
  it('declares what the product reads instead of asking for the provider: keywords, computed thread ids, IDLE, Sent appended', () => {
    // Dovecot as the tests run it: PERMANENTFLAGS \*, IDLE, no X-GM extensions.
    expect(mailbox.capabilities).toEqual({ provider: 'imap', labels: 'keywords', threadIds: 'computed', changes: 'idle', sentCopy: 'appended', query: 'read' });
  });

  it('reads mail from the correspondent as a ThreadMessage', async () => {
    await deliver({ messageId: mid('hello'), subject: 'Grüße from Alice', text: 'Can we meet on Tuesday?' });
    const message = await arrived(mid('hello'));
    expect(message).toMatchObject({
      id: messageIdOf(mid('hello')),
      threadId: threadOf(mid('hello')),
      messageId: mid('hello'),
      from: { name: 'Alice', address: servers.correspondent.address },
      to: [{ address: servers.user.address }],
      subject: 'Grüße from Alice',
      bodySource: 'text/plain',
      isFromUser: false,
      isDraft: false,
    });
    expect(message.body.trim()).toBe('Can we meet on Tuesday?');
    expect(message.labelIds).toEqual(expect.arrayContaining(['INBOX', 'UNREAD']));
    expect(message.internalDate).toBeGreaterThan(0);
    expect(Number(message.historyId)).toBeGreaterThan(0);
    const listed = await mailbox.searchMessages({ from: servers.correspondent.address, subject: 'from Alice' });
    expect(listed.messages).toContainEqual({ id: message.id, threadId: message.threadId });
  });

  it("runs the agent's Gmail-syntax search with what IMAP can say: from:, subject:, words, newer_than:, is:unread", async () => {
    await deliver({ messageId: mid('invoice'), subject: `Invoice ${run} for October`, text: 'Please find the amount due attached.' });
    await deliver({ messageId: mid('lunch'), subject: `Lunch ${run}`, text: 'Tacos on Friday?' });
    await arrived(mid('invoice'));
    await arrived(mid('lunch'));
    const ids = async (query: string) => (await mailbox.searchMessages({ query })).messages.map((m) => m.id);
    expect(await ids(`from:${servers.correspondent.address} subject:"Invoice ${run}"`)).toEqual([messageIdOf(mid('invoice'))]);
    expect(await ids(`${run} tacos newer_than:1d is:unread`)).toEqual([messageIdOf(mid('lunch'))]);
    expect(await ids(`subject:${run} older_than:1d`)).toEqual([]);
    expect(await ids(`from:nobody@nowhere.test subject:${run}`)).toEqual([]);
  });

  it('sees mail that arrived while its folder was already selected, at the first look', async () => {
    // Dovecot answers a command in a selected folder from that session's view as of its last
    // command: mail delivered since is not in it until something (NOOP) brings the view up to date.
    const cursor = await mailbox.getCursor();
    await mailbox.searchMessages({ subject: 'anything' }); // INBOX now selected in the mailbox's session
    const other = await imapClient(servers, servers.user);
    const inOtherSession = async (messageId: string) => {
      await other.mailboxOpen('INBOX'); // a fresh SELECT: its view holds everything delivered
      return ((await other.search({ header: { 'message-id': messageId.slice(1, -1) } }, { uid: true })) || []).length > 0;
    };
    try {
      await deliver({ messageId: mid('while-selected'), subject: 'While selected', text: 'Delivered while INBOX is selected.' });
      await waitUntil('the message in the INBOX', () => inOtherSession(mid('while-selected')));
      // One read, no retry: the product reads a message the sync reported once.
      expect((await mailbox.getMessage(messageIdOf(mid('while-selected')))).subject).toBe('While selected');
      // The same for listChanges, INBOX still selected after that read.
      await deliver({ messageId: mid('while-selected-2'), subject: 'While selected again', text: 'And another.' });
      await waitUntil('the second message in the INBOX', () => inOtherSession(mid('while-selected-2')));
      const page = await mailbox.listChanges({ cursor });
      expect(page.records.flatMap((r) => r.messagesAdded).map((a) => a.id)).toEqual(
        expect.arrayContaining([messageIdOf(mid('while-selected')), messageIdOf(mid('while-selected-2'))]),
      );
    } finally {
      await other.logout();
    }
  });

  it('gives a reply chain one thread id, also when a reply arrives before its parent', async () => {
    const [root, second, third] = [mid('root'), mid('second'), mid('third')];
    // The third message comes first: its References name the root, which is all its thread id needs.
    await deliver({ messageId: third, subject: 'Re: plan', text: 'third', inReplyTo: second, references: [root, second] });
    const early = await arrived(third);
    expect(early.threadId).toBe(threadOf(root));
    await deliver({ messageId: root, subject: 'plan', text: 'first' });
    await deliver({ messageId: second, subject: 'Re: plan', text: 'second', inReplyTo: root });
    await arrived(second);
    const thread = await mailbox.getThread(threadOf(root));
    expect(thread.messages.map((m) => m.messageId).sort()).toEqual([root, second, third].sort());
    expect(new Set(thread.messages.map((m) => m.threadId))).toEqual(new Set([threadOf(root)]));
    // No Message-ID at all (Postfix would add one, so another client stores it): a thread of its own,
    // the same id every time it is read.
    const other = await imapClient(servers, servers.user);
    try {
      await other.append('INBOX', `From: ${servers.correspondent.address}\r\nSubject: anonymous\r\n\r\nno id here\r\n`);
    } finally {
      await other.logout();
    }
    const found = await waitUntil('the message without Message-ID', async () => (await mailbox.searchMessages({ subject: 'anonymous' })).messages[0]);
    expect(found.threadId).toMatch(/^h/);
    expect((await mailbox.getMessage(found.id)).threadId).toBe(found.threadId);
  });

  it('shows our label as a keyword in listChanges, and a keyword another client set as a label added', async () => {
    const id = messageIdOf(mid('hello'));
    await mailbox.getMessage(id);
    const cursor = await mailbox.getCursor();
    expect(await mailbox.modifyMessage(id, { add: ['Action Required', 'Snooze/2026-12-01'] })).toEqual(
      expect.arrayContaining(['Action Required', 'Snooze/2026-12-01']),
    );
    const added = await mailbox.listChanges({ cursor });
    const inbox = added.records.find((r) => r.labelsAdded.length > 0);
    expect(inbox?.labelsAdded).toEqual([expect.objectContaining({ message: expect.objectContaining({ id }), labelIds: ['Action Required', 'Snooze/2026-12-01'] })]);
    expect(added.cursor).not.toBe(cursor);
    // Nothing changed since: an empty page, the same cursor.
    const quiet = await mailbox.listChanges({ cursor: added.cursor });
    expect(quiet.records).toEqual([]);

    await mailbox.modifyMessage(id, { remove: ['Action Required'], add: ['UNREAD'] });
    const removed = await mailbox.listChanges({ cursor: quiet.cursor });
    expect(removed.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ labelIds: ['Action Required'] })]);

    // The user, in their own mail app, tags the message "Done".
    const other = await imapClient(servers, servers.user);
    try {
      const lock = await other.getMailboxLock('INBOX');
      try {
        const uids = (await other.search({ header: { 'message-id': mid('hello').slice(1, -1) } }, { uid: true })) || [];
        await other.messageFlagsAdd(uids.join(','), [labelToKeyword('Done'), '\\Seen'], { uid: true });
      } finally {
        lock.release();
      }
    } finally {
      await other.logout();
    }
    const done = await mailbox.listChanges({ cursor: removed.cursor });
    expect(done.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ labelIds: ['Done'] })]);
    expect(done.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ labelIds: ['UNREAD'] })]);
    // Read again from the same cursor (the sync's activity failed after the listing, its cursor never
    // saved): the memory is ahead of that cursor, and the page still says Done added.
    const again = await mailbox.listChanges({ cursor: removed.cursor });
    expect(again.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ labelIds: ['Done'] })]);
    expect(again.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ labelIds: ['UNREAD'] })]);

    // New mail is a message added, with its labels.
    await deliver({ messageId: mid('later'), subject: 'later', text: 'one more' });
    const { pages } = await changesUntil(done.cursor, 'the new message in listChanges', (p) =>
      p.records.some((r) => r.messagesAdded.some((m) => m.id === messageIdOf(mid('later')))),
    );
    const addedRecord = pages.flatMap((p) => p.records).flatMap((r) => r.messagesAdded).find((m) => m.id === messageIdOf(mid('later')));
    expect(addedRecord).toMatchObject({ threadId: threadOf(mid('later')), labelIds: expect.arrayContaining(['INBOX', 'UNREAD']) });
  });

  it('appends, replaces, reads, lists and deletes a draft; the deletion is named by the draft id, also when its page is read again', async () => {
    const threadId = threadOf(mid('hello'));
    const before = await mailbox.getCursor();
    const raw = (body: string) =>
      Buffer.from(
        [`From: ${servers.user.address}`, `To: ${servers.correspondent.address}`, 'Subject: Re: Grüße from Alice', `In-Reply-To: ${mid('hello')}`, `References: ${mid('hello')}`, 'Content-Type: text/plain; charset=utf-8', '', body, ''].join('\r\n'),
      ).toString('base64url');
    const created = await mailbox.createDraft({ threadId, raw: raw('Tuesday works.') });
    expect(created.threadId).toBe(threadId);
    expect((await mailbox.getDraft(created.draftId))?.body.trim()).toBe('Tuesday works.');
    const updated = await mailbox.updateDraft(created.draftId, { threadId, raw: raw('Tuesday at ten works.') });
    expect(updated.draftId).toBe(created.draftId);
    const read = await mailbox.getDraft(created.draftId);
    expect(read?.body.trim()).toBe('Tuesday at ten works.');
    expect(read?.message.labelIds).toEqual(expect.arrayContaining(['DRAFT']));
    expect(read?.message.isDraft).toBe(true);
    expect(await mailbox.listDraftsForThread(threadId)).toEqual([{ draftId: created.draftId, messageId: created.draftId, threadId }]);
    const listed = await mailbox.listChanges({ cursor: before });
    expect(await mailbox.deleteDraft(created.draftId)).toBe(true);
    const deletedIds = (page: ImapChangePage) => page.records.flatMap((r) => r.messagesDeleted.map((m) => m.id));
    const deleted = await mailbox.listChanges({ cursor: listed.cursor });
    expect(deletedIds(deleted)).toEqual([created.draftId]);
    // The sync's activity failed after that page, its cursor not saved: the page again names the draft, not a location.
    expect(deletedIds(await mailbox.listChanges({ cursor: listed.cursor }))).toEqual([created.draftId]);
    expect(deletedIds(await mailbox.listChanges({ cursor: deleted.cursor }))).toEqual([]);
    expect(await mailbox.deleteDraft(created.draftId)).toBe(false);
    expect(await mailbox.getDraft(created.draftId)).toBeNull();
    expect(await mailbox.listDraftsForThread(threadId)).toEqual([]);
  });

  it('sends once, even when send is called twice with the same Message-ID, and files a copy in Sent', async () => {
    const sentId = `<sent.${run}@inbox.test>`;
    const raw = Buffer.from(
      [`From: ${servers.user.address}`, `To: ${servers.correspondent.address}`, 'Subject: Re: plan', `Message-ID: ${sentId}`, `In-Reply-To: ${mid('root')}`, `References: ${mid('root')}`, '', 'Agreed.', ''].join('\r\n'),
    ).toString('base64url');
    const first = await mailbox.sendMessage(raw);
    const second = await mailbox.sendMessage(raw);
    expect(second).toEqual(first);
    expect(first).toEqual({ id: messageIdOf(sentId), threadId: threadOf(mid('root')) });
    expect(await mailbox.isSent(first.id)).toBe(true);
    // A marker sent after both: once it is in Alice's INBOX, a second copy would be too.
    const marker = `<marker.${run}@inbox.test>`;
    await mailbox.sendMessage(Buffer.from([`From: ${servers.user.address}`, `To: ${servers.correspondent.address}`, 'Subject: marker', `Message-ID: ${marker}`, '', '.', ''].join('\r\n')).toString('base64url'));
    const alice = await imapClient(servers, servers.correspondent);
    try {
      await alice.mailboxOpen('INBOX');
      await waitUntil('the marker in the correspondent INBOX', async () => ((await alice.search({ header: { 'message-id': marker.slice(1, -1) } }, { uid: true })) || []).length > 0);
      const copies = (await alice.search({ header: { 'message-id': sentId.slice(1, -1) } }, { uid: true })) || [];
      expect(copies).toHaveLength(1);
    } finally {
      await alice.logout();
    }
    const thread = await mailbox.getThread(threadOf(mid('root')));
    expect(thread.messages.find((m) => m.messageId === sentId)?.labelIds).toEqual(expect.arrayContaining(['SENT']));
    expect(thread.messages.find((m) => m.messageId === sentId)?.isFromUser).toBe(true);
  });

  it('submits to the recipients the reader reads: an 8-bit address as UTF-8, a second To header not at all', async () => {
    // What a send is judged by (the reader's To and Cc) is what its envelope holds: the raw headers
    // are not read a second time, another way (as Latin-1 bytes, every To header).
    const subject = `Envelope ${run}`;
    const raw = [
      `From: ${servers.user.address}`,
      'To: Anna <anna@exämple.test>',
      `To: ${servers.correspondent.address}`,
      `Subject: ${subject}`,
      `Message-ID: ${mid('envelope')}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello.',
      '',
    ].join('\r\n');
    await mailbox.sendMessage(Buffer.from(raw, 'utf8').toString('base64url'));
    await waitUntil('anna to receive it', async () => (await receivedInInbox(servers, ANNA, { subject, from: servers.user.address })) === 1);
    await waitUntil('Postfix to hold nothing', async () => (await servers.queuedMessages()) === 0);
    expect(await receivedInInbox(servers, servers.correspondent, { subject, from: servers.user.address })).toBe(0);
  });

  it('finds mail by address as the reader reads From, To and Cc: not by substrings or display names', async () => {
    const subject = `By address ${run}`;
    const alice = servers.correspondent.address; // alice@correspondent.test
    const cases: Array<[string, string, string]> = [
      ['real', `Alice <${alice}>`, servers.user.address],
      ['display-name', `"${alice}" <mallory@evil.example>`, servers.user.address],
      ['longer-address', `Malice <m${alice}>`, servers.user.address],
      ['longer-domain', `Alice <${alice}.evil.example>`, servers.user.address],
      ['subdomain', `Bob <bob@mail.correspondent.test>`, servers.user.address],
      ['to-display-name', `Alice <${alice}>`, `"${servers.user.address}" <nobody@elsewhere.test>`],
    ];
    const mta = outsideMta(servers);
    try {
      for (const [name, from, to] of cases) {
        const raw = [`From: ${from}`, `To: ${to}`, `Subject: ${subject} ${name}`, `Message-ID: ${mid(`by-address-${name}`)}`, '', 'Hi.', ''].join('\r\n');
        await mta.deliver({ envelope: { from: 'someone@outside.test', to: [servers.user.address] }, raw: Buffer.from(raw) });
      }
    } finally {
      mta.close();
    }
    for (const [name] of cases) await arrived(mid(`by-address-${name}`));
    const found = async (search: Parameters<ImapMailbox['searchMessages']>[0]) => {
      const list = await mailbox.searchMessages({ ...search, subject });
      return (await Promise.all(list.messages.map(async (m) => (await mailbox.getMessage(m.id)).subject.replace(`${subject} `, '')))).sort();
    };
    expect(await found({ from: alice })).toEqual(['real', 'to-display-name']);
    expect(await found({ from: alice.toUpperCase() })).toEqual(['real', 'to-display-name']);
    expect(await found({ fromDomain: 'correspondent.test' })).toEqual(['longer-address', 'real', 'to-display-name']);
    expect(await found({ to: servers.user.address })).toEqual(['display-name', 'longer-address', 'longer-domain', 'real', 'subdomain']);
  });

  it('pages a search: a small maxResults over INBOX and Archive gives pages that hold every match once, newest first, then no token', async () => {
    const subject = `Paged ${run}`;
    const base = Date.UTC(2026, 0, 10);
    // Seven matches over two folders, their dates interleaved (the merge across folders is by INTERNALDATE).
    const mail = [0, 1, 2, 3, 4, 5, 6].map((n) => ({ n, folder: n % 3 === 0 ? 'Archive' : 'INBOX', messageId: mid(`paged-${n}`) }));
    const other = await imapClient(servers, servers.user);
    try {
      for (const m of mail) {
        const raw = [`From: ${servers.correspondent.address}`, `To: ${servers.user.address}`, `Subject: ${subject} ${m.n}`, `Message-ID: ${m.messageId}`, '', 'Hi.', ''].join('\r\n');
        await other.append(m.folder, raw, ['\\Seen'], new Date(base + m.n * 3600_000));
      }
    } finally {
      await other.logout();
    }
    const pages: string[][] = [];
    let pageToken: string | undefined;
    do {
      const page = await mailbox.searchMessages({ subject, in: 'ALL', maxResults: 3, ...(pageToken ? { pageToken } : {}) });
      pages.push(page.messages.map((m) => m.id));
      pageToken = page.nextPageToken;
    } while (pageToken && pages.length < 10);
    const newestFirst = [...mail].reverse().map((m) => messageIdOf(m.messageId));
    expect(pages).toEqual([newestFirst.slice(0, 3), newestFirst.slice(3, 6), newestFirst.slice(6)]);
    // One folder alone pages by its UIDs; a page that ends exactly at the last match says so (no token).
    const inbox = await mailbox.searchMessages({ subject, in: 'INBOX', maxResults: 4 });
    expect(inbox.messages.map((m) => m.id)).toEqual(newestFirst.filter((id) => mail.find((m) => messageIdOf(m.messageId) === id)!.folder === 'INBOX'));
    expect(inbox.nextPageToken).toBeUndefined();
    await expect(mailbox.searchMessages({ subject, pageToken: 'not-ours' })).rejects.toThrow(/page token/);
  });

  it('archives, trashes and brings a thread back to the inbox', async () => {
    const threadId = threadOf(mid('root'));
    const cursor = await mailbox.getCursor();
    await mailbox.archiveThread(threadId);
    const archived = await mailbox.getThread(threadId);
    for (const m of archived.messages) expect(m.labelIds).not.toContain('INBOX');
    expect(archived.messages.find((m) => m.messageId === `<sent.${run}@inbox.test>`)?.labelIds).toContain('SENT');
    // The move is INBOX removed, as on Gmail, not a deletion.
    const page = await mailbox.listChanges({ cursor });
    const removed = page.records.flatMap((r) => r.labelsRemoved).filter((c) => c.labelIds.includes('INBOX'));
    expect(removed.map((c) => c.message.id).sort()).toEqual([mid('root'), mid('second'), mid('third')].map(messageIdOf).sort());
    expect(page.records.flatMap((r) => r.messagesDeleted)).toEqual([]);

    await mailbox.trashThread(threadId);
    for (const m of (await mailbox.getThread(threadId)).messages) expect(m.labelIds).toContain('TRASH');
    await mailbox.moveThreadToInbox(threadId);
    const back = await mailbox.getThread(threadId);
    expect(back.messages.filter((m) => m.labelIds.includes('INBOX')).map((m) => m.messageId).sort()).toEqual([mid('root'), mid('second'), mid('third')].sort());
    expect(back.messages.find((m) => m.messageId === `<sent.${run}@inbox.test>`)?.labelIds).toContain('SENT');
    for (const m of back.messages) expect(m.labelIds).not.toContain('TRASH');
  });

  it('tells a keyword the user set with a move out of the INBOX (Done, then archived, before the sync looked): INBOX removed and Done added', async () => {
    const messageId = mid('done-and-archived');
    await deliver({ messageId, subject: `Done and archived ${run}`, text: 'Thanks!' });
    const message = await arrived(messageId);
    const cursor = await mailbox.getCursor();
    const other = await imapClient(servers, servers.user);
    try {
      await other.mailboxOpen('INBOX');
      const [uid] = (await other.search({ header: { 'message-id': messageId.replace(/^<|>$/g, '') } }, { uid: true })) || [];
      await other.messageFlagsAdd(String(uid), ['$DI_Done'], { uid: true });
      await other.messageMove(String(uid), 'Archive', { uid: true });
    } finally {
      await other.logout();
    }
    const page = await mailbox.listChanges({ cursor });
    expect(page.records.flatMap((r) => r.messagesDeleted)).toEqual([]);
    expect(page.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: message.id }), labelIds: ['INBOX'] })]);
    expect(page.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: message.id }), labelIds: ['Done'] })]);
  });

  it('reports a folder whose UIDVALIDITY changed as a rescan; a search page token of the old folder reads the new one from its newest', async () => {
    const cursor = await mailbox.getCursor();
    const subject = `Reset ${run}`;
    const raw = (n: number) => [`From: ${servers.correspondent.address}`, `To: ${servers.user.address}`, `Subject: ${subject} ${n}`, `Message-ID: ${mid(`reset-${n}`)}`, '', 'Hi.', ''].join('\r\n');
    const other = await imapClient(servers, servers.user);
    let token: string | undefined;
    try {
      await other.append('Archive', raw(0), ['\\Seen'], new Date(Date.UTC(2026, 0, 1, 0)));
      const newest = (await other.append('Archive', raw(1), ['\\Seen'], new Date(Date.UTC(2026, 0, 1, 1)))) as { uid: number };
      token = (await mailbox.searchMessages({ subject, in: 'ARCHIVE', maxResults: 1 })).nextPageToken;
      expect(token).toBeDefined();
      await other.mailboxDelete('Archive');
      await other.mailboxCreate('Archive');
      // Other mail first, so the new folder's matches have UIDs above the one the token goes on below.
      for (let n = 0; n < newest.uid; n++) await other.append('Archive', `Subject: other ${n}\r\n\r\nx\r\n`, ['\\Seen']);
      for (const n of [2, 3]) await other.append('Archive', raw(n), ['\\Seen'], new Date(Date.UTC(2026, 0, 1, n)));
    } finally {
      await other.logout();
    }
    // The token's UID would skip the new folder's messages (their UIDs start again at 1): it restarts at the newest instead.
    const restarted = await mailbox.searchMessages({ subject, in: 'ARCHIVE', maxResults: 5, ...(token ? { pageToken: token } : {}) });
    expect(restarted.messages.map((m) => m.id)).toEqual([mid('reset-3'), mid('reset-2')].map(messageIdOf));
    expect(restarted.nextPageToken).toBeUndefined();
    const err = await mailbox.listChanges({ cursor }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MailboxResetError);
    expect((err as MailboxResetError).folder).toBe('Archive');
    // A fresh cursor works again.
    await expect(mailbox.listChanges({ cursor: await mailbox.getCursor() })).resolves.toMatchObject({ records: [] });
  });

  it('reconnects after a Dovecot restart (or fails retryably, then reconnects)', async () => {
    await servers.restartDovecot();
    const first = await mailbox.getCursor().then(
      (cursor) => ({ cursor }),
      (err: unknown) => ({ err }),
    );
    if ('err' in first) {
      expect(first.err).toBeInstanceOf(MailServerError);
      expect((first.err as MailServerError).retryable).toBe(true);
      expect((first.err as MailServerError).message).not.toMatch(/\r|\n/);
    }
    const message = await mailbox.getMessage(messageIdOf(mid('hello')));
    expect(message.subject).toBe('Grüße from Alice');
  });
});
