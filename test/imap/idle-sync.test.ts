// IMAP's push: the workflow worker IDLEs on the account's INBOX (src/sync/imap-watch.ts) and wakes the
// sync, so new mail reaches its thread with no poll at all; after a Dovecot restart and after the
// server kicks the connection, the watcher connects again and mail keeps arriving, each message
// handled once. Real Dovecot and Postfix, dev server, PostgreSQL, the product's workers.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImapServers } from '../../src/accounts/imap-accounts.js';
import { imapMailboxSettings } from '../../src/accounts/imap-accounts.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { notifySync } from '../../src/sync/notify.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { startMailServers, type MailServers } from '../helpers/mail-servers/index.js';
import { waitUntil } from '../helpers/wait-until.js';
import { deliverFromOutside, imapAddress, submissionAddress } from './mail-test-clients.js';

const run = randomUUID().slice(0, 8);
let servers: MailServers;
let h: InboxHarness;
let user: ImapMailbox;

beforeAll(async () => {
  servers = await startMailServers({ user: { address: `idle-${run}@inbox.test`, password: 'user-app-password' } });
  const account: ImapServers = {
    imap: { server: imapAddress(servers), user: servers.user.address },
    smtp: { server: submissionAddress(servers), user: servers.user.address },
  };
  h = await startInboxHarness({ imap: { address: servers.user.address, password: servers.user.password, servers: account } });
  user = await ImapMailbox.open(imapMailboxSettings(servers.user.address, account, { password: servers.user.password }));
  // As connecting does: the cursor is the mailbox's now (the only poll of this file).
  await notifySync({ client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE }, h.accountId, { source: 'connect' });
  await h.startWorkers();
  await waitUntil('the sync cursor', async () => (await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } })).historyId ?? false);
}, 120_000);

afterAll(async () => {
  await user?.close();
  await h?.close();
  await servers?.stop();
});

/** Mail from the correspondent; resolves with its thread once the thread's workflow has drafted a reply. */
async function mailReachesItsThread(subject: string) {
  await deliverFromOutside(servers, {
    from: `Alice <${servers.correspondent.address}>`,
    to: servers.user.address,
    subject,
    text: 'Could you send me the numbers by Friday?',
    messageId: `<${randomUUID()}@correspondent.test>`,
  });
  const ref = await waitUntil(`${subject} in the INBOX`, async () => (await user.searchMessages({ subject })).messages[0]);
  const row = await waitUntil(`the thread of ${subject} drafted, with no poll`, async () => {
    const found = await h.prisma.thread.findUnique({ where: { accountId_gmailThreadId: { accountId: h.accountId, gmailThreadId: ref.threadId } } });
    return found?.state === 'drafted' && found;
  }, { timeoutMs: 45_000 });
  expect(await user.listDraftsForThread(ref.threadId)).toHaveLength(1);
  return row;
}

describe('IMAP IDLE wakes the sync', () => {
  it('new mail reaches its thread without a poll', { timeout: 60_000 }, async () => {
    await mailReachesItsThread(`Numbers ${run}`);
  });

  it('after a Dovecot restart the watcher connects again and mail keeps arriving', { timeout: 90_000 }, async () => {
    await servers.restartDovecot();
    await mailReachesItsThread(`After restart ${run}`);
  });

  it('after the server kicks the IDLE connection, the same', { timeout: 90_000 }, async () => {
    expect(await servers.kickImapUser(servers.user.address)).toBeGreaterThan(0);
    await mailReachesItsThread(`After kick ${run}`);
    // Every message was handled once: one thread each, one draft each.
    const rows = await h.prisma.thread.findMany({ where: { accountId: h.accountId } });
    expect(rows.map((r) => r.state)).toEqual(['drafted', 'drafted', 'drafted']);
  });
});
