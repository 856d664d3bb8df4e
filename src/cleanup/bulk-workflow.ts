// A bulk archive, trash or label of a sender's or a domain's mail, as one durable workflow (id
// bulk/<account>/<request>): a dry run counts what it would touch; a run moves batches of at most
// 1,000 messages, each journaled with its ids (undo restores exactly those), in the quota's bulk
// lane beside live mail and the backfill, until nothing matches. Resumable: a batch a killed worker
// left is found by its key and finished; long runs continue as new with their progress.
import { continueAsNew, defineQuery, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CleanupBulkActivities } from './activity-contracts.js';
import type { BulkInput, BulkProgress } from './contracts.js';

export const bulkProgressQuery = defineQuery<BulkProgress>('bulkProgress');

/** Batches per run before it continues as new (a short history). */
const BATCHES_PER_RUN = 200;

export async function bulkWorkflow(input: BulkInput): Promise<BulkProgress> {
  const bulk = proxyActivities<CleanupBulkActivities>({
    taskQueue: input.gmailTaskQueue,
    startToCloseTimeout: '10 minutes',
    // A batch's call heartbeats while it waits for the quota: a worker that stopped mid-batch is noticed in 20 s (or as configured).
    heartbeatTimeout: input.heartbeatTimeoutMs ?? '20 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: ['BulkSelectionError', 'BulkBatchStateError'] },
  });
  const progress: BulkProgress = input.progress ?? { state: 'counting', operation: input.operation, messages: 0, batches: 0, actionIds: [], startedAtMs: Date.now() };
  setHandler(bulkProgressQuery, () => progress);

  if (input.dryRun) {
    const counted = await bulk.countBulk({ accountId: input.accountId, selection: input.selection, operation: input.operation, ...(input.label !== undefined ? { label: input.label } : {}) });
    Object.assign(progress, { state: 'dry_run', messages: counted.messages, threads: counted.threads });
    return progress;
  }
  progress.state = 'running';
  for (let inRun = 0; inRun < BATCHES_PER_RUN; inRun++) {
    const { moved, actionId } = await bulk.runBulkBatch({
      accountId: input.accountId,
      workflowId: workflowInfo().workflowId,
      batch: progress.batches,
      selection: input.selection,
      operation: input.operation,
      ...(input.label !== undefined ? { label: input.label } : {}),
      batchSize: input.batchSize,
    });
    if (moved === 0) {
      progress.state = 'done';
      return progress;
    }
    progress.messages += moved;
    progress.batches += 1;
    if (actionId) progress.actionIds.push(actionId);
  }
  return continueAsNew<typeof bulkWorkflow>({ ...input, progress });
}
