// One time slice of a backfill: list its message ids, cut them into batches, store each batch
// with an activity; a batch that still fails after its retries is split in halves down to single
// ids, and a single id that still fails is recorded in bad_messages (it counts as finished).
// Reports to the parent by signal (the parent may have continued-as-new since it started us).
import { getExternalWorkflowHandle, isCancellation, log, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { ACCOUNT_UNUSABLE_TYPES } from '../accounts/account-access.js';
import { activityError, describeFailure, failureType } from '../temporal/workflow-failures.js';
import type { BackfillGmailActivities, BackfillStoreActivities, BatchFailureDetails } from './activity-contracts.js';
import { BATCH_FAILED_TYPE } from './activity-contracts.js';
import { sliceDoneSignal, type SliceInput, type SliceReport } from './contracts.js';

/** Gmail (the input's Gmail queue): an account that cannot be used fails at once, the rest is retried a little. */
const GMAIL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '60 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3, nonRetryableErrorTypes: ACCOUNT_UNUSABLE_TYPES },
};
/** After a split the halves get fewer attempts: the failing ids are already known to fail. */
const GMAIL_AFTER_SPLIT_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '60 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 2, nonRetryableErrorTypes: ACCOUNT_UNUSABLE_TYPES },
};
/** Postgres (the input's workflow queue). */
const STORE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
};

/** A batch's failure carries what it stored before it gave up, and the ids still failing. */
function batchFailureDetails(err: unknown): BatchFailureDetails | undefined {
  const failure = activityError(err);
  return failure?.type === BATCH_FAILED_TYPE ? (failure.details?.[0] as BatchFailureDetails | undefined) : undefined;
}

/** No retry helps until the user reconnects the account: the slice fails, and the backfill with it. */
function accountCannotBeUsed(err: unknown): boolean {
  return ACCOUNT_UNUSABLE_TYPES.includes(failureType(err) ?? '');
}

interface SliceActivities {
  gmail: BackfillGmailActivities;
  gmailAfterSplit: BackfillGmailActivities;
  store: BackfillStoreActivities;
}

export async function backfillSliceWorkflow(input: SliceInput): Promise<SliceReport> {
  const acts: SliceActivities = {
    gmail: proxyActivities<BackfillGmailActivities>({ taskQueue: input.taskQueues.gmail, ...GMAIL_OPTIONS }),
    gmailAfterSplit: proxyActivities<BackfillGmailActivities>({ taskQueue: input.taskQueues.gmail, ...GMAIL_AFTER_SPLIT_OPTIONS }),
    store: proxyActivities<BackfillStoreActivities>({ taskQueue: input.taskQueues.workflows, ...STORE_OPTIONS }),
  };
  const report: SliceReport = { start: input.start, end: input.end, outcome: 'done', listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0 };
  try {
    const { accountId, start, end, overlapMs, maxListPages } = input;
    const listing = await acts.gmail.backfillListSlice({ accountId, start, end, overlapMs, maxPages: maxListPages });
    if (listing.tooDeep) {
      report.outcome = 'split'; // the backfill puts two halves in its place
    } else {
      report.listed = listing.ids.length;
      await storeInBatches(input, acts, report, listing.ids);
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    report.outcome = 'failed';
    report.error = describeFailure(err);
    const type = failureType(err);
    if (type) report.errorType = type;
    await notifyParent(input, report);
    throw err;
  }
  await notifyParent(input, report);
  return report;
}

/** Cuts the ids into batches of `batchSize` and stores them, `batchParallelism` batches at a time. */
async function storeInBatches(input: SliceInput, acts: SliceActivities, report: SliceReport, ids: string[]): Promise<void> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += input.batchSize) batches.push(ids.slice(i, i + input.batchSize));
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(input.batchParallelism, batches.length) }, async () => {
      while (next < batches.length) await storeIds(input, acts, report, batches[next++]!, false);
    }),
  );
}

/**
 * Stores the ids with one activity. When some still fail after its retries, they are split in
 * halves and stored again, down to a single id, which is recorded as bad.
 */
async function storeIds(input: SliceInput, acts: SliceActivities, report: SliceReport, ids: string[], split: boolean, lastReason?: string): Promise<void> {
  if (ids.length === 0) return;
  try {
    const r = await (split ? acts.gmailAfterSplit : acts.gmail).backfillStoreBatch({ accountId: input.accountId, ids, format: input.format });
    report.stored += r.stored;
    report.inserted += r.inserted;
    report.gone += r.gone;
  } catch (err) {
    if (accountCannotBeUsed(err) || isCancellation(err)) throw err;
    const details = batchFailureDetails(err);
    const remaining = details?.remaining ?? ids;
    // The activity stored the others before failing; count them (they are in Postgres).
    report.stored += details?.stored ?? 0;
    report.inserted += details?.inserted ?? 0;
    report.gone += details?.gone ?? 0;
    if (remaining.length === 1) {
      const id = remaining[0]!;
      const reason = details?.reasons[id] ?? lastReason ?? describeFailure(err);
      await acts.store.backfillRecordBad({ accountId: input.accountId, gmailId: id, reason });
      report.bad++;
      log.warn('bad message isolated', { accountId: input.accountId, gmailId: id });
      return;
    }
    const mid = Math.ceil(remaining.length / 2);
    await storeIds(input, acts, report, remaining.slice(0, mid), true);
    await storeIds(input, acts, report, remaining.slice(mid), true);
  }
}

async function notifyParent(input: SliceInput, report: SliceReport): Promise<void> {
  try {
    await getExternalWorkflowHandle(input.parentWorkflowId).signal(sliceDoneSignal, report);
  } catch (err) {
    // The parent is gone (cancelled or terminated): a restarted backfill redoes this slice.
    log.warn('could not report slice to the backfill', { error: String(err) });
  }
}
