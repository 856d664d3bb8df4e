// The Gmail sync when push is not enough: the fallback poll, the full inbox scan, watch renewal,
// continue-as-new and gap repair.
// The world (all real: dev server, Postgres, the Gmail emulator with push, the workers, the push
// endpoint) is test/sync/sync-world.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { pushSilent } from '../../src/http/health-reasons.js';
import {
  scheduleDefinitions,
  SYNC_FULL_SCAN_SCHEDULE_ID,
  SYNC_POLL_SCHEDULE_ID,
  WATCH_RENEWAL_SCHEDULE_ID,
} from '../../src/schedules/schedules.js';
import { registerAccount, type AccountDeps } from '../../src/sync/connect.js';
import { notifySync, type SyncTarget } from '../../src/sync/notify.js';
import { syncWorkflow } from '../../src/sync/sync-workflow.js';
import { HISTORY_ID_BACKWARDS_MARGIN, syncWorkflowId } from '../../src/sync/contracts.js';
import { deliver, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory, recordWorkflowHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';
import { question, startSyncWorld, type SyncWorld } from './sync-world.js';

let w: SyncWorld;
let h: InboxHarness;
let sync: SyncTarget;
let accountDeps: AccountDeps;
let accountIds: string[];

beforeAll(async () => {
  w = await startSyncWorld();
  ({ h, sync, accountDeps, accountIds } = w);
});

afterAll(async () => {
  await w?.close();
});

const syncStatus = (accountId: string) => w.syncStatus(accountId);

/**
 * Our sync schedules under a fresh id prefix, with intervals so long that only a test's trigger
 * runs them.
 */
function testSchedules(opts: { watchRenewWithinMs?: number } = {}) {
  const prefix = `test-${randomUUID().slice(0, 8)}-`;
  const definitions = scheduleDefinitions({
    retentionDays: 90,
    sync: {
      pollEvery: '365 days',
      fullScanEvery: '365 days',
      fullScanDays: 10,
      watchRenewalEvery: '365 days',
      watchRenewWithinMs: opts.watchRenewWithinMs ?? 3600_000,
      taskQueue: w.syncQueue,
      idPrefix: prefix,
    },
  }).filter((d) => d.scheduleId.startsWith(prefix));
  return { prefix, definitions };
}

/** Deletes a test's schedules; one never created or gone already is fine. */
async function deleteSchedules(definitions: { scheduleId: string }[]): Promise<void> {
  for (const d of definitions)
    await h.client.schedule
      .getHandle(d.scheduleId)
      .delete()
      .catch(() => undefined);
}


describe('the fallback schedule', () => {
  it('picks up mail whose push notification was dropped', async () => {
    await h.gmail.control.setPush({ dropRate: 1 });
    const { prefix, definitions } = testSchedules();
    try {
      for (const d of definitions) await h.client.schedule.create(d);
      await h.gmail.control.flushPush();
      await waitUntil('sync idle', async () => ((await syncStatus(h.accountId)).idle ? true : undefined));
      const { threadId } = await deliver(h, question('Contract signature (missed)'));
      await h.gmail.control.flushPush();
      expect((await h.gmail.control.metrics()).push.dropped).toBeGreaterThan(0);
      const passes = (await syncStatus(h.accountId)).stats.passes;
      expect(
        await h
          .handle(threadId)
          .describe()
          .then(
            () => 'exists',
            () => 'absent',
          ),
      ).toBe('absent');

      await h.client.schedule.getHandle(prefix + SYNC_POLL_SCHEDULE_ID).trigger();
      const status = await h.waitFor(threadId, (s) => s.state === 'drafted', 45_000);
      expect(status.draftId).toBeTruthy();
      expect((await syncStatus(h.accountId)).stats.passes).toBeGreaterThan(passes);
      // The poll found mail no push announced: with a zero tolerance, the health endpoint says push is silent.
      const silent = await pushSilent(0)(prismaExecutor(h.prisma), new Date());
      expect(silent.map((r) => [r.kind, r.accountId])).toContainEqual(['push_silent', h.accountId]);
      const runs = (await h.client.schedule.getHandle(prefix + SYNC_POLL_SCHEDULE_ID).describe()).info.recentActions;
      expect(runs.length).toBeGreaterThan(0);
    } finally {
      await h.gmail.control.setPush({ dropRate: 0 });
      await deleteSchedules(definitions);
    }
  });
});

describe('the full inbox scan', () => {
  it('hands threads the watch missed to their workflows, and skips the known ones', async () => {
    await h.gmail.control.setPush({ dropRate: 1 });
    const { prefix, definitions: all } = testSchedules();
    const definitions = all.filter((d) => d.scheduleId === prefix + SYNC_FULL_SCAN_SCHEDULE_ID);
    try {
      for (const d of definitions) await h.client.schedule.create(d);
      await h.gmail.control.flushPush();
      await waitUntil('sync idle', async () => ((await syncStatus(h.accountId)).idle ? true : undefined));
      const { threadId } = await deliver(h, question('Agreement question (missed by the watch)'));
      await h.gmail.control.flushPush();
      const before = (await syncStatus(h.accountId)).stats;
      await h.client.schedule.getHandle(prefix + SYNC_FULL_SCAN_SCHEDULE_ID).trigger();
      await h.waitFor(threadId, (st) => st.state === 'drafted', 45_000);
      const after = await waitUntil('scan counted', async () => {
        const st = await syncStatus(h.accountId);
        return st.stats.fullScans > before.fullScans ? st : undefined;
      });
      expect(after.stats.passes).toBe(before.passes); // the scan, not a history pass, found it
      // The inbox holds earlier threads whose newest message was handled: only the new one is handed over.
      expect(after.lastScan?.kind).toBe('full_scan');
      expect(after.lastScan!.ingested).toBeGreaterThanOrEqual(1);
      expect(after.lastScan!.ingested).toBeLessThan(after.lastScan!.threads);
    } finally {
      await h.gmail.control.setPush({ dropRate: 0 });
      await deleteSchedules(definitions);
    }
  });
});

describe('watch renewal', () => {
  it('renews, through its schedule, the watches that are about to expire', async () => {
    const { prefix, definitions } = testSchedules({ watchRenewWithinMs: 24 * 3600_000 });
    const [definition] = definitions.filter((d) => d.scheduleId === prefix + WATCH_RENEWAL_SCHEDULE_ID);
    const soon = new Date(Date.now() + 3600_000);
    await h.prisma.account.update({ where: { id: h.accountId }, data: { watchExpiration: soon } });
    try {
      await h.client.schedule.create(definition!);
      await h.client.schedule.getHandle(definition!.scheduleId).trigger();
      const renewed = await waitUntil('renewed', async () => {
        const row = await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } });
        return row.watchExpiration && row.watchExpiration.getTime() > soon.getTime() ? row.watchExpiration : undefined;
      });
      // Gmail watches last 7 days.
      expect(renewed.getTime()).toBeGreaterThan(Date.now() + 6 * 24 * 3600_000);
      const [run] = (await h.client.schedule.getHandle(definition!.scheduleId).describe()).info.recentActions;
      const result = await h.client.workflow.getHandle(run!.action.workflow.workflowId).result();
      expect(result).toMatchObject({ renewed: 1, failed: 0 });
    } finally {
      await deleteSchedules([definition!]);
    }
  });
});

