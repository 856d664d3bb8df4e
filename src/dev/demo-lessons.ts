// The demo's lessons waiting for the user (docs/learning.md). Triage: two newsletters from one shop
// that "you moved back to the inbox" (two corrections, seeded as the thread workflow records them),
// from which the learning proposes "mail from news@shop.example: do not archive". Seeded once per
// demo mailbox; the derivation is the real one, so the proposal, its evidence and its dry run are
// real. Writing: two questions the demo user answers in the Gmail emulator with a greeting of their
// own, learned through the sync, the thread workflows and the learning workflow.
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { extractText, parseMime } from '../../emulators/gmail/mime.js';
import { type LearningSettings, WRITING_KINDS } from '../learning/contracts.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { learningWorkflow } from '../learning/learning-workflow.js';
import { deriveTriageLessons } from '../learning/triage-lessons.js';
import { notifySync, type SyncTarget } from '../sync/notify.js';

export const DEMO_NEWS_SENDER = 'news@shop.example';
const SUBJECTS = ['This week at the shop', 'Our autumn offers'];

/** Two newsletters from the demo shop into the demo mailbox (seedDemoMailbox). */
export async function deliverDemoNewsletters(gmail: RunningGmailEmulator, email: string): Promise<void> {
  for (const subject of SUBJECTS) {
    await gmail.control.deliver(email, {
      from: { name: 'The Shop', email: DEMO_NEWS_SENDER },
      to: [email],
      subject,
      text: 'New arrivals, and what our readers liked this week.',
      headers: { 'List-Unsubscribe': `<mailto:unsubscribe@shop.example>` },
    });
  }
}

/**
 * Two moved-back corrections for the demo shop's newsletters, then the derivation: one triage lesson
 * waits. Idempotent (the corrections' keys; the lesson's key), and nothing when the demo mailbox has
 * no such newsletters (a demo restored from before them).
 */
export async function ensureDemoTriageLesson(gmail: RunningGmailEmulator, prisma: PrismaClient, accountId: string, email: string, settings: LearningSettings): Promise<string[]> {
  const state = await gmail.control.getState(email);
  const threads = new Map<string, string>();
  for (const m of state.messages) if (m.from.includes(DEMO_NEWS_SENDER) && SUBJECTS.includes(m.subject)) threads.set(m.threadId, m.subject);
  if (threads.size < 2) return [];
  const db = prismaExecutor(prisma);
  for (const [threadId, subject] of threads) {
    await db.query(
      `INSERT INTO learning_corrections (account_id, gmail_thread_id, key, change_id, source, kind, sender, subject, category)
       VALUES ($1, $2, $3, 'demo', 'moved_back', 'archive', $4, $5, 'newsletter') ON CONFLICT (account_id, key) DO NOTHING`,
      [accountId, threadId, `demo:moved_back:${threadId}`, DEMO_NEWS_SENDER, subject],
    );
  }
  return (await deriveTriageLessons(db, { accountId, settings })).changed;
}

// ---- the demo's writing lesson ----------------------------------------------------------------

/** Two questions the demo user answers, opening with their own greeting where our drafts say "Hi". */
export const DEMO_QUESTIONS = [
  { from: { name: 'Nina Patel', email: 'nina@lakeside.example' }, subject: 'Venue for the offsite', text: 'Hi,\n\nCould you send me the address of the venue for the offsite?\n\nThanks,\nNina' },
  { from: { name: 'Tom Berg', email: 'tom@harbour.example' }, subject: 'Slides for the review', text: 'Hello,\n\nCould you share the slides before the review?\n\nTom' },
] as const;
/** The demo user's greeting: the lesson "Open every reply with "Hello" and the first name." */
export const DEMO_GREETING = 'Hello';

/** The two questions into the demo mailbox (seedDemoMailbox). */
export async function deliverDemoQuestions(gmail: RunningGmailEmulator, email: string): Promise<void> {
  for (const q of DEMO_QUESTIONS) await gmail.control.deliver(email, { from: q.from, to: [email], subject: q.subject, text: q.text });
}

