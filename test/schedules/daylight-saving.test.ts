// User schedules across time zones and daylight saving, on the real dev server: when a schedule fires
// is read from the Schedule's own computed next action times (describe()), and what a day's firings
// do is run through the Schedule's backfill API (the runs it starts carry those action times), not by
// waiting for a clock. docs/time.md says what the product does on the two days a year:
// - a time the clocks skip (02:30 when Europe springs forward) runs once, an hour later (03:30);
// - a time the clocks repeat runs once: Temporal fires 01:30 twice in New York when the clocks go
//   back; the second run finds the local time claimed and does nothing.
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { scheduleIdOf, type AgentScheduleRow, type ScheduleTiming } from '../../src/schedules/contracts.js';
import { listScheduleRuns } from '../../src/schedules/schedule-store.js';
import { addUserSchedule, scheduleOptionsOf, type UserScheduleSettings } from '../../src/schedules/user-schedules.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;
let settings: UserScheduleSettings;
const created: string[] = [];

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
  settings = {
    catchupWindowMs: 3600_000,
    jitterMs: 0,
    taskQueues: { workflow: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE },
  };
}, 60_000);

afterAll(async () => {
  for (const id of created) await h.client.schedule.getHandle(id).delete().catch(() => {});
  await h?.close();
});

let n = 0;
/** The product's Schedule for a timing and zone, looked at from `startAt` (the spec's own field). */
async function nextTimes(timing: ScheduleTiming, zone: string, startAt: string, jitterMs = 0): Promise<string[]> {
  const row: AgentScheduleRow = {
    id: `dst-${Date.now()}-${n++}`, accountId: h.accountId, name: 'dst', profile: 'brief', prompt: 'p', timing, timeZone: zone, label: 'Brief', discord: false, deliveryThreadId: null,
  };
  // The gap days are computed from the day looked at (the product computes them from today, 10 years ahead).
  const options = scheduleOptionsOf(row, zone, { ...settings, jitterMs }, new Date(startAt));
  const handle = await h.client.schedule.create({ ...options, spec: { ...options.spec, startAt: new Date(startAt) }, state: { paused: true } });
  created.push(handle.scheduleId);
  return (await handle.describe()).info.nextActionTimes.map((d) => d.toISOString());
}

const daily = (at: string): ScheduleTiming => ({ at, days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] });

describe('when a schedule fires', () => {
  it('07:30 Europe/Berlin is 06:30 UTC in winter and 05:30 UTC in summer', async () => {
    expect((await nextTimes(daily('07:30'), 'Europe/Berlin', '2027-01-10T00:00:00Z')).slice(0, 2)).toEqual(['2027-01-10T06:30:00.000Z', '2027-01-11T06:30:00.000Z']);
    expect((await nextTimes(daily('07:30'), 'Europe/Berlin', '2027-07-10T00:00:00Z')).slice(0, 2)).toEqual(['2027-07-10T05:30:00.000Z', '2027-07-11T05:30:00.000Z']);
    // Across the spring change the UTC time moves by the hour; the local time stays 07:30.
    expect((await nextTimes(daily('07:30'), 'Europe/Berlin', '2027-03-27T00:00:00Z')).slice(0, 3)).toEqual([
      '2027-03-27T06:30:00.000Z',
      '2027-03-28T05:30:00.000Z',
      '2027-03-29T05:30:00.000Z',
    ]);
  });

  it('02:30 on the day the clocks go forward fires once, at 03:30 local', async () => {
    const times = await nextTimes(daily('02:30'), 'Europe/Berlin', '2027-03-27T00:00:00Z');
    expect(times.slice(0, 3)).toEqual(['2027-03-27T01:30:00.000Z', '2027-03-28T01:30:00.000Z', '2027-03-29T00:30:00.000Z']);
    // A weekday schedule gets no extra run on a Sunday's gap.
    const weekdays = await nextTimes({ at: '02:30', days: ['mon', 'tue', 'wed', 'thu', 'fri'] }, 'Europe/Berlin', '2027-03-26T00:00:00Z');
    expect(weekdays.slice(0, 2)).toEqual(['2027-03-26T01:30:00.000Z', '2027-03-29T00:30:00.000Z']);
  });

  it('02:30 on the day the clocks go back in Berlin fires once', async () => {
    const times = await nextTimes(daily('02:30'), 'Europe/Berlin', '2027-10-30T00:00:00Z');
    expect(times.filter((t) => t.startsWith('2027-10-31'))).toEqual(['2027-10-31T01:30:00.000Z']);
  });

  it('01:30 on the day the clocks go back in New York is fired twice by Temporal (the run dedupes it, below)', async () => {
    const times = await nextTimes(daily('01:30'), 'America/New_York', '2027-11-06T00:00:00Z');
    expect(times.filter((t) => t.startsWith('2027-11-07'))).toEqual(['2027-11-07T05:30:00.000Z', '2027-11-07T06:30:00.000Z']);
  });

  it('jitter spreads a shared time by at most the jitter', async () => {
    const times = await nextTimes(daily('07:30'), 'Europe/Berlin', '2027-01-10T00:00:00Z', 120_000);
    for (const t of times.slice(0, 5)) {
      const offset = (Date.parse(t) - Date.parse(`${t.slice(0, 10)}T06:30:00.000Z`)) / 1000;
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThan(120);
    }
  });
});

