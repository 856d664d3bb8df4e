// IMAP's push: the workflow worker IDLEs on the account's INBOX (src/sync/imap-watch.ts) and wakes the
// sync, so new mail reaches its thread with no poll at all; after a Dovecot restart and after the
// server kicks the connection, the watcher connects again and mail keeps arriving, each message
// handled once. Real Dovecot and Postfix, dev server, PostgreSQL, the product's workers.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { notifySync } from '../../src/sync/notify.js';
import { startImapWatch } from '../../src/sync/imap-watch.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import type { MailServers } from '../../mail-servers/index.js';
import { waitUntil } from '../helpers/wait-until.js';
import { imapClient } from './mail-test-clients.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { startImapWorld, type ImapWorld } from './imap-world.js';

const run = randomUUID().slice(0, 8);
let world: ImapWorld<InboxHarness>;
let servers: MailServers;
let h: InboxHarness;
let user: ImapMailbox;

beforeAll(async () => {
  world = await startImapWorld(
    // `reauth`: a second mailbox whose user changes the password (the watch's own test, below).
    { user: { address: `idle-${run}@inbox.test`, password: 'user-app-password' }, others: [{ address: `reauth-${run}@inbox.test`, password: 'reauth-password' }] },
    (imap) => startInboxHarness({ imap }),
  );
  ({ servers, product: h, user } = world);
  // As connecting does: the cursor is the mailbox's now (the only poll of this file).
  await notifySync({ client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE }, h.accountId, { source: 'connect' });
  await h.startWorkers();
  await waitUntil('the sync cursor', async () => (await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } })).historyId ?? false);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

