// A thread's timers survive their workers (issue #25): the workflow, Gmail and LLM workers (each
// its own OS process) are SIGKILLed together while a send later is on its way out (Gmail has taken
// the message, the journal not yet), a snooze and a follow-up pending and falling due while nothing
// runs. New workers take over and each timer fires exactly once: one sent message, the snoozed
// thread back once, the follow-up labelled, told and nudged once. Real dev server, Postgres and the
// Gmail, Anthropic and Discord emulators; durations injected (seconds).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { updateSafetySettings } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';
import { deliverAndIngest, startInboxHarness, userSends, type InboxHarness } from '../helpers/inbox-harness.js';
import { draftsOf, fyi, journalOf, labelsOf, question, sentIn, setTimer } from '../helpers/thread-timers.js';
import { untilTime, waitUntil } from '../helpers/wait-until.js';
import { untilQuiet } from '../helpers/workflow-quiet.js';
import { killWorker, spawnWorker, type WorkerName } from '../helpers/worker-process.js';

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhookId: string;
let workers: ChildProcess[] = [];
const ALL: WorkerName[] = ['workflow-worker', 'gmail-worker', 'llm-worker'];

beforeAll(async () => {
  discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  webhookId = webhook.id;
  h = await startInboxHarness({
    env: { DISCORD_WEBHOOK_URL: webhook.url, FOLLOW_UP_AFTER: '30s' },
    settings: { activityTimeouts: { gmailMs: 5_000, llmMs: 10_000 } },
  });
  await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { followUpNudge: true });
});

afterAll(async () => {
  await Promise.all(workers.map(killWorker));
  await h?.close();
  await discord?.close();
});

const settled = (s: ThreadStatus) => s.pendingEvents === 0;
const fired = (s: ThreadStatus, what: string) => s.decisions.filter((d) => d.detail.startsWith(`${what} fired`)).length;

it('fires each pending timer exactly once after the workers are SIGKILLed, one of them mid-send', async () => {
  workers = ALL.map((name) => spawnWorker(h, name));
  const outgoing = await deliverAndIngest(h, question('Figures'));
  await h.waitFor(outgoing.threadId, (s) => s.state === 'drafted' && settled(s), 90_000);
  const snoozed = await deliverAndIngest(h, fyi('Canteen'));
  await h.waitFor(snoozed.threadId, (s) => s.state === 'skipped' && settled(s), 30_000);
  // Awaiting reply: the user sent a question of their own; the follow-up is 30 s away (after the send
  // later and the snooze below, with room for a loaded machine).
  const waiting = await deliverAndIngest(h, question('Contract review'));
  const drafted = await h.waitFor(waiting.threadId, (s) => s.state === 'drafted' && settled(s), 30_000);
  await userSends(h, waiting.threadId, drafted.draftId!, 'Here it is. Could you confirm you received it?');
  const awaiting = await h.waitFor(waiting.threadId, (s) => s.state === 'awaiting_reply' && settled(s), 30_000);
  const followUpAt = awaiting.wakes!.find((w) => w.kind === 'follow_up')!.at;

  // Gmail takes 10 s to answer a send: the workers die while the send later's send waits for its answer.
  await h.gmail.control.setFaults({ latency: [{ method: 'messages.send', distribution: { type: 'fixed', ms: 10_000 } }] });
  // Far enough ahead that both timers are set before it on a loaded machine (CI, 2026-11-28: 3 s was not).
  const sendAt = Date.now() + 8_000;
  const snoozeAt = sendAt + 5_000;
  await setTimer(h, outgoing.threadId, { kind: 'send_later', at: sendAt });
  await setTimer(h, snoozed.threadId, { kind: 'snooze', at: snoozeAt });
  await h.waitFor(outgoing.threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));
  await h.waitFor(snoozed.threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));
  expect(Date.now()).toBeLessThan(sendAt);
  // The send later fires at its time; the workers die once Gmail holds its send.
  await waitUntil('the send in flight at Gmail', async () => (await h.gmail.control.metrics()).inFlight['messages.send'] === 1, { timeoutMs: 60_000, everyMs: 50 });
  expect(Date.now()).toBeGreaterThanOrEqual(sendAt);
  expect(Date.now()).toBeLessThan(followUpAt);
  expect(await sentIn(h, outgoing.threadId)).toHaveLength(0);
  expect((await journalOf(h, outgoing.threadId, 'send_later')).map((a) => a.state)).toEqual(['scheduled']);

  await Promise.all(workers.map(killWorker));
  // Gmail took the message all the same; nothing recorded it.
  await waitUntil('Gmail to have taken the message', async () => (await sentIn(h, outgoing.threadId)).length === 1, { timeoutMs: 20_000, everyMs: 100 });
  expect((await journalOf(h, outgoing.threadId, 'send_later')).map((a) => a.state)).toEqual(['scheduled']);
  await h.gmail.control.setFaults({ latency: [] });
  // The snooze and the follow-up fall due while no worker runs.
  await untilTime(Math.max(snoozeAt, followUpAt) + 1_000);
  expect((await journalOf(h, snoozed.threadId, 'snooze')).map((a) => a.state)).toEqual(['scheduled']);
  expect((await journalOf(h, waiting.threadId, 'follow_up')).map((a) => a.state)).toEqual(['scheduled']);

  workers = ALL.map((name) => spawnWorker(h, name));
  const sent = await waitUntil('the send later to be journaled', async () => {
    const [row] = await journalOf(h, outgoing.threadId, 'send_later');
    return row?.state === 'done' && row;
  }, { timeoutMs: 90_000 });
  await h.waitFor(snoozed.threadId, (s) => !s.wakes && settled(s), 90_000);
  await h.waitFor(waiting.threadId, (s) => !s.wakes && s.decisions.some((d) => d.detail.startsWith('nudge ')) && settled(s), 90_000);
  // Then nothing under way that could fire anything twice (no event, workflow task or activity
  // pending), and each thread as it is now.
  await untilQuiet([outgoing, snoozed, waiting].map((m) => h.handle(m.threadId)));
  const [afterSend, back, nudged] = (await Promise.all([outgoing, snoozed, waiting].map((m) => h.waitFor(m.threadId, settled)))) as [ThreadStatus, ThreadStatus, ThreadStatus];

  // The send later: the one message Gmail took, recorded; the draft gone.
  const messages = await sentIn(h, outgoing.threadId);
  expect(messages).toHaveLength(1);
  expect(sent.result?.sentMessageId).toBe(messages[0]!.id);
  expect(await draftsOf(h, outgoing.threadId)).toHaveLength(0);
  expect(fired(afterSend, 'send later')).toBe(1);

  // The snooze: back once, in the inbox, labelled.
  expect(back.wakes).toBeUndefined();
  expect(fired(back, 'snooze')).toBe(1);
  expect((await journalOf(h, snoozed.threadId, 'snooze')).map((a) => a.state)).toEqual(['done']);
  expect(await labelsOf(h, snoozed.threadId)).toEqual(expect.arrayContaining(['INBOX', 'UNREAD', 'Snoozed']));

  // The follow-up: labelled, told and nudged once.
  expect(nudged.state).toBe('awaiting_reply');
  expect(fired(nudged, 'follow up')).toBe(1);
  expect((await journalOf(h, waiting.threadId, 'follow_up')).map((a) => a.state)).toEqual(['done']);
  expect(await labelsOf(h, waiting.threadId)).toContain('Follow Up');
  expect(await draftsOf(h, waiting.threadId)).toHaveLength(1);
  const told = (await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(waiting.threadId) && m.message.content.includes('Follow up'));
  expect(told).toHaveLength(1);
}, 330_000);
