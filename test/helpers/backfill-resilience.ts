// What the backfill resilience tests share (test/backfill/resilience-*.test.ts): a mailbox behind a
// slow quota, so a test can act while its backfill is mid-way; the backfill in day slices; its slices
// still running.
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import type { BackfillHarness } from './backfill-harness.js';

/** 300 messages behind a slow quota (Gmail 6,000 units/min, our limiter held at 95 units/s): slow enough to act mid-way. */
export const SLOW_MAILBOX = {
  messages: 300,
  spanDays: 6,
  emulator: { quota: { profile: 'legacy', userUnitsPerMinute: 6000, burstSeconds: 2 } },
  limiter: { startRate: 95, maxRate: 95, maxConcurrency: 4 },
} as const;

/** A backfill in day slices, batches of 50, three slices at a time, on the harness's one task queue. */
export function startDailyBackfill(harness: BackfillHarness, extra: { rangeEnd?: number } = {}) {
  return harness.client.workflow.start(backfillWorkflow, {
    workflowId: backfillWorkflowId(harness.accountId),
    taskQueue: harness.taskQueue,
    args: [
      {
        accountId: harness.accountId,
        granularity: 'day',
        ...extra,
        batchSize: 50,
        window: 3,
        taskQueues: { workflows: harness.taskQueue, gmail: harness.taskQueue },
      },
    ],
  });
}

/** The slice workflows of the harness's account still running. */
export async function runningSlices(harness: BackfillHarness): Promise<number> {
  let n = 0;
  for await (const w of harness.client.workflow.list({ query: `WorkflowType = 'backfillSliceWorkflow' AND ExecutionStatus = 'Running'` })) {
    if (w.workflowId.startsWith(`backfill-${harness.accountId}-slice-`)) n++;
  }
  return n;
}
