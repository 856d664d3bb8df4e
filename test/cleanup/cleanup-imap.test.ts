// The clean-up on an IMAP/SMTP mailbox (Dovecot and Postfix on loopback, mail-servers/):
// the same workflows and activities as on Gmail, through the provider-neutral Mailbox. A bulk
// archive and label of a sender's mail and their undo, a mailto: unsubscribe sent through the user's
// SMTP, a one-click one to a loopback HTTPS server (the test-only allowance), and the cold-email gate (a stranger's pitch gets the keyword, an allowlisted domain's not).
import { randomUUID } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActions, loadAction } from '../../src/actions/journal.js';
import { allow } from '../../src/rules/cold-email-allowlist.js';
import { COLD_EMAIL_RULE_ID } from '../../src/rules/contracts.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { startBulk, undoBulk } from '../../src/cleanup/bulk.js';
import { listSenders } from '../../src/cleanup/senders.js';
import { startUnsubscribe } from '../../src/cleanup/unsubscribe.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { labelToKeyword } from '../../src/imap/mail-ids.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import type { MailServers } from '../../mail-servers/index.js';
import { waitUntil } from '../helpers/wait-until.js';
import { notifySync, requestFullScan } from '../../src/sync/notify.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { syncStatusQuery } from '../../src/sync/sync-workflow.js';
import { createOneClickClient, ONE_CLICK_BODY, type OneClickClient } from '../../src/outbound/one-click.js';
import { startOneClickServer, type OneClickServer } from '../helpers/one-click-server.js';
import { imapClient } from '../imap/mail-test-clients.js';
import { startImapWorld, type ImapWorld } from '../imap/imap-world.js';

const run = randomUUID().slice(0, 8);
let world: ImapWorld<InboxHarness>;
let servers: MailServers;
let h: InboxHarness;
let oneClickServer: OneClickServer;
let oneClick: OneClickClient;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  oneClickServer = await startOneClickServer();
  oneClick = createOneClickClient({ testAllowance: oneClickServer.allowance, timeoutMs: 2_000 });
  world = await startImapWorld({ user: { address: `cleanup-${run}@inbox.test`, password: 'user-app-password' } }, async (imap) => {
    const harness = await startInboxHarness({ imap, env: { IMAP_IDLE: 'false' } });
    await harness.startWorkers({ oneClick });
    return harness;
  });
  ({ servers, product: h } = world);
}, 120_000);

afterAll(async () => {
  await world?.close();
  oneClick?.close();
  await oneClickServer?.close();
});

/** Mail from the correspondent's list into the user's INBOX, through Postfix. */
async function fromTheList(n: number): Promise<void> {
  const transport = createTransport({ host: servers.host, port: servers.smtp.mxPort, secure: false, tls: { ca: servers.caPem }, logger: false });
  try {
    for (let i = 0; i < n; i++) {
      await transport.sendMail({
        from: `List <${servers.correspondent.address}>`,
        to: servers.user.address,
        subject: `Issue ${i}`,
        text: 'News.',
        messageId: `<list-${run}-${i}@correspondent.test>`,
        headers: { 'List-Unsubscribe': `<mailto:${servers.correspondent.address}?subject=unsubscribe>` },
      });
    }
  } finally {
    transport.close();
  }
}

async function folderCount(path: string): Promise<number> {
  const client = await imapClient(servers, servers.user);
  try {
    const status = await client.status(path, { messages: true });
    return status ? (status.messages ?? 0) : 0;
  } finally {
    await client.logout();
  }
}

async function withUserClient<T>(use: (client: Awaited<ReturnType<typeof imapClient>>) => Promise<T>): Promise<T> {
  const client = await imapClient(servers, servers.user);
  try {
    return await use(client);
  } finally {
    await client.logout();
  }
}

async function subjectsIn(folder: string): Promise<string[]> {
  return withUserClient(async (client) => {
    const lock = await client.getMailboxLock(folder);
    try {
      const subjects: string[] = [];
      for await (const m of client.fetch('1:*', { envelope: true })) subjects.push(m.envelope?.subject ?? '');
      return subjects.sort();
    } finally {
      lock.release();
    }
  });
}