describe('continue-as-new', () => {
  it('carries the cursor into the next run and keeps syncing', async () => {
    const email = `can-${randomUUID().slice(0, 8)}@example.com`;
    const small: SyncTarget = { ...sync, settings: { maxHistoryEvents: 20 } };
    const created = await h.gmail.control.createAccount({ email });
    const account = await registerAccount({ ...accountDeps, sync: small }, { refresh_token: created.refreshToken });
    accountIds.push(account.id);
    const handle = h.client.workflow.getHandle(syncWorkflowId(account.id));
    const firstRunId = (await handle.describe()).runId;
    for (let i = 0; i < 6; i++) {
      // Each notification its own pass: a query answered before the signal is handled still says idle,
      // and notifications that meet a busy run are one pass; wait for this one's pass to finish.
      const before = (await syncStatus(account.id)).stats.passes;
      await notifySync(small, account.id, { source: 'poll' });
      await waitUntil('the pass', async () => {
        const s = await syncStatus(account.id);
        return s.idle && s.stats.passes > before ? true : undefined;
      });
    }
    const { threadId } = await h.gmail.control.deliver(email, { to: [email], ...question('After continue-as-new') });
    await notifySync(small, account.id, { source: 'poll' });
    await waitUntil(
      'thread started',
      () => h.client.workflow.getHandle(`thread/${account.id}/${threadId}`).describe(),
      { timeoutMs: 45_000 },
    );
    const d = await handle.describe();
    expect(d.runId).not.toBe(firstRunId);
    expect(d.status.name).toBe('RUNNING');
    const st = await waitUntil('idle', async () => {
      const x = await syncStatus(account.id);
      return x.idle ? x : undefined;
    });
    expect(st.stats.passes).toBeGreaterThanOrEqual(7); // stats survived the new runs
    expect(st.cursor).toBe((await h.prisma.account.findUniqueOrThrow({ where: { id: account.id } })).historyId);
  });
});

