// Folders mode: a server that keeps no keywords (Exchange, Outlook.com). A real Dovecot made to refuse
// them (its ACL plugin without the `w` right: PERMANENTFLAGS without \*) and, as Exchange, to offer no
// CONDSTORE or QRESYNC (imap_capability), so the sync follows changes by UIDNEXT and a flag scan; the
// product's workers, the sync polled. The user asks by moving a message into a folder from their own client (Done,
// Snooze/Tomorrow); the thread sees the same label signal a keyword or a Gmail label gives.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { notifySync } from '../../src/sync/notify.js';
import { WorkflowFailedError } from '@temporalio/client';
import { startBulk, undoBulk } from '../../src/cleanup/bulk.js';
import { loadAction } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import type { MailServers } from '../../mail-servers/index.js';
import { waitUntil } from '../helpers/wait-until.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { startImapWorld, type ImapWorld } from './imap-world.js';
import { imapClient } from './mail-test-clients.js';

const run = randomUUID().slice(0, 8);
// Dovecot's capabilities as Exchange's lack: CONDSTORE and QRESYNC.
const WITHOUT_CONDSTORE = 'IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE NAMESPACE UIDPLUS MOVE LITERAL+ SPECIAL-USE';
let world: ImapWorld<InboxHarness>;
let servers: MailServers;
let h: InboxHarness;
let user: ImapMailbox;

beforeAll(async () => {
  world = await startImapWorld({ keywords: false, imapCapability: WITHOUT_CONDSTORE, user: { address: `folders-${run}@inbox.test`, password: 'user-app-password' } }, async (imap) => {
    const harness = await startInboxHarness({ imap });
    await harness.startWorkers();
    return harness;
  });
  ({ servers, product: h, user } = world);
  await poll();
  await waitUntil('the sync cursor', async () => (await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } })).historyId ?? false);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

const poll = () => notifySync({ client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE }, h.accountId, { source: 'poll' });

async function threadRow(threadId: string, state: string) {
  return waitUntil(`thread ${threadId} ${state}`, async () => {
    await poll();
    const row = await h.prisma.thread.findUnique({ where: { accountId_gmailThreadId: { accountId: h.accountId, gmailThreadId: threadId } } });
    return row?.state === state && row;
  }, { timeoutMs: 45_000 });
}

/** A question from the correspondent, drafted by its thread; resolves with the thread id. */
async function draftedQuestion(subject: string): Promise<string> {
  await deliverFromOutside(servers, {
    from: `Alice <${servers.correspondent.address}>`,
    to: servers.user.address,
    subject,
    text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Alice',
    messageId: `<${randomUUID()}@correspondent.test>`,
  });
  const ref = await waitUntil(`${subject} in the INBOX`, async () => (await user.searchMessages({ subject })).messages[0]);
  await threadRow(ref.threadId, 'drafted');
  return ref.threadId;
}

/** What the user does in any mail client: move the message with this subject from INBOX into a folder (made when missing). */
async function userMoves(subject: string, folder: string): Promise<void> {
  const client = await imapClient(servers, servers.user);
  try {
    if (!(await client.list()).some((f) => f.path === folder)) await client.mailboxCreate(folder);
    const lock = await client.getMailboxLock('INBOX');
    try {
      const uids = (await client.search({ subject }, { uid: true })) || [];
      expect(uids).toHaveLength(1);
      await client.messageMove(uids.join(','), folder, { uid: true });
    } finally {
      lock.release();
    }
  } finally {
    await client.logout();
  }
}

async function countIn(folder: 'INBOX' | 'ARCHIVE', subject: string): Promise<number> {
  return (await user.searchMessages({ subject, in: folder })).messages.length;
}

