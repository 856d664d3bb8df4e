// The Temporal server stops and starts again while a scheduled run is mid-way (its model call in
// flight) and while a reminder falls due; the workers and everything else stay up. The run completes
// once and delivers one report; the reminder due during the outage, within its catch-up window, is
// delivered once when the server is back. A dev server of this file's own (SQLite: it keeps its
// state across the restart); Postgres, Gmail and Anthropic emulators as everywhere.
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { reminderWorkflowId } from '../../src/reminders/contracts.js';
import { listOccurrences, loadReminder } from '../../src/reminders/reminder-store.js';
import { addReminder } from '../../src/reminders/reminders.js';
import { scheduleIdOf } from '../../src/schedules/contracts.js';
import { listScheduleRuns } from '../../src/schedules/schedule-store.js';
import { addUserSchedule } from '../../src/schedules/user-schedules.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { startOwnDevServer, type OwnDevServer } from '../helpers/own-dev-server.js';
import { untilTime, waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;
let server: OwnDevServer;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  server = await startOwnDevServer();
  h = await startInboxHarness({ env: { TEMPORAL_ADDRESS: server.address, SCHEDULE_JITTER: '0s' } });
  await h.startWorkers();
}, 90_000);

afterAll(async () => {
  await server?.start(); // a failed test may have left it stopped
  await h?.close();
  await server?.close();
});

/** Stops the server for `ms`, then starts it again (same port, same state). */
async function outage(ms: number): Promise<void> {
  await server.stop();
  await new Promise((r) => setTimeout(r, ms));
  await server.start();
}

describe('a dev-server restart', () => {
  it('during a scheduled run: the run completes once and delivers one report', async () => {
    // The model takes 4 s to answer: the server goes down while the run waits for it.
    h.anthropic.configure({ latencyMs: 4000 });
    const marker = h.anthropic.script('restart-brief', [{ text: 'All quiet today.' }]);
    await saveAgentProfile(db(), { name: 'restart-brief', description: '', instructions: `Write the brief. ${marker}`, tools: ['search_mailbox'], maxSteps: 3, sendsNeedApproval: true });
    const row = await addUserSchedule(h.client, db(), {
      accountId: h.accountId, name: 'restart brief', profile: 'restart-brief', prompt: 'Brief me.', timing: { at: '07:30', days: ['mon'] }, timeZone: 'UTC', label: 'Brief', discord: false,
    }, {
      catchupWindowMs: 3600_000, jitterMs: 0,
      taskQueues: { workflow: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE },
      // An answer the server never took is asked for again after this long.
      activityTimeouts: { llmMs: 10_000 },
    });
    try {
      await h.client.schedule.getHandle(scheduleIdOf(row.id)).trigger();
      await waitUntil('the model call in flight', async () => (h.anthropic.scripts().find((s) => s.name === 'restart-brief')?.calls ?? 0) >= 1, { timeoutMs: 60_000, everyMs: 50 });
      expect((await listScheduleRuns(db(), row.id))[0]).toMatchObject({ status: 'running', finishedAt: null });
      await outage(3000);
      h.anthropic.configure({ latencyMs: 0 });

      const [run] = await waitUntil('the run to finish', async () => {
        const runs = await listScheduleRuns(db(), row.id);
        return runs[0]?.finishedAt ? runs : undefined;
      }, { timeoutMs: 90_000 });
      expect(run).toMatchObject({ status: 'delivered', steps: 1 });
      expect(run!.output).toContain('All quiet today.');
      // Its workflow closed and the Schedule started it alone and runs nothing: one run, one report,
      // one model step recorded.
      await h.client.workflow.getHandle(run!.workflowId).result();
      const schedule = await waitUntil('the Schedule to run nothing', async () => {
        const { info } = await h.client.schedule.getHandle(scheduleIdOf(row.id)).describe();
        return info.runningActions.length === 0 && info;
      });
      expect(schedule.recentActions.map((a) => a.action.workflow.workflowId)).toEqual([run!.workflowId]);
      expect(await listScheduleRuns(db(), row.id)).toHaveLength(1);
      const reports = (await h.gmail.control.getState(h.email)).messages.filter((m) => m.subject === '[durable-inbox] restart brief');
      expect(reports.map((m) => m.id)).toEqual([run!.gmailMessageId]);
      expect(await h.prisma.agentStep.count({ where: { scheduleId: row.id } })).toBe(1);
    } finally {
      h.anthropic.configure({ latencyMs: 0 });
      await h.client.schedule.getHandle(scheduleIdOf(row.id)).delete().catch(() => {});
    }
  }, 180_000);

  it('while a reminder falls due: delivered once when the server is back, within the catch-up window', async () => {
    const title = 'Call the plumber';
    const reminder = await addReminder(
      { db: db(), client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE, catchUpWindowMs: 300_000 },
      { accountId: h.accountId, title, spec: { at: DateTime.utc().plus({ seconds: 6 }).toFormat('HH:mm:ss') }, accountZone: 'UTC' },
    );
    const planned = await waitUntil('the occurrence planned', async () => (await loadReminder(db(), reminder.id))?.nextAt ?? undefined, { timeoutMs: 20_000 });
    // Down before it is due, back well after it.
    expect(Date.now()).toBeLessThan(planned.getTime());
    await server.stop();
    await untilTime(planned.getTime() + 5000);
    await server.start();

    expect(await h.client.workflow.getHandle(reminderWorkflowId(reminder.id)).result()).toEqual({ ended: 'finished' });
    const occurrences = await listOccurrences(db(), reminder.id);
    expect(occurrences).toHaveLength(1);
    expect(occurrences[0]).toMatchObject({ state: 'sent' });
    const mail = (await h.gmail.control.getState(h.email)).messages.filter((m) => m.subject === `Reminder: ${title}`);
    expect(mail.map((m) => m.id)).toEqual([occurrences[0]!.emailMessageId]);
  }, 120_000);
});
