// The optional hand-off: after the backfill, each thread with inbox mail from the last N days is
// handed to its thread workflow (signal-with-start, as the sync worker does); older threads and
// threads without inbox mail are not. Nothing polls the thread queue here: the workflows are only
// started, which is what this test checks.
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

  it('starts the thread workflows of inbox mail from the last N days, and only those', async () => {
    const rangeEnd = Date.now() + 60_000;
    const result = await h.client.workflow.execute(backfillWorkflow, {
      workflowId: backfillWorkflowId(h.accountId),
      taskQueue: h.taskQueue,
      args: [{ accountId: h.accountId, granularity: 'day', rangeEnd, handToThreadsDays: 3, taskQueues: { workflows: h.taskQueue, gmail: h.taskQueue } }],
    });
    const messages = h.emulator.world.getAccount(h.email).mailbox.allMessages();
    const since = rangeEnd - 3 * DAY;
    const expected = new Set(messages.filter((m) => m.internalDate >= since && m.labelIds.includes('INBOX')).map((m) => m.threadId));
    const older = new Set(messages.filter((m) => !expected.has(m.threadId)).map((m) => m.threadId));
    expect(expected.size).toBeGreaterThan(0);
    expect(older.size).toBeGreaterThan(0);
    expect(result.counters.handedOff).toBe(expected.size);

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