describe("what a daylight-saving day's firings do", () => {
  it('the repeated 01:30 in New York runs once; the skipped 02:30 in Berlin runs once, at 03:30', async () => {
    const db = prismaExecutor(h.prisma);
    const ny = await addUserSchedule(h.client, db, {
      accountId: h.accountId, name: 'ny 01:30', profile: 'brief', prompt: 'Brief me.', timing: daily('01:30'), timeZone: 'America/New_York', label: 'Brief', discord: false,
    }, settings);
    const berlin = await addUserSchedule(h.client, db, {
      accountId: h.accountId, name: 'berlin 02:30', profile: 'brief', prompt: 'Brief me.', timing: daily('02:30'), timeZone: 'Europe/Berlin', label: 'Brief', discord: false,
    }, settings);
    created.push(scheduleIdOf(ny.id), scheduleIdOf(berlin.id));
    // The Schedule starts what it would have started on those days. New York's two firings come an
    // hour apart in life: the first is backfilled and finished before the second, as it would be.
    const nyHandle = h.client.schedule.getHandle(scheduleIdOf(ny.id));
    await nyHandle.backfill({ start: new Date('2027-11-07T04:00:00Z'), end: new Date('2027-11-07T06:00:00Z'), overlap: ScheduleOverlapPolicy.ALLOW_ALL });
    await h.client.schedule.getHandle(scheduleIdOf(berlin.id)).backfill({ start: new Date('2027-03-27T23:00:00Z'), end: new Date('2027-03-28T04:00:00Z'), overlap: ScheduleOverlapPolicy.ALLOW_ALL });
    await waitUntil('the first New York firing to finish', async () => {
      const runs = await listScheduleRuns(db, ny.id);
      return runs.length === 1 && runs[0]!.finishedAt !== null;
    }, { timeoutMs: 60_000 });
    await nyHandle.backfill({ start: new Date('2027-11-07T06:00:00Z'), end: new Date('2027-11-07T08:00:00Z'), overlap: ScheduleOverlapPolicy.ALLOW_ALL });

    const nyRuns = await waitUntil('both New York firings to finish', async () => {
      const runs = await listScheduleRuns(db, ny.id);
      return runs.length === 2 && runs.every((r) => r.finishedAt) && runs;
    }, { timeoutMs: 60_000 });
    const byTime = [...nyRuns].sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    expect(byTime.map((r) => [r.scheduledAt.toISOString(), r.status])).toEqual([
      ['2027-11-07T05:30:00.000Z', 'delivered'],
      ['2027-11-07T06:30:00.000Z', 'duplicate'],
    ]);
    expect(byTime[1]!.note).toContain('2027-11-07 01:30 (repeated hour) America/New_York ran already');
    expect(byTime[1]!.gmailMessageId).toBeNull();

    const berlinRuns = await waitUntil('the Berlin firing to finish', async () => {
      const runs = await listScheduleRuns(db, berlin.id);
      return runs.length >= 1 && runs.every((r) => r.finishedAt) && runs;
    }, { timeoutMs: 60_000 });
    expect(berlinRuns.map((r) => [r.scheduledAt.toISOString(), r.localSlot, r.status])).toEqual([
      ['2027-03-28T01:30:00.000Z', '2027-03-28 03:30:00 +02:00', 'delivered'],
    ]);
  }, 120_000);
});

describe('one action time started twice', () => {
  it('is two runs of one workflow id: the second finds the time claimed, and the first keeps its record', async () => {
    const db = prismaExecutor(h.prisma);
    const twice = await addUserSchedule(h.client, db, {
      accountId: h.accountId, name: 'twice', profile: 'brief', prompt: 'Brief me.', timing: daily('08:15'), timeZone: 'UTC', label: 'Brief', discord: false,
    }, settings);
    created.push(scheduleIdOf(twice.id));
    // A Schedule names an action's workflow by its time to the second: the same time backfilled
    // again (or two triggers in one second) starts a second run with the first one's workflow id.
    const handle = h.client.schedule.getHandle(scheduleIdOf(twice.id));
    const window = { start: new Date('2027-01-05T08:00:00Z'), end: new Date('2027-01-05T08:30:00Z'), overlap: ScheduleOverlapPolicy.ALLOW_ALL };
    await handle.backfill(window);
    const [first] = await waitUntil('the first run to finish', async () => {
      const runs = await listScheduleRuns(db, twice.id);
      return runs.length === 1 && runs[0]!.finishedAt !== null && runs;
    }, { timeoutMs: 60_000 });
    await handle.backfill(window);
    const runs = await waitUntil('the second run to finish', async () => {
      const rows = await listScheduleRuns(db, twice.id);
      return rows.length === 2 && rows.every((r) => r.finishedAt) && rows;
    }, { timeoutMs: 60_000 });
    expect(new Set(runs.map((r) => r.workflowId))).toEqual(new Set([first!.workflowId]));
    const [again, kept] = runs;
    expect(kept).toMatchObject({ status: 'delivered', gmailMessageId: first!.gmailMessageId, output: first!.output });
    expect(again).toMatchObject({ status: 'duplicate', gmailMessageId: null });
    expect(again!.note).toContain(`2027-01-05 08:15:00 +00:00 UTC ran already (${first!.workflowId})`);
  }, 120_000);
});
