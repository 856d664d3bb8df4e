// Corrections after the thread's workflow has ended, end to end: a newsletter is labelled and
// archived by its category's actions and its run ends (idle); days later, in the Gmail emulator, the
// user moves it back to the inbox. The sync (syncHistoryPage) finds no running workflow and starts a
// learn-only run, which records the correction, writes it to the thread's log and ends without
// classifying, drafting or changing anything; twice for one sender proposes a triage lesson. Our own
// label changes after the close, and a redelivered page, record nothing; mail that comes while a
// learn-only run waits makes it an ordinary run.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { listLessons, loadLesson } from '../../src/learning/memory.js';
import { retentionWorkflow } from '../../src/retention/retention-workflow.js';
import { learnAfterClose } from '../../src/thread/ingest.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';
import { deliver, deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { newsletterCorrections, type NewsletterCorrections } from '../helpers/newsletter-corrections.js';
import { waitUntil } from '../helpers/wait-until.js';

const tag = randomUUID().slice(0, 8);
const domain = `closed-${tag}.example`;
const sender = `news@${domain}`;
let h: InboxHarness;
let world: NewsletterCorrections;

const db = () => prismaExecutor(h.prisma);
const journal = (threadId: string) => listActions(db(), { accountId: h.accountId, threadId, ascending: true });
const corrections = (threadId?: string) =>
  h.prisma.learningCorrection.findMany({ where: { accountId: h.accountId, ...(threadId ? { gmailThreadId: threadId } : {}) }, orderBy: { id: 'asc' } });
const lessonFor = async (from: string) => (await listLessons(db(), { accountId: h.accountId })).find((l) => l.scopeRef === from);
const threadRow = (threadId: string) => h.prisma.thread.findUniqueOrThrow({ where: { accountId_gmailThreadId: { accountId: h.accountId, gmailThreadId: threadId } } });
const loggedCorrections = async (threadId: string) => {
  const row = await threadRow(threadId);
  const decisions = await h.prisma.decision.findMany({ where: { threadId: row.id, kind: 'correction' }, orderBy: { id: 'asc' } });
  return decisions.map((d) => (d.detail as { text: string }).text);
};

/** The sync reads the mailbox's history since `from` (or since the last syncNow) and hands the changes to the threads. */
const syncFrom = (from: string) => world.syncFrom(from);
const syncNow = () => world.syncNow();

/** The thread's latest run has ended; its result. */
async function runEnded(threadId: string): Promise<ThreadStatus> {
  const handle = h.handle(threadId);
  await waitUntil(`run of ${threadId} ended`, async () => (await handle.describe()).status.name === 'COMPLETED', { timeoutMs: 30_000 });
  return (await handle.result()) as ThreadStatus;
}

/** A newsletter from the sender, labelled and archived by its category's actions; its run has ended (idle). */
async function newsletter(subject: string): Promise<string> {
  const { threadId } = await deliverAndIngest(h, { from: `Shop <${sender}>`, subject, text: 'This week in the shop.' });
  await waitUntil(`${subject}: actions done`, async () => (await journal(threadId)).filter((a) => a.state === 'done').length === 2, { timeoutMs: 30_000 });
  expect((await runEnded(threadId)).state).toBe('skipped');
  return threadId;
}

const movedBack = (threadId: string) => h.gmail.control.modifyLabels(h.email, { threadId, add: ['INBOX'] });

beforeAll(async () => {
  // A thread that needed nothing from us ends its run after a second (THREAD_SKIPPED_IDLE_AFTER).
  h = await startInboxHarness({ env: { TRIAGE_LESSON_AFTER: '2' }, settings: { skippedIdleTimeoutMs: 1_000 } });
  await h.startWorkers();
  world = await newsletterCorrections(h, domain);
});

afterAll(async () => {
  await world?.cleanUp();
  await h?.close();
});

describe('corrections of a thread whose workflow has ended', () => {
  const threads: string[] = [];

  it('a newsletter moved back after its run ended is learned by a learn-only run; twice proposes "do not archive"', async () => {
    threads.push(await newsletter('Issue 1'), await newsletter('Issue 2'));
    // Our own label and archive come back through history after the runs ended: learn-only runs
    // start for the label (it could have been the user's), see it is ours and record nothing.
    await syncNow();
    await runEnded(threads[1]!);
    expect(await corrections()).toEqual([]);
    const before = await Promise.all(threads.map(async (t) => ({ row: await threadRow(t), actions: await journal(t) })));

    const beforeMove = world.cursor;
    await movedBack(threads[0]!);
    await syncNow();
    await waitUntil('first correction', async () => (await corrections(threads[0])).length === 1, { timeoutMs: 30_000 });
    const learned = await runEnded(threads[0]!);
    expect(learned.state).toBe('skipped'); // the thread as its last ordinary run left it
    expect(learned.decisions.map((d) => d.detail)).toEqual(['you moved it back to the inbox after we archived it']);
    expect(await lessonFor(sender)).toBeUndefined(); // once is not a habit

    await movedBack(threads[1]!);
    await syncNow();
    const lesson = await waitUntil('lesson proposed', () => lessonFor(sender), { timeoutMs: 30_000 });
    expect(lesson).toMatchObject({ kind: 'triage', scope: 'sender', state: 'proposed', current: { rule: { category: 'newsletter', actions: [{ kind: 'add_label', argument: 'Newsletters' }] } } });
    expect(lesson.current.text).toBe(`mail from ${sender}: do not archive (still newsletter; then: add_label:Newsletters)`);
    expect(lesson.current.evidence.map((e) => [e.source, e.kind, e.threadId]).sort()).toEqual(threads.map((t) => ['moved_back', 'archive', t]).sort());
    await runEnded(threads[1]!);
    await recordHistory(h, threads[1]!, 'thread-correction-after-close');

    // The thread's log says what was seen and proposed (threads show reads it), and nothing else changed:
    // not classified again, no action, the row as the ordinary run left it.
    expect(await loggedCorrections(threads[1]!)).toEqual(['you moved it back to the inbox after we archived it', `lesson(s) proposed: ${lesson.id}`]);
    for (const [i, t] of threads.entries()) {
      const row = await threadRow(t);
      expect({ state: row.state, category: row.category, handled: row.handledMessageIds, updatedAt: row.updatedAt }).toEqual({
        state: before[i]!.row.state,
        category: before[i]!.row.category,
        handled: before[i]!.row.handledMessageIds,
        updatedAt: before[i]!.row.updatedAt,
      });
      expect(await journal(t)).toEqual(before[i]!.actions);
    }

    // The same history read again (a redelivered page): learn-only runs start again and record nothing twice.
    await syncFrom(beforeMove);
    await runEnded(threads[1]!);
    await runEnded(threads[0]!);
    expect(await corrections()).toHaveLength(2);
    expect(await loggedCorrections(threads[0]!)).toEqual(['you moved it back to the inbox after we archived it']);
  });

  it('mail that comes while a learn-only run waits is classified: the run carries on as an ordinary one', async () => {
    const threadId = threads[0]!;
    const handledBefore = (await threadRow(threadId)).handledMessageIds;
    // No worker: the learn-only run and the new mail both wait for its first task.
    await h.stopWorkers();
    await learnAfterClose(h.client, {
      accountId: h.accountId,
      threadId,
      settings: h.settings,
      taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      event: { type: 'labels_changed', messageId: 'm', changeId: `again-${tag}`, added: [], removed: [], inboxAdded: true },
    });
    const { messageId } = await deliver(h, { from: `Shop <${sender}>`, subject: 'Re: Issue 1', text: 'More from the shop.', threadId });
    await h.ingest(threadId, { type: 'message_added', messageId, labelIds: ['INBOX'] });
    await h.startWorkers();
    await waitUntil('new mail classified', async () => (await threadRow(threadId)).handledMessageIds.includes(messageId), { timeoutMs: 30_000 });
    const status = await runEnded(threadId); // an ordinary run: it ends idle after the mail's actions
    expect(status.state).toBe('skipped');
    expect((await threadRow(threadId)).handledMessageIds).toEqual([...handledBefore, messageId]);
    expect(await corrections(threadId)).toHaveLength(1); // the change was seen before: nothing recorded twice
  });

  it('retention deletes the corrections after their bound; the lesson keeps its evidence', async () => {
    const lesson = (await lessonFor(sender))!;
    const [old, recent] = await corrections();
    await h.prisma.learningCorrection.update({ where: { id: old!.id }, data: { createdAt: new Date(Date.now() - 61 * 86_400_000) } });
    const result = await h.client.workflow.execute(retentionWorkflow, {
      taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      workflowId: `retention-corrections-${tag}`,
      args: [{ retentionDays: 3650, correctionsDays: 60 }],
    });
    expect(result.correctionsDeleted).toBeGreaterThanOrEqual(1);
    expect(result.evidenceDeleted).toBeUndefined(); // not asked for
    expect((await corrections()).map((c) => c.id)).toEqual([recent!.id]);
    // The lesson's version keeps its copy: both threads, the sender and the subject, the corrected actions.
    const kept = (await loadLesson(db(), lesson.id))!;
    expect(kept.current.evidence.map((e) => [e.threadId, e.sender, e.subject]).sort()).toEqual(
      lesson.current.evidence.map((e) => [e.threadId, e.sender, e.subject]).sort(),
    );
    expect(kept.current.evidence).toHaveLength(2);
  });
});