describe('folders mode on a server without keywords', () => {
  it('connect detects it and makes the request folders; the thread keeps working without our labels on the server', async () => {
    expect(user.server.keywords).toBe(false);
    expect(user.server.condstore).toBe(false);
    expect(user.capabilities.labels).toBe('folders');
    const names = (await user.listLabels()).map((l) => l.name);
    expect(names).toEqual(expect.arrayContaining(['Done', 'Rework']));
    const client = await imapClient(servers, servers.user);
    try {
      const paths = (await client.list()).map((f) => f.path);
      expect(paths).toEqual(expect.arrayContaining(['Done', 'Rework', 'Snooze', 'Remind', 'Send']));
    } finally {
      await client.logout();
    }
  });

  it('insertMessage puts our mail in the inbox unread, without keywords', async () => {
    const subject = `Reminder ${run}`;
    const raw = Buffer.from(`From: ${servers.user.address}\r\nTo: ${servers.user.address}\r\nSubject: ${subject}\r\n\r\nDo the thing.\r\n`).toString('base64url');
    const { id } = await user.insertMessage(raw, ['INBOX', 'UNREAD', 'Action Required']);
    const message = await user.getMessage(id);
    expect(message.labelIds).toEqual(expect.arrayContaining(['INBOX', 'UNREAD']));
    expect(message.labelIds).not.toContain('Action Required');
  });

  it('a message the user moves into Done reaches its thread as Done, and the thread archives it', { timeout: 120_000 }, async () => {
    const subject = `Quarterly numbers ${run}`;
    const threadId = await draftedQuestion(subject);
    await userMoves(subject, 'Done');
    await threadRow(threadId, 'archived');
    // Archived because of Done (the label signal), not as a thread the user archived.
    expect((await h.waitFor(threadId, () => true)).decisions.map((d) => d.detail)).toContain('Done label: archived');
    // Done is emptied into the archive (the move the archive makes); nothing left in INBOX.
    await waitUntil('the message in the archive', async () => (await countIn('ARCHIVE', subject)) === 1);
    expect(await countIn('INBOX', subject)).toBe(0);
    expect((await user.getThreadLabelIds(threadId)).filter((l) => l === 'Done' || l === 'INBOX')).toEqual([]);
  });

  it('a message the user moves into Snooze/Tomorrow snoozes the thread until 08:00 tomorrow; the folder is emptied', { timeout: 120_000 }, async () => {
    const subject = `Snooze by folder ${run}`;
    const threadId = await draftedQuestion(subject);
    const movedAt = new Date();
    await userMoves(subject, 'Snooze/Tomorrow');
    const snoozed = await waitUntil('the snooze set', async () => {
      await poll();
      const status = await h.waitFor(threadId, () => true);
      return (status.wakes ?? []).some((wake) => wake.kind === 'snooze' && wake.by === 'label') && status;
    }, { timeoutMs: 45_000 });
    const tomorrowOf = (day: Date) => Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1, 8);
    expect([tomorrowOf(movedAt), tomorrowOf(new Date())]).toContain(snoozed.wakes!.find((wake) => wake.kind === 'snooze')!.at);
    await waitUntil('out of the inbox and out of Snooze/Tomorrow', async () => {
      const labels = await user.getThreadLabelIds(threadId);
      return !labels.includes('INBOX') && !labels.includes('Snooze/Tomorrow') && (await countIn('ARCHIVE', subject)) === 1;
    });
  });

  it('a bulk label is refused with the reason, before anything is touched: the server keeps no keywords', async () => {
    const handle = await startBulk(h.client, { accountId: h.accountId, selection: { kind: 'sender', value: servers.correspondent.address }, operation: 'label', label: 'Bulk Tag', dryRun: true, batchSize: 1000, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
    const failure = await handle.result().catch((err: Error) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    let cause = failure as Error;
    while (cause.cause instanceof Error) cause = cause.cause;
    expect(cause.message).toBe('this server keeps no keywords (folders mode): the label "Bulk Tag" cannot be kept on its messages');
  });

  it("a bulk trash undone puts each message back where it was, Archive or INBOX: the journal remembers (no keyword to mark it)", async () => {
    const shop = `orders@shop-${run}.example`;
    for (let i = 0; i < 3; i++) {
      await deliverFromOutside(servers, { from: `Shop <${shop}>`, to: servers.user.address, subject: `Order ${i} ${run}`, text: 'Your order has shipped.', messageId: `<order-${i}-${run}@shop.example>` });
    }
    await waitUntil('the three orders in the INBOX', async () => (await user.searchMessages({ from: shop })).messages.length === 3);
    await userMoves(`Order 1 ${run}`, 'Archive');
    const where = async () => Promise.all([0, 1, 2].map(async (i) => [await countIn('INBOX', `Order ${i} ${run}`), await countIn('ARCHIVE', `Order ${i} ${run}`)]));
    const before = await where();
    expect(before).toEqual([[1, 0], [0, 1], [1, 0]]);

    const handle = await startBulk(h.client, { accountId: h.accountId, selection: { kind: 'sender', value: shop }, operation: 'trash', dryRun: false, batchSize: 1000, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
    const done = await handle.result();
    expect(done).toMatchObject({ state: 'done', messages: 3, batches: 1 });
    expect(await where()).toEqual([[0, 0], [0, 0], [0, 0]]);
    expect((await user.searchMessages({ from: shop, in: 'TRASH' })).messages).toHaveLength(3);
    const batch = (await loadAction(prismaExecutor(h.prisma), done.actionIds[0]!))!;
    const archived = (await user.searchMessages({ subject: `Order 1 ${run}`, in: 'TRASH' })).messages.map((m) => m.id);
    expect(batch.result).toMatchObject({ notInInbox: archived });

    const undone = await undoBulk({ client: h.client, db: prismaExecutor(h.prisma), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true]);
    expect(await where()).toEqual(before);
    expect((await user.searchMessages({ from: shop, in: 'TRASH' })).messages).toHaveLength(0);
  });
});
