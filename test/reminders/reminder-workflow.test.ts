// The reminder workflow end to end: the real dev server, Postgres, the Gmail and Discord emulators
// and the product's workers. Occurrences a few seconds apart (an RRULE with FREQ=SECONDLY) so the
// durable timers fire within the test; the calendar arithmetic of months and daylight saving is
// recurrence.test.ts's and the CLI's (test/cli/reminders.test.ts).
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { reminderWorkflowId } from '../../src/reminders/contracts.js';
import { listOccurrences, loadReminder, type OccurrenceRow } from '../../src/reminders/reminder-store.js';
import { addReminder, changeReminderState, type ReminderDeps } from '../../src/reminders/reminders.js';
import type { RecurrenceSpec } from '../../src/reminders/recurrence.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { untilTime, waitUntil } from '../helpers/wait-until.js';
import { untilQuiet } from '../helpers/workflow-quiet.js';

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhookId: string;

beforeAll(async () => {
  discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'reminders' });
  webhookId = webhook.id;
  h = await startInboxHarness({ env: { DISCORD_WEBHOOK_URL: webhook.url, LABEL_REMINDERS: 'Reminders' } });
  await h.startWorkers({ llm: false });
});

afterAll(async () => {
  await h?.close();
  await discord?.close();
});

function deps(over: Partial<ReminderDeps> = {}): ReminderDeps {
  return {
    db: prismaExecutor(h.prisma),
    client: h.client,
    taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
    gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE,
    catchUpWindowMs: 60_000,
    ...over,
  };
}

/** `HH:MM:SS` in UTC, `seconds` from now. */
function inSeconds(seconds: number): string {
  return DateTime.utc().plus({ seconds }).toFormat('HH:mm:ss');
}

async function add(title: string, spec: RecurrenceSpec, over: Partial<ReminderDeps> = {}) {
  return addReminder(deps(over), { accountId: h.accountId, title, spec, accountZone: 'UTC' });
}

const occurrences = async (id: string): Promise<OccurrenceRow[]> => (await listOccurrences(prismaExecutor(h.prisma), id, 100)).reverse();
const inboxMessages = async (title: string) => (await h.gmail.control.getState(h.email)).messages.filter((m) => m.subject === `Reminder: ${title}`);
const discordPosts = async (title: string) => (await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(title));

