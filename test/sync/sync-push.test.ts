// The Gmail sync, push to thread: mail, and the labels and timer labels the user sets in Gmail, reach
// their threads; the push endpoint refuses and records what it must.
// The world (all real: dev server, Postgres, the Gmail emulator with push, the workers, the push
// endpoint) is test/sync/sync-world.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { notifySync, type SyncTarget } from '../../src/sync/notify.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { deliver, type InboxHarness } from '../helpers/inbox-harness.js';
import { journalOf, labelsOf, sentIn } from '../helpers/thread-timers.js';
import { waitUntil } from '../helpers/wait-until.js';
import { question, startSyncWorld, type SyncWorld } from './sync-world.js';

let w: SyncWorld;
let h: InboxHarness;
let sync: SyncTarget;
let discord: SyncWorld['discord'];
let webhookId: string;

beforeAll(async () => {
  w = await startSyncWorld();
  ({ h, sync, discord, webhookId } = w);
});

afterAll(async () => {
  await w?.close();
});

const syncStatus = (accountId: string) => w.syncStatus(accountId);
const signedPushToken = (claims?: Record<string, unknown>) => w.signedPushToken(claims);
const envelope = (data: unknown) => w.envelope(data);
const post = (body: string, token?: string) => w.post(body, token);

