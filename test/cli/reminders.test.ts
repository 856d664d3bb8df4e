// `npm run cli -- reminders ...` against the real Postgres and dev server: what `add` stores and
// starts, the next occurrences `show` computes (the same function the workflow plans with) across
// daylight saving and short months, pause/resume/remove through the reminder's workflow, and bad
// arguments. Dates are years ahead (--start), so the output does not depend on today.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAccountsCli } from '../../src/cli/accounts.js';
import { runRemindersCli } from '../../src/cli/reminders.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { reminderWorkflowId } from '../../src/reminders/contracts.js';
import { loadReminder } from '../../src/reminders/reminder-store.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers({ gmail: false, llm: false });
});

afterAll(async () => {
  await h?.close();
});

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runRemindersCli(h.cfg, argv, { out: (l) => lines.push(l) });
  return { code, out: lines.join('\n') };
}

async function added(...argv: string[]): Promise<string> {
  const result = await cli('add', ...argv, '--account', h.email);
  expect(result.code, result.out).toBe(0);
  return /Added reminder (\S+):/.exec(result.out)![1]!;
}

/** The lines of `show` under "next". */
async function nextLines(id: string): Promise<string[]> {
  const shown = (await cli('show', id)).out.split('\n');
  const from = shown.findIndex((l) => l.startsWith('next'));
  return shown.slice(from + 1, from + 6).map((l) => l.trim());
}

