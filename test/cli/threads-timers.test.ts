// `npm run cli -- threads snooze|unsnooze|remind|cancel` as a user types them, against the real dev
// server, PostgreSQL and the Gmail emulator: times read in the account's zone, the thread's workflow
// does it, `threads show` says what it waits for and when, bad times are refused with the reason.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runThreadsCli } from '../../src/cli/threads.js';
import type { CliIo } from '../../src/cli/command.js';
import { setAccountTimeZone } from '../../src/accounts/time-settings.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
  await setAccountTimeZone(h.prisma, h.accountId, 'Europe/Berlin');
});

afterAll(async () => {
  await h?.close();
});

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const io: CliIo = { out: (l) => lines.push(l) };
  const code = await runThreadsCli({ ...h.cfg, LOG_LEVEL: 'warn' }, argv, io);
  return { code, out: lines.join('\n') };
}

async function inInbox(threadId: string): Promise<boolean> {
  const state = await h.gmail.control.getState(h.email);
  return state.messages.filter((m) => m.threadId === threadId).some((m) => m.labelIds.includes('INBOX'));
}

it('snoozes until a time in the account’s zone, shows it, and unsnoozes', async () => {
  const { threadId } = await deliverAndIngest(h, {
    from: 'Bob <bob@partner.example>',
    subject: 'Office closed',
    text: 'Just so you know: closed on Monday.',
  });
  await h.waitFor(threadId, (s) => s.pendingEvents === 0);

  // 09:00 in Berlin on a winter day is 08:00 UTC.
  const snoozed = await cli('snooze', threadId, '--until', '2030-01-15 09:00');
  expect(snoozed.code, snoozed.out).toBe(0);
  expect(snoozed.out).toContain('Tue 15 Jan 2030 09:00 Europe/Berlin (08:00 UTC)');
  const waiting = await h.waitFor(
    threadId,
    (s) => (s.wakes ?? []).some((w) => w.kind === 'snooze') && s.pendingEvents === 0,
  );
  expect(waiting.wakes!.find((w) => w.kind === 'snooze')!.at).toBe(Date.parse('2030-01-15T08:00:00Z'));
  expect(await inInbox(threadId)).toBe(false);

  const shown = await cli('show', threadId);
  expect(shown.code, shown.out).toBe(0);
  expect(shown.out).toMatch(/waits for +the snooze to end: wakes Tue 15 Jan 2030 09:00 Europe\/Berlin \(08:00 UTC\)/);

  const back = await cli('unsnooze', threadId);
  expect(back.code, back.out).toBe(0);
  await h.waitFor(threadId, (s) => !(s.wakes ?? []).some((w) => w.kind === 'snooze') && s.pendingEvents === 0);
  expect(await inInbox(threadId)).toBe(true);
}, 120_000);

it('sets a reminder in 3 days and cancels it', async () => {
  const { threadId } = await deliverAndIngest(h, {
    from: 'Bob <bob@partner.example>',
    subject: 'Tickets',
    text: 'Tickets go on sale next week.',
  });
  await h.waitFor(threadId, (s) => s.pendingEvents === 0);
  const before = Date.now();
  const reminded = await cli('remind', threadId, '--in', '3d', '--note', 'buy the tickets');
  expect(reminded.code, reminded.out).toBe(0);
  const waiting = await h.waitFor(
    threadId,
    (s) => (s.wakes ?? []).some((w) => w.kind === 'remind') && s.pendingEvents === 0,
  );
  const at = waiting.wakes!.find((w) => w.kind === 'remind')!.at;
  // Three calendar days in Berlin: 72 h, or 71 h / 73 h across a daylight-saving change.
  expect(at - before).toBeGreaterThanOrEqual(71 * 3_600_000);
  expect(at - before).toBeLessThanOrEqual(73 * 3_600_000 + 60_000);
  expect(await inInbox(threadId)).toBe(true); // a reminder leaves the thread where it is

  const cancelled = await cli('cancel', threadId, '--timer', 'remind');
  expect(cancelled.code, cancelled.out).toBe(0);
  await h.waitFor(threadId, (s) => !(s.wakes ?? []).some((w) => w.kind === 'remind') && s.pendingEvents === 0);
}, 120_000);

it('refuses a time it cannot read, or one that does not exist, with the reason and exit 2', async () => {
  const { threadId } = await deliverAndIngest(h, {
    from: 'Bob <bob@partner.example>',
    subject: 'Later',
    text: 'No rush.',
  });
  await h.waitFor(threadId, (s) => s.pendingEvents === 0);
  const unreadable = await cli('snooze', threadId, '--until', 'when pigs fly');
  expect(unreadable.code).toBe(2);
  expect(unreadable.out).toMatch(/when pigs fly/);
  const noTimer = await cli('cancel', threadId, '--timer', 'nap');
  expect(noTimer.code).toBe(2);
  expect(noTimer.out).toMatch(/--timer: expected one of/);
  const unknown = await cli('snooze', 'no-such-thread', '--until', 'tomorrow');
  expect(unknown.code).toBe(2);
  const status = await h.waitFor(threadId, (s) => s.pendingEvents === 0);
  expect(status.wakes ?? []).toEqual([]);
}, 120_000);