describe('push → sync → thread workflow', () => {
  it('turns delivered mail into a draft through the push endpoint, and moves the cursor', async () => {
    const before = await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } });
    expect(before.watchExpiration?.getTime()).toBeGreaterThan(Date.now());
    const { threadId } = await deliver(h, question('Signed contract'));
    const status = await h.waitFor(threadId, (s) => s.state === 'drafted', 45_000);
    expect(status.draftId).toBeTruthy();
    expect((await h.gmail.control.getState(h.email)).drafts.filter((d) => d.threadId === threadId)).toHaveLength(1);

    const pushes = (await h.gmail.control.metrics()).push;
    expect(pushes.delivered).toBeGreaterThan(0);
    const after = await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } });
    expect(BigInt(after.historyId!)).toBeGreaterThan(BigInt(before.historyId!));
    // What the health endpoint compares: when a push last came, when the sync last found changes.
    expect(after.lastPushAt).not.toBeNull();
    expect(after.lastHistoryAt).not.toBeNull();
    const s = await syncStatus(h.accountId);
    expect(s.cursor).toBe(after.historyId);
    expect(s.stats.events).toBeGreaterThan(0);
  });

  it('is not cut off by its short heartbeat timeout when Gmail answers slowly: the activity heartbeats while it waits', async () => {
    // history.list slower than the sync's 15 s heartbeat timeout: without heartbeats while the call
    // runs, every attempt would time out and the mail would never arrive.
    await h.gmail.control.setFaults({
      latency: [{ method: 'history.list', distribution: { type: 'fixed', ms: 18_000 } }],
    });
    try {
      const startedAt = Date.now();
      const { threadId } = await deliver(h, question('Slow history'));
      await h.waitFor(threadId, (s) => s.state === 'drafted', 90_000);
      expect(Date.now() - startedAt, 'the slow answer was waited for').toBeGreaterThanOrEqual(18_000);
    } finally {
      await h.gmail.control.setFaults({ latency: [] });
    }
    // Every attempt of the sync's activities was its first: none timed out and ran again.
    const sync = h.client.workflow.getHandle(syncWorkflowId(h.accountId));
    await waitUntil(
      'the sync pass to end',
      async () => ((await sync.describe()).raw.pendingActivities ?? []).length === 0,
      { timeoutMs: 60_000 },
    );
    const started = ((await sync.fetchHistory()).events ?? []).flatMap((e) =>
      e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes] : [],
    );
    expect(started.length).toBeGreaterThan(0);
    expect(started.map((a) => a.lastFailure?.message).filter(Boolean)).toEqual([]);
    expect(started.every((a) => a.attempt === 1)).toBe(true);
  }, 150_000);

  it('ignores a duplicate or stale notification', async () => {
    // Quiet the mailbox's own pushes (drafts, labels) so that only ours arrive.
    await h.gmail.control.setPush({ dropRate: 1 });
    await h.gmail.control.flushPush();
    const s0 = await waitUntil('sync idle', async () => {
      const s = await syncStatus(h.accountId);
      return s.idle ? s : undefined;
    });
    // A late push (about a change a later pass already synced) and a duplicate.
    await notifySync(sync, h.accountId, { source: 'push', historyId: String(BigInt(s0.cursor!) - 1n) });
    await notifySync(sync, h.accountId, { source: 'push', historyId: s0.cursor! });
    const s1 = await waitUntil('ignored', async () => {
      const s = await syncStatus(h.accountId);
      return s.stats.ignoredNotifications >= s0.stats.ignoredNotifications + 2 ? s : undefined;
    });
    expect(s1.stats.passes).toBe(s0.stats.passes);
    expect(s1.cursor).toBe(s0.cursor);
    expect(s1.idle).toBe(true);
    await h.gmail.control.setPush({ dropRate: 0 });
  });

  it('signals the thread when the user labels it Done in Gmail', async () => {
    const { threadId } = await deliver(h, question('Board minutes'));
    await h.waitFor(threadId, (s) => s.state === 'drafted', 45_000);
    await h.gmail.control.modifyLabels(h.email, { threadId, add: [h.settings.labels.done] });
    const status = await h.waitFor(threadId, (s) => s.state === 'archived', 45_000);
    expect(status.decisions.some((d) => d.kind === 'archive' && d.source === 'user')).toBe(true);
  });

  it('takes a timer label set in Gmail (Snooze/Next week): the thread snoozes until Monday morning in the account zone, the label comes off', async () => {
    await h.prisma.account.update({ where: { id: h.accountId }, data: { timeZone: 'Europe/Berlin' } });
    const { threadId } = await deliver(h, question('Offsite venue'));
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 45_000);
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Snooze/Next week'] });
    const snoozed = await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'snooze') && s.pendingEvents === 0, 45_000);
    const at = DateTime.fromMillis(snoozed.wakes![0]!.at, { zone: 'Europe/Berlin' });
    expect(at.weekday).toBe(1);
    expect(at.hour).toBe(h.cfg.MORNING_HOUR);
    expect(at.toMillis()).toBeGreaterThan(Date.now());
    const state = await h.gmail.control.getState(h.email);
    const names = new Map(state.labels.map((l) => [l.id, l.name]));
    const onThread = new Set(state.messages.filter((m) => m.threadId === threadId).flatMap((m) => m.labelIds.map((id) => names.get(id) ?? id)));
    expect(onThread.has('Snooze/Next week')).toBe(false);
    expect(onThread.has('INBOX')).toBe(false);
    expect(snoozed.wakes![0]!.by).toBe('label');
  });

  it('takes Remind/5 seconds: the thread stays where it is, and at the time the user is told on Discord', async () => {
    const { threadId } = await deliver(h, question('Room booking'));
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 45_000);
    const before = await labelsOf(h, threadId);
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Remind/5 seconds'] });
    const waiting = await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'remind') && s.pendingEvents === 0, 45_000);
    const { at, by } = waiting.wakes![0]!;
    expect(by).toBe('label');
    expect(await labelsOf(h, threadId)).toEqual(before); // the label is off; nothing else changed
    const told = async () => (await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(threadId));
    expect(await told()).toHaveLength(0);
    const [message] = await waitUntil('the reminder on Discord', async () => {
      const found = await told();
      return found.length > 0 && found;
    }, { timeoutMs: 45_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    expect(message!.message.content).toContain('Reminder');
    const after = await h.waitFor(threadId, (s) => !s.wakes && s.pendingEvents === 0);
    expect(after.state).toBe('drafted');
    expect(await labelsOf(h, threadId)).toEqual(before);
    expect((await journalOf(h, threadId, 'remind')).map((a) => a.state)).toEqual(['done']);
    expect(await told()).toHaveLength(1);
  });

  it('takes Send/5 seconds: the draft goes out at the time through the journaled send, once', async () => {
    const { threadId } = await deliver(h, question('Venue deposit'));
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 45_000);
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Send/5 seconds'] });
    const waiting = await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'send_later') && s.pendingEvents === 0, 45_000);
    const { at, actionId } = waiting.wakes![0]!;
    expect(await labelsOf(h, threadId)).not.toContain('Send/5 seconds');
    expect(await sentIn(h, threadId)).toHaveLength(0);
    const [action] = await waitUntil('the send', async () => {
      const rows = await journalOf(h, threadId, 'send_later');
      return rows[0]?.state === 'done' && rows;
    }, { timeoutMs: 45_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    expect(action!.id).toBe(actionId);
    const sent = await sentIn(h, threadId);
    expect(sent.map((m) => m.id)).toEqual([action!.result!.sentMessageId]);
    // The sync sees the sent message and the draft gone; the thread closes as sent (an event left
    // when it closed is dropped) or waits for the answer.
    const closed = await h.waitFor(threadId, (s) => s.state === 'sent' || (s.state === 'awaiting_reply' && s.pendingEvents === 0), 45_000);
    expect(closed.decisions.filter((d) => d.detail.startsWith('send later fired'))).toHaveLength(1);
    expect(await sentIn(h, threadId)).toHaveLength(1);
  });

  it('leaves a timer label whose time cannot be read on the thread, and logs why', async () => {
    const { threadId } = await deliver(h, question('Parking permits'));
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 45_000);
    const warnings = vi.spyOn(console, 'error');
    try {
      await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Remind/whenever suits'] });
      const line = await waitUntil('the warning', async () =>
        warnings.mock.calls.map((c) => String(c[0])).find((l) => l.includes('Remind/whenever suits')), { timeoutMs: 45_000 });
      expect(line).toContain('[sync]');
      expect(line).toContain('cannot read');
    } finally {
      warnings.mockRestore();
    }
    expect(await labelsOf(h, threadId)).toContain('Remind/whenever suits');
    const status = await h.waitFor(threadId, (s) => s.pendingEvents === 0);
    expect(status.wakes).toBeUndefined();
    expect(await journalOf(h, threadId, 'remind')).toHaveLength(0);
  });
});