describe('reminders cli', () => {
  it('adds the monthly rent at 09:00 Europe/Berlin: 08:00 UTC in winter, 07:00 UTC in summer; its workflow waits for the first', async () => {
    const add = await cli('add', 'Pay the rent', '--at', '09:00', '--every', 'month', '--on', '1', '--tz', 'Europe/Berlin', '--start', '2030-01-15', '--account', h.email);
    expect(add.code, add.out).toBe(0);
    expect(add.out).toMatch(/Added reminder \S+: Pay the rent — every month on the 1st at 09:00, Europe\/Berlin/);
    expect(add.out).toContain('next: 2030-02-01 09:00 Europe/Berlin (2030-02-01 08:00 UTC)');
    const id = /Added reminder (\S+):/.exec(add.out)![1]!;
    expect(await nextLines(id)).toEqual([
      '2030-02-01 09:00 Europe/Berlin (2030-02-01 08:00 UTC)',
      '2030-03-01 09:00 Europe/Berlin (2030-03-01 08:00 UTC)',
      '2030-04-01 09:00 Europe/Berlin (2030-04-01 07:00 UTC)',
      '2030-05-01 09:00 Europe/Berlin (2030-05-01 07:00 UTC)',
      '2030-06-01 09:00 Europe/Berlin (2030-06-01 07:00 UTC)',
    ]);
    // The workflow planned the same first occurrence and sleeps on its timer.
    const planned = await waitUntil('the workflow to plan', async () => (await loadReminder(prismaExecutor(h.prisma), id))?.nextAt ?? undefined, { timeoutMs: 20_000 });
    expect(planned.toISOString()).toBe('2030-02-01T08:00:00.000Z');
    expect((await h.client.workflow.getHandle(reminderWorkflowId(id)).describe()).status.name).toBe('RUNNING');
    expect((await cli('list', '--account', h.email)).out).toMatch(new RegExp(`${id}\\s+${h.email}\\s+Pay the rent\\s+every month on the 1st.*Europe/Berlin\\s+active\\s+2030-02-01 08:00`));
  });

  it('says a daily reminder in words, its time once, in add, list and show: every day at 15:47', async () => {
    const add = await cli('add', 'Water the plants', '--at', '15:47', '--every', 'day', '--tz', 'Europe/Berlin', '--start', '2030-01-15', '--account', h.email);
    expect(add.code, add.out).toBe(0);
    expect(add.out).toMatch(/Added reminder \S+: Water the plants — every day at 15:47, Europe\/Berlin$/m);
    const id = /Added reminder (\S+):/.exec(add.out)![1]!;
    expect((await cli('list', '--account', h.email)).out).toMatch(new RegExp(`${id}\\s+${h.email}\\s+Water the plants\\s+every day at 15:47\\s+Europe/Berlin\\s+active`));
    expect((await cli('show', id)).out).toMatch(/^when {7}every day at 15:47$/m);
  });

  it('02:30 on the day clocks go forward fires once (at 03:30), and on the day they go back once (the first 02:30)', async () => {
    const spring = await added('Spring', '--at', '02:30', '--every', 'day', '--start', '2030-03-30', '--tz', 'Europe/Berlin');
    expect((await nextLines(spring)).slice(0, 3)).toEqual([
      '2030-03-30 02:30 Europe/Berlin (2030-03-30 01:30 UTC)',
      '2030-03-31 03:30 Europe/Berlin (2030-03-31 01:30 UTC)',
      '2030-04-01 02:30 Europe/Berlin (2030-04-01 00:30 UTC)',
    ]);
    const autumn = await added('Autumn', '--at', '02:30', '--every', 'day', '--start', '2030-10-26', '--tz', 'Europe/Berlin');
    expect((await nextLines(autumn)).slice(0, 3)).toEqual([
      '2030-10-26 02:30 Europe/Berlin (2030-10-26 00:30 UTC)',
      '2030-10-27 02:30 Europe/Berlin (2030-10-27 00:30 UTC)',
      '2030-10-28 02:30 Europe/Berlin (2030-10-28 01:30 UTC)',
    ]);
  });

  it('the 31st falls on the last day of shorter months; the last Friday by --on and by --rrule', async () => {
    const end = await added('Invoice', '--at', '10:00', '--every', 'month', '--on', '31', '--start', '2030-01-15', '--tz', 'UTC');
    expect((await nextLines(end)).map((l) => l.slice(0, 10))).toEqual(['2030-01-31', '2030-02-28', '2030-03-31', '2030-04-30', '2030-05-31']);
    const friday = await added('Timesheet', '--at', '16:00', '--every', 'month', '--on', 'last-friday', '--start', '2030-01-01', '--tz', 'UTC');
    const byRule = await added('Timesheet (rule)', '--at', '16:00', '--rrule', 'FREQ=MONTHLY;BYDAY=-1FR', '--start', '2030-01-01', '--tz', 'UTC');
    expect((await nextLines(friday)).map((l) => l.slice(0, 10))).toEqual(['2030-01-25', '2030-02-22', '2030-03-29', '2030-04-26', '2030-05-31']);
    expect(await nextLines(byRule)).toEqual(await nextLines(friday));
  });

  it('pauses, resumes and removes through the workflow; show says so', async () => {
    const id = await added('Plants', '--at', '08:00', '--every', 'week', '--on', 'mon,thu', '--start', '2030-01-01', '--tz', 'UTC');
    const handle = h.client.workflow.getHandle(reminderWorkflowId(id));
    expect((await cli('pause', id)).out).toContain(`reminder ${id} paused`);
    expect((await cli('show', id)).out).toMatch(/state\s+paused/);
    expect((await loadReminder(prismaExecutor(h.prisma), id))!.nextAt).toBeNull();
    expect((await cli('resume', id)).code).toBe(0);
    const planned = await waitUntil('planned again', async () => (await loadReminder(prismaExecutor(h.prisma), id))?.nextAt ?? undefined, { timeoutMs: 20_000 });
    expect(planned.toISOString()).toBe('2030-01-03T08:00:00.000Z'); // the first Thursday
    expect((await cli('remove', id)).code).toBe(0);
    expect(await handle.result()).toEqual({ ended: 'removed' });
    expect((await cli('list')).out).not.toContain(id);
    expect((await cli('list', '--all')).out).toMatch(new RegExp(`${id}.*removed`));
    const again = await cli('resume', id);
    expect(again.code).toBe(2);
    expect(again.out).toContain(`no running reminder ${id}`);
  });

  it('refuses bad arguments with a reason and exit 2, storing nothing', async () => {
    const before = await h.prisma.reminder.count();
    const cases: Array<[string[], RegExp]> = [
      [['add', '--at', '09:00', '--account', h.email], /needs the reminder's title/],
      [['add', 'Rent', '--account', h.email], /--at: the time of day is required/],
      [['add', 'Rent', '--at', '9h', '--account', h.email], /--at: expected a time of day/],
      [['add', 'Rent', '--at', '09:00', '--every', 'fortnight', '--account', h.email], /--every: expected day, week, month, year/],
      [['add', 'Rent', '--at', '09:00', '--every', 'month', '--on', '32', '--account', h.email], /1 to 31/],
      [['add', 'Rent', '--at', '09:00', '--tz', 'Europe/Atlantis', '--account', h.email], /--tz: not an IANA time zone/],
      [['add', 'Rent', '--at', '09:00', '--rrule', 'FREQ=SOMETIMES', '--account', h.email], /--rrule/],
      [['add', 'Rent', '--at', '09:00', '--account', 'nobody@example.com'], /no account nobody@example.com/],
      [['show', 'not-a-reminder'], /no reminder not-a-reminder/],
    ];
    for (const [argv, message] of cases) {
      const result = await cli(...argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.out).toMatch(message);
    }
    expect(await h.prisma.reminder.count()).toBe(before);
  });

  it('a reminder without a zone of its own moves when the account\'s zone changes; one with its own stays', async () => {
    const db = prismaExecutor(h.prisma);
    const nextAt = (id: string) => waitUntil(`${id} planned`, async () => (await loadReminder(db, id))?.nextAt?.toISOString(), { timeoutMs: 20_000 });
    const follows = await added('Standup', '--at', '09:00', '--every', 'month', '--on', '1', '--start', '2030-01-15');
    const own = await added('Call New York', '--at', '09:00', '--every', 'month', '--on', '1', '--start', '2030-01-15', '--tz', 'America/New_York');
    expect(await nextAt(follows)).toBe('2030-02-01T09:00:00.000Z'); // the account has no zone: UTC
    expect(await nextAt(own)).toBe('2030-02-01T14:00:00.000Z');

    const lines: string[] = [];
    expect(await runAccountsCli(h.cfg, ['timezone', h.email, 'Europe/Berlin'], { out: (l) => lines.push(l) })).toBe(0);
    expect(lines.join('\n')).toContain('1 reminder without a zone of its own now runs in Europe/Berlin');
    await waitUntil('the workflow to plan in the new zone', async () => (await nextAt(follows)) === '2030-02-01T08:00:00.000Z', { timeoutMs: 20_000 });
    expect(await nextAt(own)).toBe('2030-02-01T14:00:00.000Z');
    expect((await cli('show', follows)).out).toMatch(/zone\s+Europe\/Berlin \(follows the account's zone\)/);
  });
});
