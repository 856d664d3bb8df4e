// A run missed while the cluster was down: on a dev server of this file's own (SQLite, so it keeps
// its Schedules across a restart), two schedules come due while the server is stopped. When it is
// back, the one still within its catch-up window runs, once; the one past its window does not run
// at all, and its Schedule counts it as missed (what `schedules show` prints). The Schedules fire at
// a second of our choosing, so the test waits seconds, not a day.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { scheduleIdOf, type AgentScheduleRow } from '../../src/schedules/contracts.js';
import { listScheduleRuns } from '../../src/schedules/schedule-store.js';
import { addUserSchedule, userScheduleState, type UserScheduleSettings } from '../../src/schedules/user-schedules.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { startOwnDevServer, type OwnDevServer } from '../helpers/own-dev-server.js';
import { untilTime, waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;
let server: OwnDevServer;

beforeAll(async () => {
  server = await startOwnDevServer();
  h = await startInboxHarness({ env: { TEMPORAL_ADDRESS: server.address } });
  await h.startWorkers();
}, 90_000);

afterAll(async () => {
  await h?.close();
  await server?.close();
});

const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;

/**
 * Makes the schedule's one firing the given instant (UTC, to the second); its policies stay the
 * product's. Returns once the Schedule has taken the update (its scheduler applies it after the call
 * returns: a server stopped before then would apply it on restart, when that instant is past).
 */
async function fireAt(row: AgentScheduleRow, at: Date): Promise<void> {
  const handle = h.client.schedule.getHandle(scheduleIdOf(row.id));
  await handle.update((previous) => ({
    ...previous,
    spec: {
      timezone: 'UTC',
      calendars: [{ year: at.getUTCFullYear(), month: MONTHS[at.getUTCMonth()]!, dayOfMonth: at.getUTCDate(), hour: at.getUTCHours(), minute: at.getUTCMinutes(), second: at.getUTCSeconds() }],
    },
  }));
  await waitUntil(`the Schedule to fire next at ${at.toISOString()}`, async () => (await handle.describe()).info.nextActionTimes[0]?.getTime() === at.getTime());
}

it('runs a missed brief once within its catch-up window, and not at all past it', async () => {
  const db = prismaExecutor(h.prisma);
  const queues = { workflow: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE };
  const policies = (catchupWindowMs: number): UserScheduleSettings => ({ catchupWindowMs, jitterMs: 0, taskQueues: queues });
  const def = { accountId: h.accountId, profile: 'brief', prompt: 'Brief me.', timing: { at: '07:30', days: ['mon' as const] }, timeZone: 'UTC', label: 'Brief', discord: false };
  const within = await addUserSchedule(h.client, db, { ...def, name: 'within the window' }, policies(120_000));
  const past = await addUserSchedule(h.client, db, { ...def, name: 'past the window' }, policies(10_000));

  // The workers stop first: what is timed below is only two updates and the server's stop, which a
  // loaded machine did not finish within 5 s with the workers' shutdown among them.
  await h.stopWorkers();
  const t0 = Math.ceil(Date.now() / 1000) * 1000;
  await fireAt(past, new Date(t0 + 8_000));
  await fireAt(within, new Date(t0 + 12_000));
  // The cluster goes down before either is due, and comes back 16+ s after the first.
  await server.stop();
  expect(Date.now()).toBeLessThan(t0 + 8_000);
  await untilTime(t0 + 24_000);
  await server.start();
  await h.startWorkers();

  const [run] = await waitUntil('the missed brief within its window to run', async () => {
    const runs = await listScheduleRuns(db, within.id);
    return runs.length > 0 && runs.every((r) => r.finishedAt) && runs;
  }, { timeoutMs: 60_000 });
  expect(run).toMatchObject({ status: 'delivered', scheduledAt: new Date(t0 + 12_000) });

  // Both Schedules have taken their one firing (run, or counted as missed) and run nothing; then
  // look: once, and never the other.
  await h.client.workflow.getHandle(run!.workflowId).result();
  const taken = async (row: AgentScheduleRow) => {
    const { info } = await h.client.schedule.getHandle(scheduleIdOf(row.id)).describe();
    return info.runningActions.length === 0 && info.recentActions.length + info.numActionsMissedCatchupWindow > 0;
  };
  await waitUntil('both firings taken', async () => (await taken(within)) && (await taken(past)));
  expect(await listScheduleRuns(db, within.id)).toHaveLength(1);
  expect(await listScheduleRuns(db, past.id)).toHaveLength(0);
  const pastState = await userScheduleState(h.client, past);
  expect(pastState).toMatchObject({ missedCatchup: 1, recentRuns: [] });
  const withinState = await userScheduleState(h.client, within);
  expect(withinState).toMatchObject({ missedCatchup: 0 });
  expect(withinState!.recentRuns).toHaveLength(1);
  for (const row of [within, past]) await h.client.schedule.getHandle(scheduleIdOf(row.id)).delete();
}, 180_000);
