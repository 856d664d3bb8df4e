// One e-mail and one Discord post per occurrence, whatever fails: the Gmail worker (its own OS
// process) is killed with SIGKILL after Gmail took the reminder's e-mail and before the delivery
// was journaled or the occurrence marked sent. The retry, on a new worker, finds the e-mail by its
// Message-ID (the occurrence's idempotency key) instead of inserting it again, posts to Discord
// once, and the occurrence is marked sent. Real dev server, Postgres and emulators.
import { DateTime } from 'luxon';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { reminderWorkflowId } from '../../src/reminders/contracts.js';
import { listOccurrences } from '../../src/reminders/reminder-store.js';
import { addReminder } from '../../src/reminders/reminders.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { killWorker, spawnWorker } from '../helpers/worker-process.js';

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhook: { id: string; url: string };

beforeAll(async () => {
  discord = await startDiscordEmulator();
  webhook = await discord.control.createWebhook({ name: 'reminders' });
  h = await startInboxHarness({ env: { DISCORD_WEBHOOK_URL: webhook.url } });
  await h.startWorkers({ gmail: false, llm: false });
});

afterAll(async () => {
  await h?.close();
  await discord?.close();
});


it('delivers once when the Gmail worker dies between Gmail taking the e-mail and the occurrence being marked sent', async () => {
  const title = 'Renew the passport';
  const inbox = async () => (await h.gmail.control.getState(h.email)).messages.filter((m) => m.subject === `Reminder: ${title}`);
  let worker = spawnWorker(h, 'gmail-worker');
  // Gmail takes 10 s to answer the insert: the worker dies waiting; Gmail stores the message all the same.
  await h.gmail.control.setFaults({ latency: [{ method: 'messages.insert', distribution: { type: 'fixed', ms: 10_000 } }] });
  try {
    const reminder = await addReminder(
      { db: prismaExecutor(h.prisma), client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE, catchUpWindowMs: 300_000, deliveryTimeoutMs: 15_000 },
      { accountId: h.accountId, title, spec: { at: DateTime.utc().plus({ seconds: 3 }).toFormat('HH:mm:ss') }, accountZone: 'UTC' },
    );
    // The worker dies once Gmail holds the insert.
    await waitUntil('the insert in flight at Gmail', async () => (await h.gmail.control.metrics()).inFlight['messages.insert'] === 1, { timeoutMs: 60_000, everyMs: 50 });
    expect(await inbox()).toHaveLength(0);
    await killWorker(worker);
    await waitUntil('Gmail to have taken the e-mail', async () => (await inbox()).length === 1, { timeoutMs: 20_000, everyMs: 100 });
    const [cut] = await listOccurrences(prismaExecutor(h.prisma), reminder.id);
    expect(cut).toMatchObject({ state: 'due', emailMessageId: null, discordMessageId: null });
    await h.gmail.control.setFaults({ latency: [] });

    worker = spawnWorker(h, 'gmail-worker');
    expect(await h.client.workflow.getHandle(reminderWorkflowId(reminder.id)).result()).toEqual({ ended: 'finished' });
    const mail = await inbox();
    expect(mail).toHaveLength(1);
    const [done] = await listOccurrences(prismaExecutor(h.prisma), reminder.id);
    expect(done).toMatchObject({ state: 'sent', emailMessageId: mail[0]!.id });
    expect((await discord.control.messages(webhook.id)).filter((m) => m.message.content.includes(title))).toHaveLength(1);
  } finally {
    await killWorker(worker);
  }
}, 120_000);
