// The backfill of one account (workflow id backfill-<accountId>): plans the time range and the
// slice granularity, runs a sliding window of slice children, and advances the Ordered Frontier
// Commit watermark as slices finish in any order; at the end it may hand recent threads over to
// their thread workflows. Continue-as-new carries the window (running children keep running:
// parentClosePolicy ABANDON, they report by signal to this workflow id) and the frontier.
// Cancelling the backfill cancels the running slices explicitly. As slices report, it judges the
// bad-message and metadata alerts and has each new one delivered (src/backfill/alerts.ts). An
// account that cannot be used (a revoked grant) pauses the planning or the window until the user
// reconnects it (src/accounts/account-access.ts); then the window fills again where it stopped.
// The process is backfillWorkflow below, its steps after it; the decisions are pure modules
// (backfill-state.ts, slice-window.ts, frontier.ts, alerts.ts); the Temporal plumbing of a run
// (signals, query, search attributes, activities, children, continue-as-new) is backfill-run.ts.
import { ApplicationFailure, isCancellation, log, patched } from '@temporalio/workflow';
import { accountUnusableFailure } from '../accounts/account-access.js';
import { alertsAfter, judgeSlice } from './alerts.js';
import { BackfillRun } from './backfill-run.js';
import { classifyInBatch } from './batch-classification.js';
import { granularityFor, planRequest, plannedState } from './backfill-state.js';
import type { HandoffCursor, HandoffInput } from './activity-contracts.js';
import type { BackfillCarried, BackfillInput, BackfillResult, SliceReport } from './contracts.js';
import { complete } from './frontier.js';
import { nextSlice, takeReport } from './slice-window.js';
import { DAY_MS } from './slicing.js';

export type { BackfillResult } from './contracts.js';

export async function backfillWorkflow(input: BackfillInput): Promise<BackfillResult> {
  const run = new BackfillRun(input);
  run.begin(input.carried ?? (await plan(run, input))); // a fresh backfill plans; a continued one carries on
  await run.stoppingSlicesOnFailure(() => run.access.whileUsable('slices', () => runWindow(run)));
  await handOver(run);
  return run.finish();
}

// ---- the steps ------------------------------------------------------------------------------

/** Slices in a sliding window until every slice of the range is done; the watermark follows them. */
async function runWindow(run: BackfillRun): Promise<void> {
  await startSlices(run);
  run.publish();
  while (!run.complete) {
    await run.reportsArrived(); // slices report by signal, in any order
    for (let report = run.nextReport(); report; report = run.nextReport()) await takeSliceReport(run, report);
    await startSlices(run);
    run.publish();
    if (run.runIsLong) await run.continueAsNew(); // the window carries on in a fresh run
  }
}

/** The range (options, else what an earlier backfill saved, else the mailbox) and the granularity, saved for a restart. */
async function plan(run: BackfillRun, input: BackfillInput): Promise<BackfillCarried> {
  const stored = await run.store.backfillLoadState({ accountId: run.accountId });
  const planned = await run.mail.backfillPlan(planRequest(input, stored));
  const granularity = granularityFor(input, stored, planned, run.settings.targetPerSlice);
  const { rangeStart, rangeEnd } = planned;
  await run.store.backfillSaveRange({ accountId: run.accountId, backfillId: run.backfillId, rangeStart, rangeEnd, granularity });
  const state = plannedState(planned, granularity, stored.watermark, Date.now());
  log.info('backfill planned', { accountId: run.accountId, granularity, rangeStart, rangeEnd, watermark: state.frontier.watermark });
  return state;
}

/** Fills the window: starts slices until `window` of them run or none is left to start. */
async function startSlices(run: BackfillRun): Promise<void> {
  for (let slice = nextSlice(run.frontier, run.settings.window); slice; slice = nextSlice(run.frontier, run.settings.window)) {
    await run.startSlice(slice);
  }
}

