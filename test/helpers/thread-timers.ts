// What the timer tests ask of a harness's mailbox and journal, and how they set a timer and play the
// user sending: shared by test/thread/timers*.test.ts.
import { randomUUID } from 'node:crypto';
import type { TimerRequest } from '../../src/thread/contracts.js';
import { requestTimer } from '../../src/thread/ingest.js';
import type { InboxHarness } from './inbox-harness.js';

/** The names of the labels on any message of the thread. */
export async function labelsOf(h: InboxHarness, threadId: string): Promise<string[]> {
  const state = await h.gmail.control.getState(h.email);
  const names = new Map(state.labels.map((l) => [l.id, l.name]));
  const ids = new Set(state.messages.filter((m) => m.threadId === threadId).flatMap((m) => m.labelIds));
  return [...ids].map((id) => names.get(id) ?? id);
}

export async function messagesOf(h: InboxHarness, threadId: string) {
  return (await h.gmail.control.getState(h.email)).messages.filter((m) => m.threadId === threadId);
}

/** The thread's messages the account sent (Gmail's SENT). */
export async function sentIn(h: InboxHarness, threadId: string) {
  return (await messagesOf(h, threadId)).filter((m) => m.labelIds.includes('SENT'));
}

export async function draftsOf(h: InboxHarness, threadId: string) {
  return (await h.gmail.control.getState(h.email)).drafts.filter((d) => d.threadId === threadId);
}

/** The user asks for a timer (as the CLI does). */
export const setTimer = (h: InboxHarness, threadId: string, request: TimerRequest, requestId: string = randomUUID()) =>
  requestTimer(h.client, {
    accountId: h.accountId,
    threadId,
    settings: h.settings,
    event: { type: 'timer_request', requestId, request, by: 'user' },
    taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
  });

/** The thread's journal rows of one kind, oldest first. */
export const journalOf = (h: InboxHarness, threadId: string, kind: string) =>
  h.prisma.$queryRawUnsafe<{ id: string; state: string; note: string | null; result: { sentMessageId?: string } | null }[]>(
    `SELECT id, state::text AS state, note, result FROM actions WHERE account_id = $1 AND gmail_thread_id = $2 AND kind = $3 ORDER BY created_at`,
    h.accountId,
    threadId,
    kind,
  );

export const fyi = (subject: string) => ({ from: 'Bob Example <bob@partner.example>', subject, text: 'Just so you know: the office is closed on Monday.' });
export const question = (subject: string) => ({ from: 'Alice Example <alice@partner.example>', subject, text: 'Could you send me the numbers by Friday?' });