describe('reminder workflow', () => {
  it('delivers every occurrence once into one labelled inbox thread and to Discord, marks it sent, continues as new, ends when removed', async () => {
    const title = 'Water the plants';
    const reminder = await add(title, { at: inSeconds(3), rrule: 'FREQ=SECONDLY;INTERVAL=3' }, { occurrencesPerRun: 2 });
    const handle = h.client.workflow.getHandle(reminderWorkflowId(reminder.id));
    const firstRunId = (await handle.describe()).runId;

    const sent = await waitUntil('three occurrences sent', async () => {
      const rows = (await occurrences(reminder.id)).filter((o) => o.state === 'sent');
      return rows.length >= 3 && rows;
    }, { timeoutMs: 40_000 });
    expect(await changeReminderState(deps(), reminder.id, 'removed')).toBe(true);
    expect(await handle.result()).toEqual({ ended: 'removed' });

    const rows = await occurrences(reminder.id);
    expect(rows.every((o) => o.state === 'sent' && o.emailMessageId && o.discordMessageId)).toBe(true);
    // Three seconds apart, each at its time.
    for (let i = 1; i < sent.length; i++) expect(sent[i]!.dueAt.getTime() - sent[i - 1]!.dueAt.getTime()).toBe(3000);
    const mail = await inboxMessages(title);
    expect(mail).toHaveLength(rows.length);
    expect(new Set(mail.map((m) => m.threadId)).size).toBe(1);
    const labelId = (await h.gmail.control.getState(h.email)).labels.find((l) => l.name === 'Reminders')!.id;
    expect(mail.every((m) => m.labelIds.includes('INBOX') && m.labelIds.includes('UNREAD') && m.labelIds.includes(labelId))).toBe(true);
    expect((await loadReminder(prismaExecutor(h.prisma), reminder.id))!.gmailThreadId).toBe(mail[0]!.threadId);
    expect(await discordPosts(title)).toHaveLength(rows.length);
    // Two occurrences per run here: the run that ended is not the first.
    expect((await handle.describe()).runId).not.toBe(firstRunId);
    await recordWorkflowHistory(handle, 'reminder-delivered-removed');
  }, 90_000);

  it('pause delivers nothing, not even late; resume goes on from then', async () => {
    const title = 'Stretch';
    const reminder = await add(title, { at: inSeconds(2), rrule: 'FREQ=SECONDLY;INTERVAL=2' });
    await waitUntil('one sent', async () => (await occurrences(reminder.id)).some((o) => o.state === 'sent'), { timeoutMs: 20_000 });
    expect(await changeReminderState(deps(), reminder.id, 'paused')).toBe(true);
    // The pause taken: the workflow handled the signal and has nothing under way (an occurrence in
    // flight when it was paused has landed).
    const handle = h.client.workflow.getHandle(reminderWorkflowId(reminder.id));
    await untilQuiet([handle]);
    const pausedAt = Date.now();
    const before = (await occurrences(reminder.id)).length;
    // Two occurrences' times (every 2 s) go by while paused; the workflow still has nothing under way.
    await untilTime(pausedAt + 5000);
    await untilQuiet([handle]);
    expect((await occurrences(reminder.id)).length).toBe(before);

    const resumedAt = Date.now();
    expect(await changeReminderState(deps(), reminder.id, 'active')).toBe(true);
    await waitUntil('sent again after resuming', async () => (await occurrences(reminder.id)).some((o) => o.dueAt.getTime() > resumedAt && o.state === 'sent'), { timeoutMs: 20_000 });
    await changeReminderState(deps(), reminder.id, 'removed');
    await h.client.workflow.getHandle(reminderWorkflowId(reminder.id)).result();
    const rows = await occurrences(reminder.id);
    // Nothing due in the paused stretch was delivered or recorded.
    expect(rows.filter((o) => o.dueAt.getTime() > pausedAt && o.dueAt.getTime() < resumedAt)).toEqual([]);
    expect(rows.every((o) => o.state === 'sent')).toBe(true);
    expect(await inboxMessages(title)).toHaveLength(rows.length);
    await recordWorkflowHistory(h.client.workflow.getHandle(reminderWorkflowId(reminder.id)), 'reminder-paused-resumed');
  }, 90_000);

  it('a missed occurrence is delivered once when the workers are back within the catch-up window, and skipped (recorded) after it', async () => {
    const within = await add('Within the window', { at: inSeconds(4) }, { catchUpWindowMs: 120_000 });
    const past = await add('Past the window', { at: inSeconds(4) }, { catchUpWindowMs: 1_000 });
    // Both workflows sleep on their timers; the workers stop and the timers fire while none runs.
    const planned = await waitUntil('both planned', async () => {
      const rows = await Promise.all([within.id, past.id].map((id) => loadReminder(prismaExecutor(h.prisma), id)));
      return rows.every((r) => r?.nextAt) && rows.map((r) => r!.nextAt!.getTime());
    }, { timeoutMs: 10_000 });
    await h.stopWorkers();
    // Both fall due while no worker runs; the workers come back past the 1 s window, within the 120 s one.
    await untilTime(Math.max(...planned) + 3000);
    await h.startWorkers({ llm: false });
    for (const id of [within.id, past.id]) await h.client.workflow.getHandle(reminderWorkflowId(id)).result();

    const [late] = await occurrences(within.id);
    expect(late).toMatchObject({ state: 'sent' });
    expect(await inboxMessages('Within the window')).toHaveLength(1);
    const [skipped] = await occurrences(past.id);
    expect(skipped).toMatchObject({ state: 'skipped', emailMessageId: null });
    expect(skipped!.notes.join()).toMatch(/^missed: \d+ s late, past the catch-up window of 1 s/);
    expect(await inboxMessages('Past the window')).toHaveLength(0);
    expect(await discordPosts('Past the window')).toHaveLength(0);
    expect((await loadReminder(prismaExecutor(h.prisma), past.id))!.state).toBe('finished');
    await recordWorkflowHistory(h.client.workflow.getHandle(reminderWorkflowId(within.id)), 'reminder-late-delivered');
    await recordWorkflowHistory(h.client.workflow.getHandle(reminderWorkflowId(past.id)), 'reminder-missed-skipped');
  }, 90_000);
});