/** The subjects of the user's messages in INBOX and Archive that carry the keyword, sorted. */
async function subjectsWith(keyword: string): Promise<string[]> {
  return withUserClient(async (client) => {
    const subjects: string[] = [];
    for (const folder of ['INBOX', 'Archive']) {
      const lock = await client.getMailboxLock(folder);
      try {
        for await (const m of client.fetch('1:*', { envelope: true, flags: true })) if (m.flags?.has(keyword)) subjects.push(m.envelope?.subject ?? '');
      } finally {
        lock.release();
      }
    }
    return subjects.sort();
  });
}

describe('on IMAP', () => {
  it("bulk archive of a sender's mail moves it out of INBOX in batches, and undo brings exactly it back", async () => {
    await fromTheList(5);
    await waitUntil('5 messages in INBOX', async () => (await folderCount('INBOX')) >= 5);
    const handle = await startBulk(h.client, {
      accountId: h.accountId,
      selection: { kind: 'sender', value: servers.correspondent.address },
      operation: 'archive',
      dryRun: false,
      batchSize: 2,
      taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE,
    });
    const done = await handle.result();
    expect(done).toMatchObject({ state: 'done', messages: 5, batches: 3 });
    expect(await folderCount('INBOX')).toBe(0);
    const undone = await undoBulk({ client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true, true, true]);
    expect(await folderCount('INBOX')).toBe(5);
  });

  it('bulk by a search: what IMAP SEARCH can say exactly runs; a negation it would read as a word is refused, nothing moved', async () => {
    await fromTheList(0); // the list's five are back in INBOX (the test before undid its archive)
    const inbox = await folderCount('INBOX');
    const bulk = (value: string, dryRun: boolean) =>
      startBulk(h.client, { accountId: h.accountId, selection: { kind: 'query', value }, operation: 'archive', dryRun, batchSize: 1000, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
    const exact = `from:${servers.correspondent.address} subject:"Issue 3"`;
    expect(await (await bulk(exact, true)).result()).toMatchObject({ state: 'dry_run', messages: 1 });
    expect(await (await bulk(exact, false)).result()).toMatchObject({ state: 'done', messages: 1 });
    expect(await folderCount('INBOX')).toBe(inbox - 1);

    const refused = bulk(`from:${servers.correspondent.address} -subject:"Issue 1"`, false).then((handle) => handle.result());
    await expect(refused).rejects.toThrow(WorkflowFailedError);
    const failure = await refused.catch((err: Error) => err);
    let cause = failure as Error;
    while (cause.cause instanceof Error) cause = cause.cause;
    expect(cause.message).toMatch(/^this IMAP server cannot search for "-subject:\\"Issue 1\\"" as Gmail does/);
    expect(await folderCount('INBOX')).toBe(inbox - 1);
  });

  it('a dry run counts every match past the search page of 500 (IMAP search pages)', async () => {
    // 501 old, read messages of a sender of their own in Archive: no inbox mail for the sync to hand on, outside the scans' window.
    const sender = 'digest@pages.example';
    const count = 501;
    await withUserClient(async (client) => {
      for (let n = 0; n < count; n++) {
        const raw = [`From: Digest <${sender}>`, `To: ${servers.user.address}`, `Subject: Digest ${n}`, `Message-ID: <digest-${n}.${Date.now().toString(36)}@pages.example>`, '', 'Weekly.', ''].join('\r\n');
        await client.append('Archive', raw, ['\\Seen'], new Date(Date.UTC(2025, 0, 1) + n * 60_000));
      }
    });
    const handle = await startBulk(h.client, { accountId: h.accountId, selection: { kind: 'sender', value: sender }, operation: 'trash', dryRun: true, batchSize: 1000, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
    expect(await handle.result()).toMatchObject({ state: 'dry_run', messages: count, threads: count });
  });

  it("bulk label of a sender's mail: the keyword on the messages that lacked it (INBOX and Archive), a repeat touches none, undo takes off only what it added", async () => {
    // The list's five: four in INBOX, one archived by the test before. The user had labelled "Issue 0" already.
    const keyword = labelToKeyword('List Mail');
    await withUserClient(async (client) => {
      const lock = await client.getMailboxLock('INBOX');
      try {
        const uids = (await client.search({ subject: 'Issue 0' }, { uid: true })) || [];
        expect(uids).toHaveLength(1);
        await client.messageFlagsAdd(uids.join(','), [keyword], { uid: true });
      } finally {
        lock.release();
      }
    });
    const label = (dryRun: boolean) =>
      startBulk(h.client, { accountId: h.accountId, selection: { kind: 'sender', value: servers.correspondent.address }, operation: 'label', label: 'List Mail', dryRun, batchSize: 3, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
    expect(await (await label(true)).result()).toMatchObject({ state: 'dry_run', messages: 4 });
    const handle = await label(false);
    const done = await handle.result();
    expect(done).toMatchObject({ state: 'done', messages: 4, batches: 2 });
    expect(await subjectsWith(keyword)).toEqual(['Issue 0', 'Issue 1', 'Issue 2', 'Issue 3', 'Issue 4']);
    const batches = await Promise.all(done.actionIds.map((id) => loadAction(db(), id)));
    expect(batches.map((b) => [b!.kind, b!.argument, b!.state, b!.result!.messageIds!.length])).toEqual([['add_label', 'List Mail', 'done', 3], ['add_label', 'List Mail', 'done', 1]]);

    expect(await (await label(false)).result()).toMatchObject({ state: 'done', messages: 0, batches: 0 });
    const undone = await undoBulk({ client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true, true]);
    expect(await subjectsWith(keyword)).toEqual(['Issue 0']);
  });

  it("bulk trash of a sender's mail, from INBOX and Archive; undo puts each back where it was", async () => {
    // The list's five: four in INBOX, "Issue 3" in Archive (the search test archived it).
    const where = async () => ({ inbox: await folderCount('INBOX'), archive: await folderCount('Archive'), trash: await folderCount('Trash') });
    const before = await where();
    const handle = await startBulk(h.client, { accountId: h.accountId, selection: { kind: 'sender', value: servers.correspondent.address }, operation: 'trash', dryRun: false, batchSize: 1000, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
    expect(await handle.result()).toMatchObject({ state: 'done', messages: 5, batches: 1 });
    expect(await where()).toEqual({ inbox: before.inbox - 4, archive: before.archive - 1, trash: before.trash + 5 });
    const undone = await undoBulk({ client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true]);
    expect(await where()).toEqual(before);
    expect(await subjectsIn('Archive')).toContain('Issue 3');
  });

  it('a one-click unsubscribe (RFC 8058) read from a message in the IMAP INBOX: one POST, journaled done', async () => {
    const sender = `news@weekly-${run}.example`;
    const transport = createTransport({ host: servers.host, port: servers.smtp.mxPort, secure: false, tls: { ca: servers.caPem }, logger: false });
    try {
      await transport.sendMail({
        from: `Weekly <${sender}>`,
        to: servers.user.address,
        subject: 'This week',
        text: 'News.',
        messageId: `<weekly-${run}@weekly.example>`,
        headers: { 'List-Unsubscribe': `<mailto:leave@weekly-${run}.example>, <${oneClickServer.origin}/u/imap-${run}?t=opaque>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
    } finally {
      transport.close();
    }
    await waitUntil('the newsletter in the INBOX', async () => (await world.user.searchMessages({ from: sender })).messages.length === 1);
    const result = await (await startUnsubscribe(h.client, { accountId: h.accountId, sender, reason: { source: 'user' }, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE })).result();
    expect(result.state).toBe('done');
    const action = (await loadAction(db(), result.actionId!))!;
    expect(action.result?.unsubscribe).toMatchObject({ method: 'one_click', uri: `${oneClickServer.origin}/u/imap-${run}?t=opaque`, status: 200 });
    const posts = oneClickServer.requests.filter((r) => r.path === `/u/imap-${run}`);
    expect(posts.map((r) => [r.method, r.body])).toEqual([['POST', ONE_CLICK_BODY]]);
  });

  it("a mailto: unsubscribe goes out through the user's SMTP, once, with the action's marker", async () => {
    const result = await (
      await startUnsubscribe(h.client, {
        accountId: h.accountId,
        sender: servers.correspondent.address,
        reason: { source: 'user' },
        taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
        gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE,
      })
    ).result();
    expect(result.state).toBe('done');
    const action = (await loadAction(db(), result.actionId!))!;
    expect(action.recipients).toEqual([servers.correspondent.address]);
    const correspondent = await imapClient(servers, servers.correspondent);
    try {
      const lock = await correspondent.getMailboxLock('INBOX');
      try {
        const uids = await waitUntil('the unsubscribe mail', async () => {
          const found = (await correspondent.search({ header: { 'x-durable-inbox-action': action.id } }, { uid: true })) || [];
          return found.length > 0 && found;
        });
        expect(uids).toHaveLength(1);
        const message = await correspondent.fetchOne(String(uids[0]), { envelope: true }, { uid: true });
        expect(message && message.envelope?.subject).toBe('unsubscribe');
      } finally {
        lock.release();
      }
    } finally {
      await correspondent.logout();
    }
  });

  it('the cold-email gate: first-contact outreach from a stranger gets the Cold Email keyword; an allowlisted domain\'s does not', async () => {
    await allow(db(), h.accountId, 'domain', `partner-${run}.example`);
    const pitch = async (from: string) => {
      const subject = `Book a demo this week ${randomUUID().slice(0, 6)}`;
      await deliverFromOutside(servers, { from, to: servers.user.address, subject, text: 'Hi! Teams like yours book a demo with us and save hours. Do you have 15 minutes on Thursday?', messageId: `<${randomUUID()}@outside.test>` });
      const message = await waitUntil(`${subject} in the INBOX`, async () => (await world.user.searchMessages({ subject })).messages[0]);
      await h.ingest(message.threadId, { type: 'message_added', messageId: message.id, labelIds: ['INBOX'] });
      const status = await h.waitFor(message.threadId, (st) => st.category !== undefined && st.pendingEvents === 0 && (st.openActions ?? []).length === 0, 30_000);
      return { ...message, status };
    };
    const stranger = await pitch(`Sam Seller <sam@vendor-${run}.example>`);
    expect(stranger.status).toMatchObject({ category: 'cold_outreach', state: 'skipped' });
    expect(stranger.status.decisions[0]!.detail).toBe(`cold_outreach: rule ${COLD_EMAIL_RULE_ID}: first contact, "book a demo", "15 minutes"`);
    expect((await world.user.getMessage(stranger.id)).labelIds).toEqual(expect.arrayContaining(['INBOX', 'Cold Email']));
    // Read by its thread, it is in the senders view (no backfill ran on this account).
    expect((await listSenders(db(), { accountId: h.accountId })).find((r) => r.key === `sam@vendor-${run}.example`)).toMatchObject({ messages: 1, unread: 1, category: 'cold_outreach' });

    const allowed = await pitch(`Pat Partner <pat@partner-${run}.example>`);
    expect(allowed.status.category).toBe('fyi');
    expect(allowed.status.decisions.map((d) => d.detail)).toContain(`fyi: not cold outreach, allowlisted (domain partner-${run}.example)`);
    expect((await world.user.getMessage(allowed.id)).labelIds).not.toContain('Cold Email');
    expect((await listActions(db(), { accountId: h.accountId, threadId: allowed.threadId })).filter((a) => a.argument === 'Cold Email')).toEqual([]);
  });

  it('the full scan brings the stored labels up to date: mail the user read and archived in another client while the sync did not look', async () => {
    const sam = `sam@vendor-${run}.example`;
    const figures = async () => (await listSenders(db(), { accountId: h.accountId })).find((r) => r.key === sam);
    expect(await figures()).toMatchObject({ messages: 1, unread: 1 }); // stored by its thread (the cold-email test)
    const target = { client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE };
    const sync = h.client.workflow.getHandle(syncWorkflowId(h.accountId));
    await notifySync(target, h.accountId, { source: 'poll' });
    const synced = await waitUntil('a history pass', async () => {
      const status = await sync.query(syncStatusQuery).catch(() => undefined);
      return status !== undefined && status.stats.passes > 0 && status.idle && status;
    });
    // Read and moved to Archive in another client; no poll asks the sync to read the folders' changes.
    await withUserClient(async (client) => {
      const lock = await client.getMailboxLock('INBOX');
      try {
        const uids = (await client.search({ from: sam }, { uid: true })) || [];
        expect(uids).toHaveLength(1);
        await client.messageFlagsAdd(uids.join(','), ['\\Seen'], { uid: true });
        await client.messageMove(uids.join(','), 'Archive', { uid: true });
      } finally {
        lock.release();
      }
    });
    await requestFullScan(target, h.accountId, { days: 10 });
    const scanned = await waitUntil('the full scan', async () => {
      const status = await sync.query(syncStatusQuery);
      return status.stats.fullScans > synced.stats.fullScans && status;
    });
    expect(scanned.stats.passes).toBe(synced.stats.passes); // the scan alone, no history pass
    expect(scanned.lastScan).toMatchObject({ kind: 'full_scan' });
    expect(scanned.lastScan!.relabelled).toBeGreaterThanOrEqual(1);
    expect(await figures()).toMatchObject({ messages: 1, unread: 0 });
  });
});