describe('push endpoint', () => {
  it('refuses unauthenticated pushes and tokens for another audience', async () => {
    const body = envelope({ emailAddress: h.email, historyId: 1 });
    expect((await post(body)).status).toBe(401);
    expect((await post(body, 'not-a-jwt')).status).toBe(401);
    expect((await post(body, signedPushToken({ aud: 'https://someone-else.example/push' }))).status).toBe(403);
    expect((await post(body, signedPushToken({ email: 'intruder@example.iam.gserviceaccount.com' }))).status).toBe(403);
    expect((await post(body, signedPushToken({ iss: 'https://evil.example' }))).status).toBe(401);
  });

  it('acknowledges malformed pushes and unknown addresses, and records why', async () => {
    const marker = randomUUID();
    const since = new Date();
    const bad = await post('{"message": ', signedPushToken());
    expect(bad.status).toBe(200);
    const noHistory = await post(envelope({ emailAddress: h.email, note: marker }), signedPushToken());
    expect(noHistory.status).toBe(200);
    const unknown = await post(
      envelope({ emailAddress: `${marker}@nowhere.example`, historyId: '42' }),
      signedPushToken(),
    );
    expect(unknown.status).toBe(200);
    const asString = await post(envelope({ emailAddress: h.email, historyId: '99999999' }), signedPushToken());
    expect(asString.status).toBe(204);

    const rows = await h.prisma.pushRejection.findMany({ where: { receivedAt: { gte: since } } });
    const reasons = rows.map((r) => r.reason);
    expect(reasons).toContain('malformed_json');
    expect(reasons).toContain('malformed_notification');
    expect(rows.some((r) => r.reason === 'unknown_account' && JSON.stringify(r.detail).includes(marker))).toBe(true);
  });
});
