// One time slice of a backfill: list its message ids, cut them into batches, store each batch
// with an activity; a batch that still fails after its retries is split in halves down to single
// ids, and a single id that still fails is recorded in bad_messages (it counts as finished).
// Reports to the parent by signal (the parent may have continued-as-new since it started us).
import { getExternalWorkflowHandle, isCancellation, log, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { accountUnusable } from '../accounts/account-access.js';
import { activityError, describeFailure, failureType } from '../temporal/workflow-failures.js';
import type { BackfillMailActivities, BackfillStoreActivities, BatchFailureDetails, BatchStoredCounts } from './activity-contracts.js';
import { BATCH_FAILED_TYPE } from './activity-contracts.js';
import { sliceDoneSignal, type SliceInput, type SliceReport } from './contracts.js';

/**
 * The account's mailbox (the input's mail queue), retried a little. An account that cannot be used fails at once
 * (the activity says it is final): the slice reports it, and the backfill waits for a reconnect.
 */
const MAIL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '60 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
};
/** After a split the halves get fewer attempts: the failing ids are already known to fail. */
const MAIL_AFTER_SPLIT_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '60 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 2 },
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

/** What a failed batch stored before it gave up (a batch failure) or the account stopped it (an account failure). */
function storedBeforeFailure(err: unknown): BatchStoredCounts | undefined {
  const counted = batchFailureDetails(err) !== undefined || accountUnusable(err) !== undefined;
  return counted ? (activityError(err)?.details?.[0] as BatchStoredCounts | undefined) : undefined;
}

function countStored(report: SliceReport, counts: BatchStoredCounts | undefined): void {
  report.stored += counts?.stored ?? 0;
  report.inserted += counts?.inserted ?? 0;
  report.gone += counts?.gone ?? 0;
}

interface SliceActivities {
  mail: BackfillMailActivities;
  mailAfterSplit: BackfillMailActivities;
  store: BackfillStoreActivities;
}

export async function backfillSliceWorkflow(input: SliceInput): Promise<SliceReport> {
  const acts: SliceActivities = {
    mail: proxyActivities<BackfillMailActivities>({ taskQueue: input.taskQueues.gmail, ...MAIL_OPTIONS }),
    mailAfterSplit: proxyActivities<BackfillMailActivities>({ taskQueue: input.taskQueues.gmail, ...MAIL_AFTER_SPLIT_OPTIONS }),
    store: proxyActivities<BackfillStoreActivities>({ taskQueue: input.taskQueues.workflows, ...STORE_OPTIONS }),
  };
  const report: SliceReport = { start: input.start, end: input.end, outcome: 'done', listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0 };
  try {
    const { accountId, start, end, overlapMs, maxListPages } = input;
    const listing = await acts.mail.backfillListSlice({ accountId, start, end, overlapMs, maxPages: maxListPages });
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
    if (accountUnusable(err)) report.accountUnusable = true; // the backfill waits for a reconnect, then starts the slice again
    await notifyParent(input, report);
    throw err;
  }
  await notifyParent(input, report);
  return report;
}

/**
 * Cuts the ids into batches of `batchSize` and stores them, `batchParallelism` batches at a time.
 * After a failure no batch starts, and the others finish (and are counted) before it goes up.
 */
async function storeInBatches(input: SliceInput, acts: SliceActivities, report: SliceReport, ids: string[]): Promise<void> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += input.batchSize) batches.push(ids.slice(i, i + input.batchSize));
  let next = 0;
  let failed = false;
  const lanes = await Promise.allSettled(
    Array.from({ length: Math.min(input.batchParallelism, batches.length) }, async () => {
      try {
        while (next < batches.length && !failed) await storeIds(input, acts, report, batches[next++]!, false);
      } catch (err) {
        failed = true;
        throw err;
      }
    }),
  );
  for (const lane of lanes) if (lane.status === 'rejected') throw lane.reason;
}

/**
 * Stores the ids with one activity. When some still fail after its retries, they are split in
 * halves and stored again, down to a single id, which is recorded as bad.
 */
async function storeIds(input: SliceInput, acts: SliceActivities, report: SliceReport, ids: string[], split: boolean, lastReason?: string): Promise<void> {
  if (ids.length === 0) return;
  try {
    countStored(report, await (split ? acts.mailAfterSplit : acts.mail).backfillStoreBatch({ accountId: input.accountId, ids, format: input.format }));
  } catch (err) {
    if (isCancellation(err)) throw err;
    // The activity stored some before failing; they are counted (they are in Postgres).
    countStored(report, storedBeforeFailure(err));
    if (accountUnusable(err)) throw err; // the slice fails; the backfill waits for a reconnect, then starts it again
    const details = batchFailureDetails(err);
    const remaining = details?.remaining ?? ids;
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