/** A slice's report: counted, then the window changes (slice-window.ts); a finished slice may move the watermark. */
async function takeSliceReport(run: BackfillRun, report: SliceReport): Promise<void> {
  const verdict = takeReport(run.state, report);
  switch (verdict.kind) {
    case 'stale': // e.g. from a run before a restart
      return;
    case 'split':
      if (!verdict.halved) log.warn('slice cannot be split further', { start: report.start });
      return;
    case 'retry':
    case 'give_up':
      log.warn('slice failed', { accountId: run.accountId, start: report.start, error: report.error });
      // An ApplicationFailure fails the backfill (a plain Error would only retry the task forever).
      if (verdict.kind === 'give_up') throw ApplicationFailure.nonRetryable(verdict.reason, 'BackfillSliceFailed');
      return;
    case 'account_unusable':
      // On the grant the user has replaced since the slice started, it just starts again; else the window waits for the account.
      if (run.startedBeforeReconnect(report)) return;
      log.warn('slice stopped: the account cannot be used', { accountId: run.accountId, start: report.start, error: report.error });
      throw accountUnusableFailure(verdict.type, verdict.message);
    case 'done':
      await judgeAlerts(run, report);
      if (complete(run.frontier, report.start, report.end)) {
        await run.store.backfillCommitWatermark({ accountId: run.accountId, watermark: run.frontier.watermark });
      }
  }
}

/**
 * The alerts: the workflow judges the bad-message rate and spikes; the activity adds the metadata
 * budget and journals level changes; each new alert is then delivered once.
 */
async function judgeAlerts(run: BackfillRun, report: SliceReport): Promise<void> {
  const { state } = run;
  const { judged, changed } = judgeSlice(state, state.counters.messagesTotal, report.stored + report.bad, report.bad, Date.now());
  // Bad messages are what grows the metadata; without any, only a changed level needs the journal.
  if (report.bad === 0 && !changed) return;
  const { metadata, undelivered } = await run.store.backfillRecordAlerts({
    accountId: run.accountId,
    backfillId: run.backfillId,
    judgements: judged,
    progressBytes: JSON.stringify(state).length,
  });
  const after = alertsAfter(state.alerts, { ...judged, metadata });
  for (const { kind, judgement: j } of after.changed) {
    const meta = { accountId: run.accountId, kind, ...j.measured };
    if (j.level === 'ok') log.info(`backfill alert cleared: ${j.detail}`, meta);
    else log.warn(`backfill alert ${j.level}: ${j.detail}`, meta);
  }
  state.alerts = after.alerts;
  for (const alertId of undelivered) await deliverAlert(run, alertId);
}

/** A channel that stays down does not stop the backfill: the alert stays on the health endpoint and the metrics. */
async function deliverAlert(run: BackfillRun, alertId: string): Promise<void> {
  try {
    await run.alertDelivery.backfillDeliverAlert({ alertId });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.error('backfill alert not delivered (it stays on the health endpoint and the metrics)', { alertId, error: String(err) });
  }
}

/**
 * With handToThreadsDays: each thread with inbox mail from those last days goes to its thread
 * workflow; with classifyInBatch, once a Message Batch has classified them (batch-classification.ts).
 * The threads go in pages of handOverPageSize, one activity each: only a cursor and counts pass
 * through history. Then the batch's request rows are deleted (each verdict is in its thread's log).
 */
async function handOver(run: BackfillRun): Promise<void> {
  const days = run.settings.handToThreadsDays;
  if (days <= 0) return;
  const sinceMs = run.frontier.rangeEnd - days * DAY_MS;
  const batch = run.settings.classifyInBatch ? await classifyInBatch(run.accountId, run.backfillId, sinceMs, run.settings) : undefined;
  const page: HandoffInput = { accountId: run.accountId, sinceMs, ...(batch ? { batchKey: batch.batchKey } : {}), limit: run.settings.handOverPageSize };
  let threads = 0;
  let classified = 0;
  let next: HandoffCursor | undefined;
  do {
    const handed = await run.handoff.backfillHandToThreads(next ? { ...page, after: next } : page);
    threads += handed.threads;
    classified += handed.classified ?? 0;
    next = handed.next;
  } while (next);
  run.state.counters.handedOff = threads;
  if (batch) run.state.counters.classifiedInBatch = classified;
  // Histories recorded before the request rows were deleted here end without this step.
  if (batch && patched('forget-batch-requests')) await run.handoff.backfillForgetBatchRequests({ batchKey: batch.batchKey });
}