export interface DemoWritingDeps {
  gmail: RunningGmailEmulator;
  prisma: PrismaClient;
  client: Client;
  /** The account's sync (told to read the mailbox after the sends; the push does so too). */
  sync: SyncTarget;
  accountId: string;
  email: string;
  /** Where the learning workflow runs and calls its activities. */
  queues: { workflow: string; llm: string; gmail: string };
  signal?: AbortSignal;
  /** How long to wait for each step (our drafts, the evidence); default 5 minutes. */
  timeoutMs?: number;
}

/**
 * The demo user answers the two demo questions through the Gmail emulator: each of our drafts is
 * edited to open with "Hello" instead of "Hi" and sent. The sync reads the sends, the thread
 * workflows keep our drafts beside what was sent (the writing evidence), and a run of the learning
 * workflow proposes the greeting lesson (the Anthropic emulator's stand-in), announced on Discord;
 * it waits for the user. All through the real path, nothing inserted. Idempotent: a thread answered
 * already is not answered again, and an account with a writing lesson gets nothing more. Returns the
 * lessons proposed (none when the demo mailbox has no such questions: a demo from before them).
 */
export async function ensureDemoWritingLesson(deps: DemoWritingDeps): Promise<string[]> {
  const { gmail, prisma, accountId, email } = deps;
  const wait = <T>(what: string, probe: () => Promise<T | undefined>) => until(what, probe, deps.timeoutMs ?? 300_000, deps.signal);
  if (await prisma.lesson.findFirst({ where: { accountId, kind: { in: [...WRITING_KINDS] } } })) return [];
  const state = await gmail.control.getState(email);
  const threads = DEMO_QUESTIONS.flatMap((q) => state.messages.find((m) => m.from.includes(q.from.email) && m.subject === q.subject)?.threadId ?? []);
  if (threads.length < DEMO_QUESTIONS.length) return [];

  for (const threadId of threads) {
    const answered = (await gmail.control.getState(email)).messages.some((m) => m.threadId === threadId && m.labelIds.includes('SENT'));
    if (answered) continue;
    // Our draft, as the thread workflow wrote it and recorded it.
    const draftId = await wait(`our draft of demo thread ${threadId}`, async () => {
      const row = await prisma.thread.findUnique({ where: { accountId_gmailThreadId: { accountId, gmailThreadId: threadId } } });
      return row?.state === 'drafted' && row.draftId ? row.draftId : undefined;
    });
    const draft = (await gmail.control.getState(email)).drafts.find((d) => d.id === draftId);
    if (!draft) continue;
    const body = extractText(parseMime(gmail.world.getAccount(email).mailbox.getMessage(draft.messageId).raw));
    const [first = '', ...rest] = body.split('\n');
    await gmail.control.editDraft(email, draft.id, { text: [first.replace(/^\S+(?= )/, DEMO_GREETING), ...rest].join('\n') });
    await gmail.control.sendDraft(email, draft.id);
  }
  await notifySync(deps.sync, accountId, { source: 'poll' });
  await wait('the writing evidence of the demo answers', async () => {
    const kept = await prisma.writingEvidence.count({ where: { accountId, gmailThreadId: { in: threads }, source: 'sent', edited: true } });
    return kept === threads.length || undefined;
  });
  const workflowId = `demo-learning-${accountId}`;
  const handle = await deps.client.workflow
    .start(learningWorkflow, { taskQueue: deps.queues.workflow, workflowId, args: [{ llmTaskQueue: deps.queues.llm, gmailTaskQueue: deps.queues.gmail, accountIds: [accountId] }] })
    .catch((err: unknown) => {
      // Started by a run of the demo that was stopped meanwhile: its result is as good.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return deps.client.workflow.getHandle<typeof learningWorkflow>(workflowId);
      throw err;
    });
  return (await handle.result()).proposed;
}

/** Asks `probe` every second until it answers; throws after `timeoutMs`, or when `signal` aborts. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, signal?: AbortSignal): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(1000, undefined, { signal });
  }
}