describe('the watch over many accounts', () => {
  it('watches every account it can read, whatever another account it cannot read (sealed with another key) comes first', async () => {
    // The database is shared (other test files' accounts, another installation's key after a rotation).
    const unreadable = await h.prisma.account.create({
      data: { email: `unreadable-${run}@inbox.test`, provider: 'imap', mailServers: world.account, encryptedTokens: new TokenVault(randomBytes(32)).sealJson({ password: 'x' }) },
    });
    const vault = new TokenVault(Buffer.from(h.cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
    // Stored after it: the same mailbox under another address (its login name is the user's).
    const readable = await h.prisma.account.create({
      data: { email: `watched-${run}@inbox.test`, provider: 'imap', mailServers: world.account, encryptedTokens: vault.sealJson({ password: servers.user.password }) },
    });
    const watch = startImapWatch({ prisma: h.prisma, vault, notify: async () => {}, accountIds: [unreadable.id, readable.id] });
    try {
      expect(await waitUntil('the readable account watched', async () => watch.watching().includes(readable.id) && watch.watching())).toEqual([readable.id]);
    } finally {
      await watch.close();
      await h.prisma.account.deleteMany({ where: { id: { in: [unreadable.id, readable.id] } } });
    }
  });
});

describe('the watch of an account whose login is refused for good', () => {
  it('turns the account needs_reauth with the sentence, stops watching it, and watches it again once it is reconnected', async () => {
    const address = `reauth-${run}@inbox.test`;
    const vault = new TokenVault(Buffer.from(h.cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
    const mailServers = { imap: { ...world.account.imap, user: address }, smtp: { ...world.account.smtp, user: address } };
    const account = await h.prisma.account.create({
      data: { email: address, provider: 'imap', mailServers, encryptedTokens: vault.sealJson({ password: 'reauth-password' }) },
    });
    const logged: string[] = [];
    const stderr = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void logged.push(String(line)));
    const watch = startImapWatch({ prisma: h.prisma, vault, notify: async () => {}, accountIds: [account.id], refreshMs: 100 });
    try {
      await waitUntil('the account watched', async () => watch.watching().includes(account.id));
      // The user changes the password in their provider's settings; the server drops the IDLE connection.
      await servers.setPassword(address, 'a-new-password');
      expect(await servers.kickImapUser(address)).toBeGreaterThan(0);
      await waitUntil('the account needs_reauth', async () => (await h.prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status === 'needs_reauth');
      // The watcher is gone, not reconnecting with backoff (and the refresh leaves a needs_reauth account alone).
      // (The harness's own workers watch every account too: whichever watch saw the refusal first marked it, and logged it.)
      await waitUntil('the watcher gone', async () => watch.watched().length === 0);
      const sentence = logged.filter((line) => line.includes(`account ${account.id} needs to be reconnected`));
      expect(sentence).toHaveLength(1);
      expect(sentence[0]).toMatch(
        new RegExp(`needs to be reconnected: The IMAP server 127\\.0\\.0\\.1:\\d+ refused the login of ${address.replace(/\./g, '\\.')}: the user name or password is wrong \\(accounts with 2-step verification need an app password\\)\\.$`),
      );

      // The user connects again with the new password (as `accounts connect --imap` stores it): watched again.
      await h.prisma.account.update({ where: { id: account.id }, data: { status: 'active', encryptedTokens: vault.sealJson({ password: 'a-new-password' }) } });
      await waitUntil('the reconnected account watched again', async () => watch.watching().includes(account.id));
    } finally {
      stderr.mockRestore();
      await watch.close();
      await h.prisma.account.deleteMany({ where: { id: account.id } });
    }
  });
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

describe('keywords the user sets while the workers are down', () => {
  it('are, after the restart, the signals they would have been, once: the sync diffs against what it knew, kept in the database', { timeout: 120_000 }, async () => {
    const subjects = { done: `Finished while down ${run}`, snooze: `Later while down ${run}`, undone: `Changed mind while down ${run}` };
    const [done, snoozed, undone] = await Promise.all([mailReachesItsThread(subjects.done), mailReachesItsThread(subjects.snooze), mailReachesItsThread(subjects.undone)]);
    // Each message reached its thread through the sync, which remembered it (with its labels) as it did.
    // The workers stop, and with them all their process kept (IMAP connections, the IDLE watch).
    await h.stopWorkers({ exit: true });
    // The user, in a plain IMAP client: Done on one thread, a timer label on another, Done set and taken off again on a third.
    const client = await imapClient(servers, servers.user);
    try {
      await client.mailboxOpen('INBOX');
      const uidOf = async (subject: string) => {
        const uids = (await client.search({ subject }, { uid: true })) || [];
        expect(uids).toHaveLength(1);
        return String(uids[0]);
      };
      await client.messageFlagsAdd(await uidOf(subjects.done), ['$DI_Done'], { uid: true });
      await client.messageFlagsAdd(await uidOf(subjects.snooze), ['$DI_Snooze/Tomorrow'], { uid: true });
      const back = await uidOf(subjects.undone);
      await client.messageFlagsAdd(back, ['$DI_Done'], { uid: true });
      await client.messageFlagsRemove(back, ['$DI_Done'], { uid: true });
    } finally {
      await client.logout();
    }

    await h.startWorkers();
    // The watch's first connection wakes the sync: no poll.
    await h.waitFor(done.gmailThreadId, (s) => s.state === 'archived', 45_000);
    const snooze = await h.waitFor(snoozed.gmailThreadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'snooze' && w.by === 'label'), 45_000);
    expect(snooze.wakes!.filter((w) => w.kind === 'snooze')).toHaveLength(1);
    await waitUntil('the timer label taken off and the thread out of the INBOX', async () => {
      const labels = await user.getThreadLabelIds(snoozed.gmailThreadId);
      return !labels.includes('INBOX') && !labels.includes('Snooze/Tomorrow') && labels;
    });
    // Once: the archive of the Done thread journaled once; the third thread, whose keyword came and went, still drafted in the INBOX.
    const archives = await h.prisma.action.findMany({ where: { accountId: h.accountId, gmailThreadId: done.gmailThreadId, kind: 'archive' } });
    expect(archives).toHaveLength(1);
    expect((await h.waitFor(undone.gmailThreadId, () => true)).state).toBe('drafted');
    expect(await user.getThreadLabelIds(undone.gmailThreadId)).toContain('INBOX');
  });
});