describe('gap repair', () => {
  it('repairs with an inbox scan when the mailbox is behind the cursor (a restored mailbox), and syncs new mail again', async () => {
    const email = `restored-${randomUUID().slice(0, 8)}@example.com`;
    const created = await h.gmail.control.createAccount({ email });
    const before = await h.gmail.control.deliver(email, { to: [email], ...question('Waiting since the restore') });
    // The cursor we kept is from a mailbox that no longer exists: far ahead of this one's history.
    const current = BigInt((await h.gmail.control.getState(email)).historyId);
    await h.prisma.account.create({ data: { email, status: 'disconnected', historyId: String(current + 100_000n) } });
    const account = await registerAccount(accountDeps, { refresh_token: created.refreshToken });
    accountIds.push(account.id);

    const repaired = await waitUntil(
      'gap repair',
      async () => {
        const s = await syncStatus(account.id);
        return s.stats.gapRepairs > 0 && s.idle && s;
      },
      { timeoutMs: 45_000 },
    );
    expect(BigInt(repaired.cursor!)).toBeLessThan(current + 100_000n); // reset to this mailbox, no longer ahead of it
    await waitUntil('the waiting mail handled', () =>
      h.client.workflow.getHandle(`thread/${account.id}/${before.threadId}`).describe(),
    );
    // New mail reaches its thread again through push and history.
    const after = await h.gmail.control.deliver(email, { to: [email], ...question('After the restore') });
    await waitUntil(
      'new mail handled',
      () => h.client.workflow.getHandle(`thread/${account.id}/${after.threadId}`).describe(),
      { timeoutMs: 45_000 },
    );
    expect((await syncStatus(account.id)).stats.gapRepairs).toBe(repaired.stats.gapRepairs);
  });

  it('takes a push far behind the cursor for a mailbox that went backwards: logged, full inbox scan, cursor reset, its mail handled', async () => {
    const email = `replaced-${randomUUID().slice(0, 8)}@example.com`;
    const created = await h.gmail.control.createAccount({ email });
    const waiting = await h.gmail.control.deliver(email, { to: [email], ...question('In the replaced mailbox') });
    const mailboxHistoryId = (await h.gmail.control.getState(email)).historyId;
    // Connected without a watch or a first pass; its sync then holds a cursor of the mailbox this one replaced.
    const account = await registerAccount(
      { ...accountDeps, sync: undefined, pushTopic: undefined },
      { refresh_token: created.refreshToken },
    );
    accountIds.push(account.id);
    const oldCursor = String(BigInt(mailboxHistoryId) + HISTORY_ID_BACKWARDS_MARGIN + 1_000n);
    await h.prisma.account.update({ where: { id: account.id }, data: { historyId: oldCursor } });
    const stats = { passes: 0, pages: 0, events: 0, gapRepairs: 0, fullScans: 0, ignoredNotifications: 0 };
    await h.client.workflow.start(syncWorkflow, {
      workflowId: syncWorkflowId(account.id),
      taskQueue: w.syncQueue,
      args: [{ accountId: account.id, carried: { cursor: oldCursor, pollRequested: false, stats } }],
    });

    await notifySync(sync, account.id, { source: 'push', historyId: mailboxHistoryId });
    const repaired = await waitUntil(
      'the repair',
      async () => {
        const s = await syncStatus(account.id);
        return s.stats.gapRepairs > 0 && s.idle && s;
      },
      { timeoutMs: 45_000 },
    );
    expect(repaired.stats.ignoredNotifications).toBe(0);
    expect(repaired.lastScan).toMatchObject({ kind: 'gap_repair', historyId: mailboxHistoryId });
    // The cursor is this mailbox's again (history after the scan may have moved it on a little).
    for (const cursor of [
      repaired.cursor!,
      (await h.prisma.account.findUniqueOrThrow({ where: { id: account.id } })).historyId!,
    ]) {
      expect(BigInt(cursor)).toBeGreaterThanOrEqual(BigInt(mailboxHistoryId));
      expect(BigInt(cursor)).toBeLessThan(BigInt(oldCursor) - HISTORY_ID_BACKWARDS_MARGIN);
    }
    await waitUntil(
      'the mail of the replaced mailbox handled',
      () => h.client.workflow.getHandle(`thread/${account.id}/${waiting.threadId}`).describe(),
      { timeoutMs: 45_000 },
    );
  });

  it('processes every message of the gap after history.list answers 404', async () => {
    await h.gmail.control.setPush({ dropRate: 1 });
    try {
      const gap = [];
      for (const subject of ['Gap one', 'Gap two', 'Gap three']) gap.push(await deliver(h, question(subject)));
      await h.gmail.control.flushPush();
      await h.gmail.control.expireHistory(h.email);
      const repairs = (await syncStatus(h.accountId)).stats.gapRepairs;

      await notifySync(sync, h.accountId, { source: 'poll' });
      for (const { threadId } of gap) {
        await h.waitFor(threadId, (s) => s.state === 'drafted', 60_000);
      }
      const s = await syncStatus(h.accountId);
      expect(s.stats.gapRepairs).toBe(repairs + 1);
      const state = await h.gmail.control.getState(h.email);
      expect(BigInt(s.cursor!)).toBeGreaterThanOrEqual(BigInt(state.historyFloor));
      expect(s.lastScan).toMatchObject({ kind: 'gap_repair', ingested: 3 });
      await recordWorkflowHistory(
        h.client.workflow.getHandle(syncWorkflowId(h.accountId)),
        'sync-push-poll-gap-repair',
      );
    } finally {
      await h.gmail.control.setPush({ dropRate: 0 });
    }
  });

  it('acts, after a gap, on what the lost history held: label requests and drafts sent or deleted, each once', async () => {
    const subjects = ['Gap done', 'Gap rework', 'Gap sent', 'Gap deleted', 'Gap untouched'];
    const threads = [];
    for (const subject of subjects) threads.push(await deliver(h, question(subject)));
    const [done, rework, sent, deleted, untouched] = await Promise.all(
      threads.map(({ threadId }) => h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 60_000)),
    );
    const { gmail } = await h.accountGmail();
    const labels = h.settings.labels;
    await h.gmail.control.setPush({ dropRate: 1 });
    // A pass still running for an earlier push would read the user's changes below from history;
    // they must reach the threads through the gap repair alone.
    await h.gmail.control.flushPush();
    await waitUntil('sync idle', async () => ((await syncStatus(h.accountId)).idle ? true : undefined));
    try {
      // What the user does while our history is lost.
      await h.gmail.control.modifyLabels(h.email, { threadId: done!.threadId, add: [labels.done] });
      const draft = (await gmail.getDraft(rework!.draftId!))!.body;
      await h.gmail.control.editDraft(h.email, rework!.draftId!, { text: `Mention the invoice number\n\n${draft}` });
      await h.gmail.control.modifyLabels(h.email, { threadId: rework!.threadId, add: [labels.rework] });
      await h.gmail.control.sendDraft(h.email, sent!.draftId!);
      await h.gmail.control.deleteDraft(h.email, deleted!.draftId!);
      await h.gmail.control.flushPush();
      await h.gmail.control.expireHistory(h.email);
      const repairs = (await syncStatus(h.accountId)).stats.gapRepairs;

      await notifySync(sync, h.accountId, { source: 'poll' });
      await h.waitFor(done!.threadId, (s) => s.state === 'archived', 60_000);
      const reworked = await h.waitFor(
        rework!.threadId,
        (s) => s.reworkCount === 1 && s.state === 'drafted' && s.pendingEvents === 0,
        60_000,
      );
      expect((await gmail.getDraft(reworked.draftId!))!.body).toContain('Revised as asked: Mention the invoice number');
      await h.waitFor(sent!.threadId, (s) => s.state === 'sent', 60_000);
      await h.waitFor(deleted!.threadId, (s) => s.state === 'discarded', 60_000);
      const first = await syncStatus(h.accountId);
      expect(first.stats.gapRepairs).toBe(repairs + 1);
      // 5 drafted threads checked (more from earlier tests), Done and Rework requests.
      expect(first.lastScan).toMatchObject({ kind: 'gap_repair', ingested: 0 });
      expect(first.lastScan!.reconciled).toBeGreaterThanOrEqual(7);

      // A second gap finds the requests done (their labels are off): nothing happens twice.
      await h.gmail.control.expireHistory(h.email);
      await notifySync(sync, h.accountId, { source: 'poll' });
      await waitUntil(
        'second gap repair',
        async () => ((await syncStatus(h.accountId)).stats.gapRepairs === repairs + 2 ? true : undefined),
        { timeoutMs: 60_000 },
      );
      const again = await h.waitFor(rework!.threadId, (s) => s.pendingEvents === 0);
      expect(again).toMatchObject({ state: 'drafted', reworkCount: 1 });
      expect((await h.waitFor(untouched!.threadId, (s) => s.pendingEvents === 0)).state).toBe('drafted');
      const mailbox = await h.gmail.control.getState(h.email);
      expect(mailbox.drafts.filter((d) => d.threadId === rework!.threadId)).toHaveLength(1);
      expect(mailbox.drafts.filter((d) => d.threadId === untouched!.threadId)).toHaveLength(1);
      await recordHistory(h, rework!.threadId, 'thread-gap-reconcile-rework');
    } finally {
      await h.gmail.control.setPush({ dropRate: 0 });
    }
    // Its waits are budgeted 60 s each: a stalled one fails with its own message, not the test's timeout.
  }, 180_000);
});
