// The Gmail sync end to end, all real: dev server, Postgres, the Gmail emulator (push with OIDC
// tokens signed by its key, history 404s, revocation) over googleapis/google-auth-library, the
// Anthropic emulator, the thread workflow's three workers (test/helpers/inbox-harness.ts), and a
// sync worker + the push endpoint of this file.
import { mailboxAccounts } from '../../src/accounts/mailbox-accounts.js';
import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { createSyncActivities } from '../../src/sync/sync-activities.js';
import { DEFAULT_TIMER_LABEL_PREFIXES } from '../../src/time/index.js';
import { DateTime } from 'luxon';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { pushRoute, PUSH_PATH } from '../../src/sync/push-route.js';
import { pushSilent } from '../../src/http/health-reasons.js';
import {
  scheduleDefinitions,
  SYNC_FULL_SCAN_SCHEDULE_ID,
  SYNC_POLL_SCHEDULE_ID,
  WATCH_RENEWAL_SCHEDULE_ID,
} from '../../src/schedules/schedules.js';
import { ensureDemoAccount, registerAccount, type AccountDeps } from '../../src/sync/connect.js';
import { connectCommand, disconnectCommand, listCommand, runAccountsCli } from '../../src/cli/accounts.js';
import { notifySync, type SyncTarget } from '../../src/sync/notify.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { gmailOAuthSettings, quotaOptionsFromConfig } from '../../src/config/settings.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';
import { syncStatusQuery, syncWorkflow } from '../../src/sync/sync-workflow.js';
import { HISTORY_ID_BACKWARDS_MARGIN, syncWorkflowId, type SyncStatus } from '../../src/sync/contracts.js';
import { deliver, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory, recordWorkflowHistory } from '../helpers/histories.js';
import { journalOf, labelsOf, sentIn } from '../helpers/thread-timers.js';
import { waitUntil } from '../helpers/wait-until.js';

const TOPIC = 'projects/durable-inbox-test/topics/gmail';
const PUSH_EMAIL = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhookId: string;
let http: HttpServer;
let syncWorker: Worker;
let syncRunning: Promise<void>;
let nativeConnection: NativeConnection;
let sync: SyncTarget;
let accountDeps: AccountDeps;
let audience: string;
/** Accounts of this file: the schedule fan-outs only see these (the test database is shared). */
const accountIds: string[] = [];
const syncQueue = `sync-test-${randomUUID().slice(0, 8)}`;

const question = (subject: string) => ({
  from: 'Alice Example <alice@partner.example>',
  subject,
  text: 'Hi,\n\nCould you send me the signed contract by Friday?\n\nThanks, Alice',
});

function syncStatus(accountId: string): Promise<SyncStatus> {
  return h.client.workflow.getHandle(syncWorkflowId(accountId)).query(syncStatusQuery);
}

async function connectEmulatorAccount(email: string): Promise<string> {
  const created = await h.gmail.control.createAccount({ email });
  const account = await registerAccount(accountDeps, { refresh_token: created.refreshToken });
  if (!accountIds.includes(account.id)) accountIds.push(account.id);
  return account.id;
}

function signedPushToken(claims: Record<string, unknown> = {}): string {
  const iat = Math.floor(Date.now() / 1000);
  return h.gmail.world.keys.signJwt({
    iss: 'https://accounts.google.com',
    aud: audience,
    email: PUSH_EMAIL,
    email_verified: true,
    sub: '1234567890',
    iat,
    exp: iat + 3600,
    ...claims,
  });
}

function envelope(data: unknown): string {
  return JSON.stringify({
    message: {
      data: Buffer.from(JSON.stringify(data)).toString('base64'),
      messageId: '1',
      publishTime: new Date().toISOString(),
    },
    subscription: 'projects/durable-inbox-test/subscriptions/gmail-push',
  });
}

