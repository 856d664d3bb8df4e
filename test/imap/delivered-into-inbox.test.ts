// What the product puts into the user's own inbox without sending it (reminders, scheduled reports,
// the backfill's alerts, the weekly lessons e-mail), on an IMAP account: APPENDed to the real
// Dovecot's INBOX, unread, with our label as a keyword, one thread per reminder, and at most once
// (the Message-ID is the key a retry looks for). The reminder runs through the real workflow, the
// dev server, Postgres and the product's workers.
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailServers } from '../../mail-servers/index.js';
import { imapMailboxSettings, type ImapServers } from '../../src/accounts/imap-accounts.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { buildPlainTextMessage, toRaw } from '../../src/gmail/mime.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { insertOnce } from '../../src/mail/insert-once.js';
import { reminderWorkflowId } from '../../src/reminders/contracts.js';
import { listOccurrences } from '../../src/reminders/reminder-store.js';
import { addReminder, changeReminderState } from '../../src/reminders/reminders.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { startImapWorld, type ImapWorld } from './imap-world.js';

const run = randomUUID().slice(0, 8);
let world: ImapWorld<InboxHarness>;
let servers: MailServers;
let h: InboxHarness;
/** The user's own client on the mailbox: what they see. */
let user: ImapMailbox;
let account: ImapServers;

beforeAll(async () => {
  world = await startImapWorld({ user: { address: `user-${run}@inbox.test`, password: 'user-app-password' } }, async (imap) => {
    const harness = await startInboxHarness({ env: { LABEL_REMINDERS: 'Reminders' }, imap });
    await harness.startWorkers({ llm: false });
    return harness;
  });
  ({ servers, account, user, product: h } = world);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

async function inInbox(subject: string) {
  const { messages } = await user.searchMessages({ subject, maxResults: 50 });
  return Promise.all(messages.map((m) => user.getMessage(m.id)));
}

describe('mail of ours put into an IMAP inbox', () => {
  it('a reminder: each occurrence once, unread, labelled, in one thread', { timeout: 90_000 }, async () => {
    const title = `Water the plants ${run}`;
    const deps = { db: prismaExecutor(h.prisma), client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE, catchUpWindowMs: 60_000 };
    const at = DateTime.utc().plus({ seconds: 3 }).toFormat('HH:mm:ss');
    const reminder = await addReminder(deps, { accountId: h.accountId, title, spec: { at, rrule: 'FREQ=SECONDLY;INTERVAL=3' }, accountZone: 'UTC' });
    await waitUntil('two occurrences sent', async () => (await listOccurrences(deps.db, reminder.id, 10)).filter((o) => o.state === 'sent').length >= 2, { timeoutMs: 60_000 });
    expect(await changeReminderState(deps, reminder.id, 'removed')).toBe(true);
    await h.client.workflow.getHandle(reminderWorkflowId(reminder.id)).result();

    const rows = (await listOccurrences(deps.db, reminder.id, 10)).filter((o) => o.state === 'sent');
    const mail = await inInbox(`Reminder: ${title}`);
    expect(mail).toHaveLength(rows.length);
    expect(new Set(mail.map((m) => m.id))).toEqual(new Set(rows.map((o) => o.emailMessageId)));
    expect(new Set(mail.map((m) => m.threadId)).size).toBe(1);
    for (const m of mail) expect(m.labelIds).toEqual(expect.arrayContaining(['INBOX', 'UNREAD', 'Reminders']));
  });

  it('at most once: a retry that finds the Message-ID (anywhere, the trash too) puts nothing there again', async () => {
    const messageId = `<alert.${run}@durable-inbox.local>`;
    const subject = `Backfill alert ${run}`;
    const raw = toRaw(buildPlainTextMessage({ from: { address: servers.user.address }, to: [{ address: servers.user.address }], subject, body: 'The import paused.', date: new Date(), messageId }));
    // The worker that puts it there has a connection of its own, and dies before journaling it.
    const dying = await ImapMailbox.open(imapMailboxSettings(servers.user.address, account, { password: servers.user.password }));
    const first = await insertOnce(dying, messageId, () => dying.insertMessage(raw, ['INBOX', 'UNREAD']));
    await dying.close();
    expect(first.inserted).toBe(true);
    expect((await inInbox(subject)).map((m) => m.id)).toEqual([first.id]);
    // The user throws it away; the retry, on another connection, looks everywhere.
    await user.trashThread(first.threadId);
    const again = await insertOnce(user, messageId, () => user.insertMessage(raw, ['INBOX', 'UNREAD']));
    expect(again).toEqual({ id: first.id, threadId: first.threadId, inserted: false });
    expect(await inInbox(subject)).toHaveLength(0);
    expect((await user.searchMessages({ messageId, in: 'ANYWHERE' })).messages.map((m) => m.id)).toEqual([first.id]);
  });

  it('a Message-ID that is not one matches nothing, rather than becoming search syntax', async () => {
    expect((await user.searchMessages({ messageId: 'x" OR ALL', in: 'ANYWHERE' })).messages).toEqual([]);
  });
});
