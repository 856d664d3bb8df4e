// Backfill alerts reach someone: a real backfill whose poison messages push the metadata estimate
// past its budget raises a critical alert, journaled once, posted to the Discord webhook (the
// emulator) and put into the account's own inbox (the Gmail emulator), and shown by the health
// endpoint's source and the metrics. Delivery again sends nothing twice; a second alert of the same
// kind and level within the hour posts to Discord but emails no one; a deleted webhook is noted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlertDeliveryActivities } from '../../src/backfill/alert-delivery.js';
import { currentBackfillAlerts, journalAlertLevels, loadAlert } from '../../src/backfill/alert-journal.js';
import { judgeMetadata } from '../../src/backfill/alerts.js';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillProgressQuery, backfillWorkflowId } from '../../src/backfill/contracts.js';
import { startDiscordEmulator, type RunningDiscordEmulator, type WebhookRecord } from '../../emulators/discord/index.js';
import { backfillAlerts } from '../../src/http/health-reasons.js';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';

const FAST = { startRate: 50_000, maxRate: 50_000, maxConcurrency: 8 };

/** The account's inbox messages the alerts put there. */
function alertEmails(h: BackfillHarness) {
  return h.emulator.world
    .getAccount(h.email)
    .mailbox.allMessages()
    .filter((m) => m.subject.startsWith('[durable-inbox] Backfill'));
}

describe('backfill alerts delivered', () => {
  let h: BackfillHarness;
  let discord: RunningDiscordEmulator;
  let webhook: WebhookRecord;

  beforeAll(async () => {
    discord = await startDiscordEmulator();
    webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
    // A budget the first bad-message record alone fills past 80 %.
    h = await createBackfillHarness({
      messages: 120,
      spanDays: 3,
      emulator: { quota: false },
      limiter: FAST,
      alerts: { metadataBudgetBytes: 100, discordWebhookUrl: webhook.url, emailEveryMs: 3600_000 },
    });
  });
  afterAll(async () => {
    await h?.close();
    await discord?.close();
  });

  it('raises a critical metadata alert once and delivers it to Discord and to the mailbox', async () => {
    const all = listableMessages(h.emulator, h.email);
    const poison = [all[5]!.id, all[60]!.id, all[100]!.id];
    await h.emulator.control.setFaults({ poison: poison.map((messageId) => ({ messageId, mode: 'error' as const })) });
    await h.startProcess();
    const handle = await h.client.workflow.start(backfillWorkflow, {
      workflowId: backfillWorkflowId(h.accountId),
      taskQueue: h.taskQueue,
      args: [{ accountId: h.accountId, granularity: 'day', rangeEnd: Date.now() + 60_000, batchSize: 20, window: 3, taskQueues: { workflows: h.taskQueue, gmail: h.taskQueue } }],
    });
    const result = await handle.result();
    expect(result.counters.bad).toBe(poison.length);

    // Journaled once: one level change (ok → critical) for this backfill, delivered.
    const rows = await h.prisma.backfillAlert.findMany({ where: { accountId: h.accountId } });
    expect(rows.map((r) => [r.kind, r.level])).toEqual([['metadata', 'critical']]);
    const [alert] = rows;
    expect(alert!.detail).toMatch(/^metadata \d+ of 100 bytes, .* \(critical at 80\.00 %\)$/);
    expect(alert!.deliveredAt).not.toBeNull();
    expect(alert!.deliveryNotes).toEqual([]);

    const posted = await discord.control.messages(webhook.id);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.message.content).toContain(`**Backfill critical: metadata budget** in \`${h.email}\``);
    expect(posted[0]!.message.id).toBe(alert!.discordMessageId);

    const emails = alertEmails(h);
    expect(emails).toHaveLength(1);
    expect(emails[0]!.id).toBe(alert!.emailMessageId);
    expect(emails[0]!.subject).toBe('[durable-inbox] Backfill critical: metadata budget');
    expect(emails[0]!.labelIds).toEqual(expect.arrayContaining(['INBOX', 'UNREAD']));
    expect(emails[0]!.raw.toString('utf8')).toMatch(/^Auto-Submitted: auto-generated\r$/m);

    // The progress query, the health endpoint's source and the metrics say so too.
    const progress = await handle.query(backfillProgressQuery);
    expect(progress.alert).toBe('critical');
    // The latest measurement (the journal keeps the one that changed the level).
    expect(progress.alerts.metadata?.detail).toMatch(/^metadata \d+ of 100 bytes, .* \(critical at 80\.00 %\)$/);
    const db = prismaExecutor(h.prisma);
    const reasons = (await backfillAlerts(db, new Date())).filter((r) => r.accountId === h.accountId);
    expect(reasons).toEqual([{ kind: 'backfill_alert', accountId: h.accountId, level: 'critical', message: `${h.email}: backfill metadata critical: ${alert!.detail}` }]);
    const metrics = await renderMetrics(db);
    expect(metrics).toContain(`durable_inbox_backfill_alert_level{account="${h.accountId}",kind="metadata"} 2`);
    expect(metrics).toMatch(/^durable_inbox_backfill_alerts_total\{kind="metadata",level="critical"\} [1-9]/m);
    expect(metrics).toMatch(/^durable_inbox_bad_messages_total [3-9]/m);
  }, 180_000);

  it('delivers each alert once, emails at most once an hour per kind and level, and notes a refusing webhook', async () => {
    const db = prismaExecutor(h.prisma);
    const accounts = h.gmailAccounts();
    const deliver = createAlertDeliveryActivities({ db, accounts, discordWebhookUrl: webhook.url, emailEveryMs: 3600_000 });

    // The alert of the first test, delivered again: nothing new is sent.
    const [first] = await h.prisma.backfillAlert.findMany({ where: { accountId: h.accountId } });
    expect(await deliver.backfillDeliverAlert({ alertId: first!.id })).toEqual({ discord: true, email: true });
    expect(await discord.control.messages(webhook.id)).toHaveLength(1);
    expect(alertEmails(h)).toHaveLength(1);

    // A later backfill's critical metadata alert within the hour: Discord yes, email rate-limited.
    const [second] = await journalAlertLevels(db, { accountId: h.accountId, backfillId: 'later/1', judgements: { metadata: judgeMetadata(95, 100) } });
    expect(await deliver.backfillDeliverAlert({ alertId: second!.id })).toEqual({ discord: true, email: false });
    expect(await discord.control.messages(webhook.id)).toHaveLength(2);
    expect(alertEmails(h)).toHaveLength(1);
    expect((await loadAlert(db, second!.id))!.deliveryNotes).toEqual([expect.stringMatching(/^email: rate-limited/)]);

    // Another level is another alert: warn emails; the webhook was deleted meanwhile, which is noted.
    await discord.control.deleteWebhook(webhook.id);
    const [third] = await journalAlertLevels(db, { accountId: h.accountId, backfillId: 'later/1', judgements: { metadata: judgeMetadata(60, 100) } });
    expect(await deliver.backfillDeliverAlert({ alertId: third!.id })).toEqual({ discord: false, email: true });
    expect(alertEmails(h).map((m) => m.subject)).toContain('[durable-inbox] Backfill warn: metadata budget');
    expect((await loadAlert(db, third!.id))!.deliveryNotes).toEqual([expect.stringMatching(/^discord: Discord refused the message: 404/)]);
    // Only the current backfill's levels count (backfill_state names the first test's backfill).
    expect((await currentBackfillAlerts(db)).filter((a) => a.accountId === h.accountId).map((a) => a.level)).toEqual(['critical']);
  });
});
