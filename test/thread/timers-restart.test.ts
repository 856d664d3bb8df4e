// A thread's timers survive a restart of the Temporal server (issue #25): on a dev server of this
// file's own (SQLite, so it keeps its workflows and timers across a restart), a snooze, a send later
// and a follow-up fall due while the server is down, and a reminder after it is back. The workers
// run on through the outage. After the restart each fires exactly once, none is lost. Real
// Postgres and the Gmail, Anthropic and Discord emulators; durations injected (seconds).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { updateSafetySettings } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';
import { deliverAndIngest, startInboxHarness, userSends, type InboxHarness } from '../helpers/inbox-harness.js';
import { startOwnDevServer, type OwnDevServer } from '../helpers/own-dev-server.js';
import { draftsOf, fyi, journalOf, labelsOf, question, sentIn, setTimer } from '../helpers/thread-timers.js';
import { untilTime } from '../helpers/wait-until.js';
import { untilQuiet } from '../helpers/workflow-quiet.js';

let h: InboxHarness;
let server: OwnDevServer;
let discord: RunningDiscordEmulator;
let webhookId: string;
const FOLLOW_UP_MS = 8_000;

beforeAll(async () => {
  server = await startOwnDevServer();
  discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  webhookId = webhook.id;
  h = await startInboxHarness({ env: { TEMPORAL_ADDRESS: server.address, DISCORD_WEBHOOK_URL: webhook.url, FOLLOW_UP_AFTER: `${FOLLOW_UP_MS / 1000}s` } });
  await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { followUpNudge: true });
  await h.startWorkers();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await server?.close();
  await discord?.close();
});

const settled = (s: ThreadStatus) => s.pendingEvents === 0;
const fired = (s: ThreadStatus, what: string) => s.decisions.filter((d) => d.detail.startsWith(`${what} fired`)).length;
const told = async (threadId: string, what: string) =>
  (await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(threadId) && m.message.content.includes(what));

it('fires each timer once after the server restarts: those due during the outage and those due after', async () => {
  const snoozed = await deliverAndIngest(h, fyi('Fire drill'));
  await h.waitFor(snoozed.threadId, (s) => s.state === 'skipped' && settled(s), 60_000);
  const outgoing = await deliverAndIngest(h, question('Budget figures'));
  await h.waitFor(outgoing.threadId, (s) => s.state === 'drafted' && settled(s));
  const waiting = await deliverAndIngest(h, question('Contract review'));
  const drafted = await h.waitFor(waiting.threadId, (s) => s.state === 'drafted' && settled(s));
  await userSends(h, waiting.threadId, drafted.draftId!, 'Here it is. Could you confirm you received it?');
  const awaiting = await h.waitFor(waiting.threadId, (s) => s.state === 'awaiting_reply' && settled(s));
  const followUpAt = awaiting.wakes!.find((w) => w.kind === 'follow_up')!.at;

  const t0 = Date.now();
  await setTimer(h, snoozed.threadId, { kind: 'snooze', at: t0 + 4_000 });
  await setTimer(h, outgoing.threadId, { kind: 'send_later', at: t0 + 4_500 });
  const remindAt = t0 + 22_000; // after the server is back
  await setTimer(h, snoozed.threadId, { kind: 'remind', at: remindAt, note: 'book the room' });
  await h.waitFor(snoozed.threadId, (s) => (s.wakes ?? []).length === 2 && settled(s));
  await h.waitFor(outgoing.threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));

  // The server goes down before any of them is due, and comes back after the snooze, the send and the follow-up.
  await server.stop();
  expect(Date.now()).toBeLessThan(Math.min(t0 + 4_000, followUpAt));
  await untilTime(Math.max(t0 + 4_500, followUpAt) + 2_000);
  expect(await sentIn(h, outgoing.threadId)).toHaveLength(0);
  expect((await journalOf(h, snoozed.threadId, 'snooze')).map((a) => a.state)).toEqual(['scheduled']);
  await server.start();
  expect(Date.now()).toBeLessThan(remindAt);

  await h.waitFor(snoozed.threadId, (s) => !s.wakes && settled(s), 60_000);
  await h.waitFor(outgoing.threadId, (s) => !s.wakes && settled(s), 60_000);
  await h.waitFor(waiting.threadId, (s) => !s.wakes && s.decisions.some((d) => d.detail.startsWith('nudge ')) && settled(s), 60_000);
  expect(Date.now()).toBeGreaterThanOrEqual(remindAt);
  // Then nothing under way that could fire anything twice (no timer left, no event, workflow task or
  // activity pending), and each thread as it is now.
  await untilQuiet([snoozed, outgoing, waiting].map((m) => h.handle(m.threadId)));
  const [back, sent, nudged] = (await Promise.all([snoozed, outgoing, waiting].map((m) => h.waitFor(m.threadId, settled)))) as [ThreadStatus, ThreadStatus, ThreadStatus];
  expect([back, sent, nudged].map((s) => s.wakes)).toEqual([undefined, undefined, undefined]);

  // The snooze and the reminder: once each, the thread back in the inbox, the user told once.
  expect(fired(back, 'snooze')).toBe(1);
  expect(fired(back, 'remind')).toBe(1);
  expect((await journalOf(h, snoozed.threadId, 'snooze')).map((a) => a.state)).toEqual(['done']);
  expect((await journalOf(h, snoozed.threadId, 'remind')).map((a) => a.state)).toEqual(['done']);
  expect(await labelsOf(h, snoozed.threadId)).toEqual(expect.arrayContaining(['INBOX', 'UNREAD', 'Snoozed']));
  expect((await told(snoozed.threadId, 'book the room'))).toHaveLength(1);

  // The send later: one message, journaled, the draft gone.
  expect(fired(sent, 'send later')).toBe(1);
  const [action] = await journalOf(h, outgoing.threadId, 'send_later');
  const messages = await sentIn(h, outgoing.threadId);
  expect(messages).toHaveLength(1);
  expect(action).toMatchObject({ state: 'done', result: { sentMessageId: messages[0]!.id } });
  expect(await draftsOf(h, outgoing.threadId)).toHaveLength(0);

  // The follow-up: labelled, told and nudged once.
  expect(fired(nudged, 'follow up')).toBe(1);
  expect((await journalOf(h, waiting.threadId, 'follow_up')).map((a) => a.state)).toEqual(['done']);
  expect(await labelsOf(h, waiting.threadId)).toContain('Follow Up');
  expect(await draftsOf(h, waiting.threadId)).toHaveLength(1);
  expect(await told(waiting.threadId, 'Follow up')).toHaveLength(1);
}, 180_000);
