// ImapMailbox against the Gmail stand-in (emulators/gmail-imap: Gmail's capability line, folders and
// X-GM items in front of the real Dovecot and Postfix, smtp.gmail.com's filing of sent mail): Gmail
// mode is picked from X-GM-EXT-1, thread ids are X-GM-THRID, labels (ours and Gmail's system ones)
// are read and changed as X-GM-LABELS, a Gmail-syntax search goes out as X-GM-RAW, a send leaves the
// one copy Gmail's SMTP files. What the stand-in follows of Gmail and where it differs: its README.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport } from 'nodemailer';
import type { ImapFlow } from 'imapflow';
import { ImapFlow as ImapClient } from 'imapflow';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { startGmailStandIn, type GmailStandIn } from '../../emulators/gmail-imap/index.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { messageIdOf } from '../../src/imap/mail-ids.js';
import type { MailServerAddress } from '../../src/imap/contracts.js';
import { waitUntil } from '../helpers/wait-until.js';
import { receivedInInbox } from './mail-test-clients.js';

const USER = { address: 'gmail-imap@inbox.test', password: 'gmail-imap-app-password' };
let servers: MailServers;
let gmail: GmailStandIn;
let mailbox: ImapMailbox;
let mailboxSettings: Pick<Parameters<typeof ImapMailbox.open>[0], 'imap' | 'smtp'>;
/** The user's own mail client on the stand-in: what Gmail shows them. */
let client: ImapFlow;
const run = Date.now().toString(36);
const mid = (name: string) => `<${name}.${run}@correspondent.test>`;

beforeAll(async () => {
  servers = await startMailServers({ folders: 'gmail', user: USER });
  gmail = await startGmailStandIn(servers.info, USER);
  const credentials = { user: USER.address, password: USER.password };
  const at = (port: number): MailServerAddress => ({ host: gmail.host, port, tls: 'implicit', ca: gmail.caPem });
  mailboxSettings = { imap: { server: at(gmail.imapPort), credentials }, smtp: { server: at(gmail.smtpPort), credentials } };
  mailbox = await ImapMailbox.open({ address: USER.address, ...mailboxSettings });
  client = new ImapClient({ host: gmail.host, port: gmail.imapPort, secure: true, tls: { ca: [gmail.caPem] }, auth: { user: USER.address, pass: USER.password }, logger: false, disableAutoIdle: true });
  client.on('error', () => {});
  await client.connect();
});

afterAll(async () => {
  await client?.logout().catch(() => {});
  await mailbox?.close();
  await gmail?.close();
  await servers?.stop();
});

/** Mail from the correspondent's server through the MX port, then read through the product once it is in the INBOX. */
async function deliver(mail: { messageId: string; subject: string; references?: string[] }) {
  const transport = createTransport({ host: servers.host, port: servers.smtp.mxPort, secure: false, tls: { ca: servers.caPem }, logger: false });
  const raw = [
    `From: Alice <${servers.correspondent.address}>`,
    `To: ${USER.address}`,
    `Subject: ${mail.subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${mail.messageId}`,
    ...(mail.references ? [`References: ${mail.references.join(' ')}`, `In-Reply-To: ${mail.references.at(-1)}`] : []),
    '',
    `About ${mail.subject}.`,
    '',
  ].join('\r\n');
  try {
    await transport.sendMail({ envelope: { from: servers.correspondent.address, to: [USER.address] }, raw });
  } finally {
    transport.close();
  }
  // In the INBOX first (the virtual All Mail may show it a moment before the product's INBOX search would).
  await waitUntil(`${mail.messageId} in the INBOX`, () => seenByClient('INBOX', mail.messageId));
  return mailbox.getMessage(messageIdOf(mail.messageId));
}

/** X-GM-THRID and X-GM-LABELS of a message as the user's client sees them in `folder`. */
async function seenByClient(folder: string, messageId: string): Promise<{ threadId: string; labels: string[] } | undefined> {
  const lock = await client.getMailboxLock(folder);
  try {
    await client.mailboxOpen(folder);
    const uids = (await client.search({ header: { 'message-id': messageId.replace(/^<|>$/g, '') } }, { uid: true })) || [];
    if (uids.length === 0) return undefined;
    const m = await client.fetchOne(String(uids[0]), { uid: true, threadId: true, labels: true }, { uid: true });
    return m ? { threadId: String(m.threadId), labels: [...(m.labels ?? [])].sort() } : undefined;
  } finally {
    lock.release();
  }
}

