// The optional hand-off: after the backfill, each thread with inbox mail from the last N days is
// handed to its thread workflow (signal-with-start, as the sync worker does); older threads and
// threads without inbox mail are not; they go in pages (handOverPageSize), each thread in exactly one.
// Nothing polls the thread queue here: the workflows are only started, which is what this test checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';
import { createBackfillHarness, type BackfillHarness } from '../helpers/backfill-harness.js';

const DAY = 86_400_000;

describe('hand-off to thread workflows', () => {
  let h: BackfillHarness;
  beforeAll(async () => {
    h = await createBackfillHarness({ messages: 120, spanDays: 10, emulator: { quota: false }, limiter: { startRate: 50_000, maxRate: 50_000 } });
    await h.startProcess();
  });
  afterAll(async () => h?.close());

  it('starts the thread workflows of inbox mail from the last N days, and only those, page by page', async () => {
    const rangeEnd = Date.now() + 60_000;
    const pageSize = 4;
    const backfill = await h.client.workflow.start(backfillWorkflow, {
      workflowId: backfillWorkflowId(h.accountId),
      taskQueue: h.taskQueue,
      args: [{ accountId: h.accountId, granularity: 'day', rangeEnd, handToThreadsDays: 3, handOverPageSize: pageSize, taskQueues: { workflows: h.taskQueue, gmail: h.taskQueue } }],
    });
    const result = await backfill.result();
    const messages = h.emulator.world.getAccount(h.email).mailbox.allMessages();
    const since = rangeEnd - 3 * DAY;
    const expected = new Set(messages.filter((m) => m.internalDate >= since && m.labelIds.includes('INBOX')).map((m) => m.threadId));
    const older = new Set(messages.filter((m) => !expected.has(m.threadId)).map((m) => m.threadId));
    expect(expected.size).toBeGreaterThan(0);
    expect(older.size).toBeGreaterThan(0);
    expect(result.counters.handedOff).toBe(expected.size);
    // Pages of 4 threads: as many activities as pages, the last one knowing it is the last (no empty page).
    const pages = (await backfill.fetchHistory()).events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'backfillHandToThreads');
    expect(expected.size).toBeGreaterThan(2 * pageSize);
    expect(pages).toHaveLength(Math.ceil(expected.size / pageSize));

    const exists = async (threadId: string) =>
      h.client.workflow
        .getHandle(threadWorkflowId(h.accountId, threadId))
        .describe()
        .then(
          () => true,
          () => false,
        );
    for (const threadId of expected) expect(await exists(threadId), threadId).toBe(true);
    for (const threadId of older) expect(await exists(threadId), threadId).toBe(false);
    for (const threadId of expected) await h.client.workflow.getHandle(threadWorkflowId(h.accountId, threadId)).terminate('test done');
  });
});
