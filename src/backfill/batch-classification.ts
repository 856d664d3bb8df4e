// Workflow code: the hand-over's classifications through one Message Batch (classifyInBatch), at half
// the price of the same calls one by one. The threads to hand over are read and the ones no rule
// decides get one request each (mail queue; the prompts stay in Postgres, never in history); the batch
// is submitted (LLM queue; the submit records its id, so a retry finds it), waited for with timers
// (its status looked at after firstMs, then twice as long each time up to maxMs; the API ends it at
// 24 h at the latest, expired), and its results read into Postgres page by page (only counts come
// back into history, never the verdicts; a retried read resumes after the pages stored). The
// hand-over, page by page too, then gives each
// thread the verdict on its newest inbound message; a request that errored, expired, was canceled or
// holds no usable answer gets none, and its thread classifies as always. A batch that cannot be made
// or read never stops the backfill: its threads take the normal path.
import { CancellationScope, isCancellation, log, proxyActivities, sleep, type ActivityOptions } from '@temporalio/workflow';
import type { BackfillBatchLlmActivities, BackfillBatchMailActivities } from './activity-contracts.js';
import type { BackfillSettings } from './contracts.js';

/** The API expires a batch 24 h after it was created; past this (and a margin) it is cancelled. */
const BATCH_EXPIRY_MS = 24 * 3600_000;
const EXPIRY_MARGIN_MS = 3600_000;

const PREPARE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
};
/** Transient failures are retried for a while; after that the threads take the normal path. */
const LLM_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 12 },
};
/** Reading the results (up to 100,000 lines) takes as long as it takes; it heartbeats after each page it stores. */
const COLLECT_OPTIONS: ActivityOptions = { ...LLM_OPTIONS, startToCloseTimeout: '3 hours', heartbeatTimeout: '2 minutes' };

/**
 * Classifies the threads the hand-over will hand over (inbox mail since `sinceMs`) in one Message
 * Batch; returns the batch's key for the hand-over, or undefined when no batch was made.
 */
export async function classifyInBatch(
  accountId: string,
  backfillId: string,
  sinceMs: number,
  settings: Pick<BackfillSettings, 'batchPoll' | 'handOverPageSize' | 'taskQueues'>,
): Promise<{ batchKey: string; decided: number } | undefined> {
  const mail = proxyActivities<BackfillBatchMailActivities>({ taskQueue: settings.taskQueues.gmail, ...PREPARE_OPTIONS });
  const llm = proxyActivities<BackfillBatchLlmActivities>({ taskQueue: settings.taskQueues.llm, ...LLM_OPTIONS });
  const results = proxyActivities<Pick<BackfillBatchLlmActivities, 'batchCollect'>>({ taskQueue: settings.taskQueues.llm, ...COLLECT_OPTIONS });
  const batchKey = `${backfillId}/classify`;
  let batchId: string | null = null;
  try {
    const prepared = await mail.batchPrepareClassification({ accountId, batchKey, sinceMs });
    if (prepared.requests === 0) return undefined;
    const submitted = await llm.batchSubmit({ accountId, batchKey });
    batchId = submitted.batchId;
    if (!batchId) {
      log.warn('no Message Batch: the threads classify one by one', { accountId, reason: submitted.skipped });
      return undefined;
    }
    log.info('Message Batch submitted', { accountId, batchId, requests: submitted.requests });
    const giveUpAt = Date.now() + BATCH_EXPIRY_MS + EXPIRY_MARGIN_MS;
    let cancelled = false;
    for (let wait = settings.batchPoll.firstMs; ; wait = Math.min(wait * 2, settings.batchPoll.maxMs)) {
      await sleep(wait);
      const status = await llm.batchStatus({ batchId });
      if (status.ended) break;
      if (!cancelled && Date.now() >= giveUpAt) {
        await llm.batchCancel({ batchId }); // it ends soon after: what it did answer is still read
        cancelled = true;
      }
    }
    const collected = await results.batchCollect({ accountId, batchKey, batchId, pageSize: settings.handOverPageSize });
    log.info('Message Batch read', { accountId, batchId, ...collected });
    return { batchKey, decided: collected.decided };
  } catch (err) {
    if (isCancellation(err)) {
      // The backfill was cancelled: so is the batch, not to be paid for.
      if (batchId) await CancellationScope.nonCancellable(() => llm.batchCancel({ batchId: batchId! })).catch(() => undefined);
      throw err;
    }
    log.warn('the Message Batch failed: the threads classify one by one', { accountId, batchId, error: String(err) });
    return undefined;
  }
}