describe('Gmail over IMAP, against the stand-in', () => {
  it('picks Gmail mode from X-GM-EXT-1: thread ids from the server, the sent copy filed by the server, All Mail found', () => {
    expect(mailbox.server.gmail).toBe(true);
    expect(mailbox.server.qresync).toBe(false);
    expect(mailbox.capabilities).toMatchObject({ threadIds: 'server', sentCopy: 'server' });
    expect(mailbox.server.folders.all?.path).toBe('[Gmail]/All Mail');
    expect(mailbox.server.folders.sent?.path).toBe('[Gmail]/Sent Mail');
  });

  it('takes a user label named like a usual folder (Archive), which Gmail lists as a folder, for a label: not the archive, not watched', async () => {
    // The user makes the label in Gmail; Gmail's IMAP lists it as a folder without a special-use attribute.
    await client.mailboxCreate('Archive');
    const again = await ImapMailbox.open({ address: USER.address, imap: mailboxSettings.imap, smtp: mailboxSettings.smtp });
    try {
      expect((await client.list()).map((f) => f.path)).toContain('Archive');
      expect(again.server.folders.archive).toBeUndefined();
      expect(again.server.folders.all?.path).toBe('[Gmail]/All Mail');
      expect(again.watchedFolders()).toEqual(['INBOX', '[Gmail]/Sent Mail', '[Gmail]/Drafts', '[Gmail]/Trash']);
    } finally {
      await again.close();
      await client.mailboxDelete('Archive');
    }
  });

  it('gives a thread the id of its X-GM-THRID (in hex), and reads it back through All Mail', async () => {
    const root = mid('thread-root');
    const first = await deliver({ messageId: root, subject: `Gmail thread ${run}` });
    const reply = await deliver({ messageId: mid('thread-reply'), subject: `Re: Gmail thread ${run}`, references: [root] });
    const seen = await seenByClient('INBOX', root);
    expect(first.threadId).toBe(BigInt(seen!.threadId).toString(16));
    expect(reply.threadId).toBe(first.threadId);
    const thread = await mailbox.getThread(first.threadId);
    expect(thread.messages.map((m) => m.id)).toEqual([messageIdOf(root), messageIdOf(mid('thread-reply'))]);
    expect(gmail.imapCommands.some((c) => /SEARCH X-GM-THRID \d+$/.test(c))).toBe(true);
  });

  it('reads and changes labels as X-GM-LABELS: ours by name, IMPORTANT and STARRED as Gmail system labels', async () => {
    const messageId = mid('labels');
    const message = await deliver({ messageId, subject: `Gmail labels ${run}` });
    expect(message.labelIds).toEqual(expect.arrayContaining(['INBOX', 'UNREAD']));
    const before = await mailbox.getCursor();
    const after = await mailbox.modifyMessage(message.id, { add: ['Action Required', 'IMPORTANT', 'STARRED'], remove: ['UNREAD'] });
    expect(after).toEqual(expect.arrayContaining(['INBOX', 'Action Required', 'IMPORTANT', 'STARRED']));
    expect(after).not.toContain('UNREAD');
    expect(gmail.imapCommands.some((c) => /STORE \d+ \+X-GM-LABELS \("Action Required" \\Important\)|STORE \d+ \+X-GM-LABELS \(\\Important "Action Required"\)/.test(c))).toBe(true);
    // The user's client sees Gmail's labels, and no keyword of ours among the flags.
    expect((await seenByClient('INBOX', messageId))?.labels).toEqual(['Action Required', '\\Important', '\\Inbox', '\\Starred'].sort());
    // Our own change is listed (the sync's baseline), then the user takes our label off in Gmail:
    // the product reads it gone, and listChanges reports it.
    const ours = await waitUntil('our label change listed', async () => {
      const p = await mailbox.listChanges({ cursor: before });
      return p.records.some((r) => r.labelsAdded.some((c) => c.message.id === message.id && c.labelIds.includes('Action Required'))) ? p : undefined;
    });
    const cursor = ours.cursor;
    const lock = await client.getMailboxLock('INBOX');
    try {
      const [uid] = (await client.search({ header: { 'message-id': messageId.replace(/^<|>$/g, '') } }, { uid: true })) || [];
      await client.messageFlagsRemove(String(uid), ['Action Required'], { uid: true, useLabels: true });
    } finally {
      lock.release();
    }
    const page = await waitUntil('the label change listed', async () => {
      const p = await mailbox.listChanges({ cursor });
      return p.records.some((r) => r.labelsRemoved.some((c) => c.message.id === message.id && c.labelIds.includes('Action Required'))) ? p : undefined;
    });
    expect(page.records.flatMap((r) => r.messagesDeleted)).toEqual([]);
    expect((await mailbox.getMessage(message.id)).labelIds).not.toContain('Action Required');
  });

  it('sends a Gmail-syntax search as X-GM-RAW and takes what Gmail found', async () => {
    const messageId = mid('search');
    const message = await deliver({ messageId, subject: `Gmail search ${run}` });
    await deliver({ messageId: mid('search-other'), subject: `Gmail other ${run}` });
    const query = `from:${servers.correspondent.address} subject:"Gmail search ${run}"`;
    const found = await mailbox.searchMessages({ query });
    expect(found.messages).toEqual([{ id: message.id, threadId: message.threadId }]);
    expect(gmail.imapCommands.some((c) => c.endsWith(`SEARCH X-GM-RAW ${JSON.stringify(query)}`))).toBe(true);
  });

  it('sends through smtp.gmail.com without APPENDing a copy: the one in Sent Mail is the one Gmail filed, in the thread', async () => {
    const root = mid('send-root');
    const received = await deliver({ messageId: root, subject: `Gmail send ${run}` });
    const subject = `Re: Gmail send ${run}`;
    const raw = [
      `From: ${USER.address}`,
      `To: ${servers.correspondent.address}`,
      `Subject: ${subject}`,
      `In-Reply-To: ${root}`,
      `References: ${root}`,
      '',
      'Thanks.',
      '',
    ].join('\r\n');
    const appendsBefore = gmail.imapCommands.filter((c) => / APPEND /i.test(c)).length;
    const sent = await mailbox.sendMessage(Buffer.from(raw).toString('base64url'), received.threadId);
    expect(gmail.imapCommands.filter((c) => / APPEND /i.test(c)).length).toBe(appendsBefore);
    expect(await mailbox.isSent(sent.id)).toBe(true);
    const copy = await mailbox.getMessage(sent.id);
    expect(copy.labelIds).toContain('SENT');
    expect(copy.threadId).toBe(received.threadId);
    // Sent again (a retry): Gmail's copy is found first, nothing goes out a second time.
    await mailbox.sendMessage(Buffer.from(raw).toString('base64url'), received.threadId);
    await waitUntil('Postfix has delivered everything', async () => (await servers.queuedMessages()) === 0);
    expect(await receivedInInbox(servers, servers.correspondent, { subject, from: USER.address })).toBe(1);
    const lock = await client.getMailboxLock('[Gmail]/Sent Mail');
    try {
      await client.mailboxOpen('[Gmail]/Sent Mail');
      expect(((await client.search({ subject }, { uid: true })) || []).length).toBe(1);
    } finally {
      lock.release();
    }
  });

  it("reads Gmail's Move to Done (the label added and the message archived at once, before the sync looks) as INBOX removed and Done added, not as a deletion", async () => {
    const messageId = mid('move-to-done');
    const message = await deliver({ messageId, subject: `Gmail move to Done ${run}` });
    // The product has read the message (remembered with its labels), and the sync's cursor is now.
    const cursor = await mailbox.getCursor();
    // The user, in Gmail: Move to > Done (the label Done, out of the inbox): STORE +X-GM-LABELS, then MOVE to All Mail.
    const lock = await client.getMailboxLock('INBOX');
    try {
      const [uid] = (await client.search({ header: { 'message-id': messageId.replace(/^<|>$/g, '') } }, { uid: true })) || [];
      await client.messageFlagsAdd(String(uid), ['Done'], { uid: true, useLabels: true });
      await client.messageMove(String(uid), '[Gmail]/All Mail', { uid: true });
    } finally {
      lock.release();
    }
    const expectMovedToDone = (page: Awaited<ReturnType<typeof mailbox.listChanges>>) => {
      expect(page.records.flatMap((r) => r.messagesDeleted)).toEqual([]);
      expect(page.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: message.id }), labelIds: ['INBOX'] })]);
      expect(page.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: message.id }), labelIds: ['Done'] })]);
    };
    expectMovedToDone(await mailbox.listChanges({ cursor }));
    // Read again from the same cursor (its activity failed): the same page.
    expectMovedToDone(await mailbox.listChanges({ cursor }));
  });

  it('archives as Gmail does: out of the INBOX, still in All Mail with its labels but \\Inbox; back by adding \\Inbox', async () => {
    const messageId = mid('archive');
    const message = await deliver({ messageId, subject: `Gmail archive ${run}` });
    await mailbox.modifyMessage(message.id, { add: ['Waiting'] });
    await mailbox.archiveThread(message.threadId);
    expect(await seenByClient('INBOX', messageId)).toBeUndefined();
    expect((await seenByClient('[Gmail]/All Mail', messageId))?.labels).toEqual(['Waiting']);
    const read = await mailbox.getMessage(message.id);
    expect(read.labelIds).toContain('Waiting');
    expect(read.labelIds).not.toContain('INBOX');
    // Back (a snooze's return): \Inbox added in All Mail, the message once in INBOX and once in All Mail.
    await mailbox.moveThreadToInbox(message.threadId);
    expect((await seenByClient('INBOX', messageId))?.labels).toEqual(['Waiting', '\\Inbox'].sort());
    expect(gmail.imapCommands.some((c) => /UID STORE \d+ \+X-GM-LABELS \(\\Inbox\)$/.test(c))).toBe(true);
    const lock = await client.getMailboxLock('[Gmail]/All Mail');
    try {
      await client.mailboxOpen('[Gmail]/All Mail');
      expect(((await client.search({ header: { 'message-id': messageId.replace(/^<|>$/g, '') } }, { uid: true })) || []).length).toBe(1);
    } finally {
      lock.release();
    }
  });
});
