// One time slice of a backfill: list its message ids, cut them into batches, store each batch
// with an activity; a batch that still fails after its retries is split in halves down to single
// ids, and a single id that still fails is recorded in bad_messages (it counts as finished).
// Reports to the parent by signal (the parent may have continued-as-new since it started us).
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
} from '@temporalio/workflow';
import type { BackfillGmailActivities, BackfillStoreActivities, BatchFailureDetails } from './activity-contracts.js';
import { BATCH_FAILED_TYPE } from './activity-contracts.js';
import { sliceDoneSignal, type SliceInput, type SliceReport } from './contracts.js';

const FATAL_TYPES = ['GmailAuthError', 'AccountNotConnectedError'];

function failureDetails(err: unknown): BatchFailureDetails | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === BATCH_FAILED_TYPE) {
    return err.cause.details?.[0] as BatchFailureDetails | undefined;
  }
  return undefined;
}

function isFatal(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && FATAL_TYPES.includes(err.cause.type ?? '');
}

export async function backfillSliceWorkflow(input: SliceInput): Promise<SliceReport> {
  const gmail = proxyActivities<BackfillGmailActivities>({
    taskQueue: input.taskQueues.gmail,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '60 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3, nonRetryableErrorTypes: FATAL_TYPES },
  });
  // After a split the halves get fewer attempts: the failing ids are already known to fail.
  const gmailAfterSplit = proxyActivities<BackfillGmailActivities>({
    taskQueue: input.taskQueues.gmail,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '60 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 2, nonRetryableErrorTypes: FATAL_TYPES },
  });
  const store = proxyActivities<BackfillStoreActivities>({
    taskQueue: input.taskQueues.workflows,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });

  const report: SliceReport = { start: input.start, end: input.end, outcome: 'done', listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0 };

  const storeIds = async (ids: string[], split: boolean, lastReason?: string): Promise<void> => {
    if (ids.length === 0) return;
    try {
      const r = await (split ? gmailAfterSplit : gmail).backfillStoreBatch({ accountId: input.accountId, ids, format: input.format });
      report.stored += r.stored;
      report.inserted += r.inserted;
      report.gone += r.gone;
    } catch (err) {
      if (isFatal(err) || isCancellation(err)) throw err;
      const details = failureDetails(err);
      const remaining = details?.remaining ?? ids;
      // The activity stored the others before failing; count them (they are in Postgres).
      report.stored += details?.stored ?? 0;
      report.inserted += details?.inserted ?? 0;
      report.gone += details?.gone ?? 0;
      if (remaining.length === 1) {
        const id = remaining[0]!;
        const reason = details?.reasons[id] ?? lastReason ?? describe(err);
        await store.backfillRecordBad({ accountId: input.accountId, gmailId: id, reason });
        report.bad++;
        log.warn('bad message isolated', { accountId: input.accountId, gmailId: id });
        return;
      }
      const mid = Math.ceil(remaining.length / 2);
      await storeIds(remaining.slice(0, mid), true);
      await storeIds(remaining.slice(mid), true);
    }
  };

  try {
    const listing = await gmail.backfillListSlice({
      accountId: input.accountId,
      start: input.start,
      end: input.end,
      overlapMs: input.overlapMs,
      maxPages: input.maxListPages,
    });
    if (listing.tooDeep) {
      report.outcome = 'split';
    } else {
      const ids = listing.ids;
      report.listed = ids.length;
      const batches: string[][] = [];
      for (let i = 0; i < ids.length; i += input.batchSize) batches.push(ids.slice(i, i + input.batchSize));
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(input.batchParallelism, batches.length) }, async () => {
          while (next < batches.length) await storeIds(batches[next++]!, false);
        }),
      );
    }
  } catch (err) {
    if (err instanceof CancelledFailure || isCancellation(err)) throw err;
    report.outcome = 'failed';
    report.error = describe(err);
    await notifyParent(input, report);
    throw err;
  }
  await notifyParent(input, report);
  return report;
}

async function notifyParent(input: SliceInput, report: SliceReport): Promise<void> {
  try {
    await getExternalWorkflowHandle(input.parentWorkflowId).signal(sliceDoneSignal, report);
  } catch (err) {
    // The parent is gone (cancelled or terminated): a restarted backfill redoes this slice.
    log.warn('could not report slice to the backfill', { error: String(err) });
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const type = cause instanceof ApplicationFailure ? (cause.type ?? cause.name) : cause?.name;
  return cause ? `${err.message}: ${type}: ${cause.message}` : err.message;
}