function post(body: string, token?: string): Promise<Response> {
  return fetch(`${http.url}${PUSH_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
}

beforeAll(async () => {
  discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  webhookId = webhook.id;
  h = await startInboxHarness({ env: { DISCORD_WEBHOOK_URL: webhook.url } });
  await h.startWorkers();
  sync = { client: h.client, taskQueue: syncQueue };
  const vault = new TokenVault(Buffer.from(h.cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
  const oauth = gmailOAuthSettings(h.cfg);

  nativeConnection = await NativeConnection.connect({ address: h.cfg.TEMPORAL_ADDRESS });
  syncWorker = await Worker.create({
    connection: nativeConnection,
    taskQueue: syncQueue,
    workflowBundle: await getWorkflowBundle(),
    activities: createSyncActivities({
      prisma: h.prisma,
      accounts: mailboxAccounts(h.prisma, vault, oauth),
      client: h.client,
      threadSettings: h.settings,
      syncTaskQueue: syncQueue,
      threadTaskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      pushTopic: TOPIC,
      accountIds,
      limiter: new QuotaLimiter(prismaExecutor(h.prisma), quotaOptionsFromConfig(h.cfg)),
      timerLabels: { prefixes: DEFAULT_TIMER_LABEL_PREFIXES, time: h.cfg },
    }),
    dataConverter: createDataConverter(fixedTestPayloadKeys()),
  });
  syncRunning = syncWorker.run();

  // The push endpoint, and the emulator's Pub/Sub subscription pointing at it.
  let routes: Record<string, ReturnType<typeof pushRoute>> = {};
  http = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    routes: { [`POST ${PUSH_PATH}`]: (req, res) => routes[`POST ${PUSH_PATH}`]!(req, res) },
  });
  audience = `${http.url}${PUSH_PATH}`;
  routes = {
    [`POST ${PUSH_PATH}`]: pushRoute({
      prisma: h.prisma,
      sync,
      audience,
      serviceAccountEmail: PUSH_EMAIL,
      certsUrl: `${h.gmail.url}/oauth2/v1/certs`,
    }),
  };
  await h.gmail.control.setPush({ topics: { [TOPIC]: { endpoint: audience } }, coalesceMs: 200 });

  accountDeps = { prisma: h.prisma, vault, oauth, sync, labels: h.settings.labels, pushTopic: TOPIC };
  // The harness's account, connected as the CLI would: labels, cursor, watch, sync workflow.
  await connectEmulatorAccount(h.email);
});

afterAll(async () => {
  await http?.close();
  if (syncWorker?.getState() === 'RUNNING') syncWorker.shutdown();
  await syncRunning;
  await nativeConnection?.close();
  await h?.close();
  await discord?.close();
});

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
      taskQueue: syncQueue,
      idPrefix: prefix,
    },
  }).filter((d) => d.scheduleId.startsWith(prefix));
  return { prefix, definitions };
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
      for (const d of definitions)
        await h.client.schedule
          .getHandle(d.scheduleId)
          .delete()
          .catch(() => undefined);
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
      for (const d of definitions)
        await h.client.schedule
          .getHandle(d.scheduleId)
          .delete()
          .catch(() => undefined);
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
      await h.client.schedule
        .getHandle(definition!.scheduleId)
        .delete()
        .catch(() => undefined);
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
      taskQueue: syncQueue,
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

describe('revoked grant', () => {
  it('marks the account needs_reauth, pauses its sync without crashing, and resumes after a reconnect', async () => {
    const email = `revoked-${randomUUID().slice(0, 8)}@example.com`;
    // Pushes carry this test (a test before it that timed out may have left them dropped).
    await h.gmail.control.setPush({ dropRate: 0 });
    const accountId = await connectEmulatorAccount(email);
    await waitUntil('sync started', async () => ((await syncStatus(accountId)).stats.passes > 0 ? true : undefined));

    await h.gmail.control.revoke(email);
    const { threadId } = await h.gmail.control.deliver(email, { to: [email], ...question('While revoked') });
    const paused = await waitUntil(
      'paused',
      async () => {
        const s = await syncStatus(accountId);
        return s.paused ? s : undefined;
      },
      { timeoutMs: 45_000 },
    );
    expect(paused.pausedReason).toMatch(/GmailAuthError|AccountNotConnectedError/);
    expect((await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).status).toBe('needs_reauth');
    const description = await h.client.workflow.getHandle(syncWorkflowId(accountId)).describe();
    expect(description.status.name).toBe('RUNNING');

    // The user reconnects: same cursor, the sync resumes and the mail that came meanwhile is handled.
    const cursor = (await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).historyId;
    const again = await connectEmulatorAccount(email);
    expect(again).toBe(accountId);
    const row = await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(row.status).toBe('active');
    expect(row.historyId).toBe(cursor);
    await waitUntil('thread started', () => h.client.workflow.getHandle(`thread/${accountId}/${threadId}`).describe(), {
      timeoutMs: 45_000,
    });
    expect((await syncStatus(accountId)).paused).toBe(false);
    await recordWorkflowHistory(h.client.workflow.getHandle(syncWorkflowId(accountId)), 'sync-reauth-pause-resume');
  });
});

describe('accounts', () => {
  it('connects through the OAuth2 loopback flow (accounts connect), seals the tokens and starts the sync', async () => {
    const email = `loopback-${randomUUID().slice(0, 8)}@example.com`;
    const cfg = { ...h.cfg, GOOGLE_OAUTH_AUTH_URL: `${h.gmail.url}/o/oauth2/v2/auth`, GMAIL_PUSH_TOPIC: TOPIC };
    const lines: string[] = [];
    let consentUrl = '';
    const account = await connectCommand(
      { cfg, prisma: h.prisma, sync },
      {
        out: (l) => lines.push(l),
        // The emulator's consent screen agrees at once and redirects to the CLI's loopback server.
        openUrl: async (url) => {
          consentUrl = url;
          await fetch(url);
        },
      },
      email,
    );
    accountIds.push(account.id);
    const params = new URL(consentUrl).searchParams;
    expect(params.get('access_type')).toBe('offline');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('scope')!.split(' ')).toEqual(
      expect.arrayContaining(['https://www.googleapis.com/auth/gmail.modify']),
    );
    expect(account.email).toBe(email);
    expect(lines.join('\n')).toContain(`Connected ${email}`);
    const row = await h.prisma.account.findUniqueOrThrow({ where: { id: account.id } });
    expect(row.status).toBe('active');
    expect(row.watchExpiration!.getTime()).toBeGreaterThan(Date.now());
    const tokens = accountDeps.vault.open(row.encryptedTokens!);
    expect(tokens.refresh_token).toBeTruthy();
    expect(Buffer.from(row.encryptedTokens!).includes(tokens.refresh_token)).toBe(false);
    const labels = (await h.gmail.control.getState(email)).labels.map((l) => l.name);
    expect(labels).toEqual(expect.arrayContaining(Object.values(h.settings.labels)));
    await waitUntil('sync started', async () => ((await syncStatus(account.id)).stats.passes > 0 ? true : undefined));
  });

  it('creates demo accounts in the emulator idempotently', async () => {
    const email = `demo-${randomUUID().slice(0, 8)}@example.com`;
    const first = await ensureDemoAccount(accountDeps, { url: h.gmail.url }, email);
    accountIds.push(first.id);
    const second = await ensureDemoAccount(accountDeps, { url: h.gmail.url }, email);
    expect(second.id).toBe(first.id);
    expect((await h.gmail.control.getState(email)).watch?.topicName).toBe(TOPIC);
  });

  it('disconnects an account (watch stopped, grant revoked, tokens deleted, sync stopped) and connect resumes it', async () => {
    const email = `disconnect-${randomUUID().slice(0, 8)}@example.com`;
    const accountId = await connectEmulatorAccount(email);
    await waitUntil('sync started', async () => ((await syncStatus(accountId)).stats.passes > 0 ? true : undefined));
    const before = await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    const { refresh_token } = accountDeps.vault.open(before.encryptedTokens!);
    expect(h.gmail.world.push.getWatch(email)).toBeDefined();
    const stale = new GmailAccounts(h.prisma, accountDeps.vault, accountDeps.oauth); // a worker's cached client
    await stale.call(accountId, (g) => g.getProfile());

    const lines: string[] = [];
    const cfg = { ...h.cfg, GOOGLE_OAUTH_REVOKE_URL: `${h.gmail.url}/revoke` };
    await disconnectCommand({ cfg, prisma: h.prisma, sync }, { out: (l) => lines.push(l) }, email.toUpperCase());
    expect(lines[0]).toBe(
      `Disconnected ${email}: push watch stopped, grant revoked at Google, tokens deleted, sync stopped.`,
    );
    const row = await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(row).toMatchObject({
      status: 'disconnected',
      encryptedTokens: null,
      watchExpiration: null,
      historyId: before.historyId,
    });
    expect(h.gmail.world.push.getWatch(email)).toBeUndefined();
    const refresh = await fetch(`${h.gmail.url}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token,
        client_id: accountDeps.oauth.clientId,
        client_secret: accountDeps.oauth.clientSecret,
      }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.text()).toContain('invalid_grant');
    await waitUntil('sync cancelled', async () => {
      const { status } = await h.client.workflow.getHandle(syncWorkflowId(accountId)).describe();
      return status.name === 'CANCELLED' ? true : undefined;
    });
    // A worker still holding a client of the revoked grant fails for good (no retry loop), and the
    // account stays disconnected rather than turning needs_reauth.
    // (First the revoked access token's 401, which an activity would retry; then the refresh's invalid_grant.)
    await expect(stale.call(accountId, (g) => g.getProfile())).rejects.toMatchObject({ name: 'GmailAuthError' });
    await expect(stale.call(accountId, (g) => g.getProfile())).rejects.toMatchObject({
      name: 'GmailAuthError',
      revoked: true,
    });
    expect((await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).status).toBe('disconnected');
    const listed: string[] = [];
    await listCommand({ prisma: h.prisma }, { out: (l) => listed.push(l) });
    expect(listed.join('\n')).toContain(`${email} disconnected: nothing is read or written`);

    // Mail that arrives meanwhile waits in Gmail; connecting again picks it up from the kept cursor.
    const { threadId } = await h.gmail.control.deliver(email, { to: [email], ...question('While disconnected') });
    expect(await connectEmulatorAccount(email)).toBe(accountId);
    expect((await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).status).toBe('active');
    await waitUntil('thread started', () => h.client.workflow.getHandle(`thread/${accountId}/${threadId}`).describe(), {
      timeoutMs: 45_000,
    });
    expect((await h.client.workflow.getHandle(syncWorkflowId(accountId)).describe()).status.name).toBe('RUNNING');
  });

  it('keeps the new grant when a worker still holding a client of the old one refreshes its token', async () => {
    const email = `regrant-${randomUUID().slice(0, 8)}@example.com`;
    const storedGrant = async (id: string) =>
      accountDeps.vault.open((await h.prisma.account.findUniqueOrThrow({ where: { id } })).encryptedTokens!)
        .refresh_token;
    // Every call refreshes its access token (google-auth-library refreshes ahead of expiry).
    await h.gmail.control.setOAuth({ accessTokenTtlSeconds: 1 });
    try {
      const id = await connectEmulatorAccount(email);
      const worker = new GmailAccounts(h.prisma, accountDeps.vault, accountDeps.oauth);
      await worker.call(id, (g) => g.getProfile()); // this "worker" caches a client of the first grant
      const first = await storedGrant(id);
      expect(await connectEmulatorAccount(email)).toBe(id); // the user connects again: a second grant
      const second = await storedGrant(id);
      expect(second).not.toBe(first);

      // Refreshes with the first grant, still valid at Google; the refreshed tokens are saved in the
      // background (GmailAccounts.saveRefreshed): wait for that save to be done.
      const saves = vi.spyOn(worker as unknown as { saveRefreshed(...args: unknown[]): Promise<void> }, 'saveRefreshed');
      await worker.call(id, (g) => g.getProfile());
      await waitUntil('the save of the refreshed tokens', async () => saves.mock.results.length > 0, { everyMs: 10 });
      await saves.mock.results[0]!.value;
      saves.mockRestore();
      expect(await storedGrant(id)).toBe(second);
    } finally {
      await h.gmail.control.setOAuth({ accessTokenTtlSeconds: 3599 });
    }
  });

  it('refuses to disconnect an account it does not know, with exit 2', async () => {
    const lines: string[] = [];
    const code = await runAccountsCli(
      { ...h.cfg, LOG_LEVEL: 'warn' },
      ['disconnect', `nobody-${randomUUID().slice(0, 8)}@example.com`],
      { out: (l) => lines.push(l) },
    );
    expect(code).toBe(2);
    expect(lines.join('\n')).toMatch(
      /no account nobody-.* \(see npm run cli -- accounts list\)\nusage: npm run cli -- accounts/,
    );
    expect(await runAccountsCli(h.cfg, ['disconnect'], { out: (l) => lines.push(l) })).toBe(2);
    expect(lines.at(-1)).toMatch(/^durable-inbox accounts: disconnect needs one account \(its email or id\)\nusage: /);
  });

  it('lists accounts and says which need to be reconnected', async () => {
    const email = `list-${randomUUID().slice(0, 8)}@example.com`;
    const id = await connectEmulatorAccount(email);
    await h.prisma.account.update({ where: { id }, data: { status: 'needs_reauth' } });
    const lines: string[] = [];
    await listCommand({ prisma: h.prisma }, { out: (l) => lines.push(l) });
    const text = lines.join('\n');
    expect(text).toMatch(new RegExp(`${email}\\s+needs_reauth`));
    expect(text).toContain(`accounts connect --login-hint ${email}`);
  });
});
