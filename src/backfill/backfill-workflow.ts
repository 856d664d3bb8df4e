// The backfill of one account (workflow id backfill-<accountId>): plans the time range and the
// slice granularity, runs a sliding window of slice children, and advances the Ordered Frontier
// Commit watermark as slices finish in any order. Continue-as-new carries the window (running
// children keep running: parentClosePolicy ABANDON, they report by signal to this workflow id)
// and the frontier. Cancelling the backfill cancels the running slices explicitly. As slices
// report, it judges seed 004's alerts and has each new one delivered (src/backfill/alerts.ts).
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type {
  BackfillAlertDeliveryActivities,
  BackfillGmailActivities,
  BackfillHandoffActivities,
  BackfillStoreActivities,
} from './activity-contracts.js';
import { judgeBadRate, judgeSpike, recordBadTimes, slideBadWindow, worstLevel, type AlertKind, type Judgement } from './alerts.js';
import { complete, fail, isComplete, newFrontier, runningCount, split, startNext, type FrontierState } from './frontier.js';
import { chooseGranularity, countSlices, DAY_MS, type Granularity } from './slicing.js';
import { GMAIL_TASK_QUEUE, WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import {
  BackfillBadCount,
  BackfillMessagesStored,
  BackfillRate,
  BackfillSlicesDone,
  BackfillSlicesTotal,
} from '../temporal/search-attributes.js';
import { backfillSliceWorkflow } from './slice-workflow.js';
import {
  backfillProgressQuery,
  sliceDoneSignal,
  sliceWorkflowId,
  type BackfillCarried,
  type BackfillInput,
  type BackfillProgress,
  type SliceReport,
} from './contracts.js';

const MAX_SLICE_ATTEMPTS = 5;
const MIN_SPLIT_MS = 60_000;

export interface BackfillResult {
  accountId: string;
  watermark: number;
  slicesDone: number;
  counters: BackfillCarried['counters'];
  runs: number;
}

export async function backfillWorkflow(input: BackfillInput): Promise<BackfillResult> {
  const info = workflowInfo();
  const queues = { workflows: input.taskQueues?.workflows ?? WORKFLOW_TASK_QUEUE, gmail: input.taskQueues?.gmail ?? GMAIL_TASK_QUEUE };
  const window = Math.min(200, Math.max(1, input.window ?? 8));
  const gmail = proxyActivities<BackfillGmailActivities>({
    taskQueue: queues.gmail,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '60 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: ['GmailAuthError', 'AccountNotConnectedError'] },
  });
  const store = proxyActivities<BackfillStoreActivities>({
    taskQueue: queues.workflows,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  // A channel that stays down must not hold the import up: after these attempts the alert stays
  // journaled (health endpoint, metrics) and the backfill goes on.
  const alertDelivery = proxyActivities<BackfillAlertDeliveryActivities>({
    taskQueue: queues.gmail,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
  });
  const backfillId = `${info.workflowId}/${info.firstExecutionRunId}`;

  let phase: BackfillProgress['state'] = 'planning';
  let carried: BackfillCarried | undefined = input.carried;

  const progress = (): BackfillProgress => {
    const f = carried?.frontier;
    const counters = carried?.counters ?? { messagesTotal: 0, listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0, splits: 0 };
    const notDone = f ? f.open.filter((s) => s.status !== 'done').length + countSlices(f.cursor, f.rangeEnd, f.granularity) : 0;
    const processed = (carried?.badWindow ?? []).reduce((s, [p]) => s + p, 0);
    const bad = (carried?.badWindow ?? []).reduce((s, [, b]) => s + b, 0);
    return {
      accountId: input.accountId,
      state: phase,
      rangeStart: f?.rangeStart ?? null,
      rangeEnd: f?.rangeEnd ?? null,
      granularity: f?.granularity ?? null,
      watermark: f?.watermark ?? null,
      slicesDone: f ? f.slicesDone : 0,
      slicesTotal: f ? f.slicesDone + notDone : 0,
      slicesRunning: f ? runningCount(f) : 0,
      counters,
      rate: carried ? averageRate(carried) : 0,
      badRate: processed > 0 ? bad / processed : 0,
      alert: worstLevel(Object.values(carried?.alerts ?? {}).map((a) => a.level)),
      alerts: carried?.alerts ?? {},
      startedAt: carried?.startedAt ?? Date.now(),
      runs: carried?.runs ?? 1,
    };
  };
  const inbox: SliceReport[] = [...(carried?.inbox ?? [])];
  setHandler(sliceDoneSignal, (report) => {
    inbox.push(report);
  });
  setHandler(backfillProgressQuery, progress);

  if (!carried) {
    const stored = await store.backfillLoadState({ accountId: input.accountId });
    const plan = await gmail.backfillPlan({
      accountId: input.accountId,
      ...(input.rangeStart !== undefined ? { rangeStart: input.rangeStart } : stored.rangeStart !== null ? { rangeStart: stored.rangeStart } : {}),
      ...(input.rangeEnd !== undefined ? { rangeEnd: input.rangeEnd } : stored.rangeEnd !== null ? { rangeEnd: stored.rangeEnd } : {}),
    });
    const granularity: Granularity =
      input.granularity && input.granularity !== 'auto'
        ? input.granularity
        : (stored.granularity ?? chooseGranularity(plan.messagesTotal, plan.rangeStart, plan.rangeEnd, input.targetPerSlice ?? 2000));
    await store.backfillSaveRange({ accountId: input.accountId, backfillId, rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd, granularity });
    // Resume from the persisted watermark: everything before it is stored or recorded bad.
    const frontier = newFrontier(plan.rangeStart, plan.rangeEnd, granularity, stored.watermark ?? plan.rangeStart);
    carried = {
      frontier,
      counters: { messagesTotal: plan.messagesTotal, listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0, splits: 0 },
      startedAt: Date.now(),
      inbox: [],
      badWindow: [],
      badTimes: [],
      alerts: {},
      rateSamples: [],
      runs: 1,
    };
    log.info('backfill planned', { accountId: input.accountId, granularity, rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd, watermark: frontier.watermark });
  }
  const state: BackfillCarried = carried;
  const frontier: FrontierState = state.frontier;
  phase = 'running';

  const publish = () => {
    const p = progress();
    upsertSearchAttributes([
      { key: BackfillSlicesDone, value: p.slicesDone },
      { key: BackfillSlicesTotal, value: p.slicesTotal },
      { key: BackfillMessagesStored, value: state.counters.inserted },
      { key: BackfillBadCount, value: state.counters.bad },
      { key: BackfillRate, value: Math.round(p.rate * 100) / 100 },
    ]);
  };

  const startSlices = async () => {
    while (runningCount(frontier) < window) {
      const slice = startNext(frontier);
      if (!slice) break;
      const workflowId = sliceWorkflowId(input.accountId, slice.start, slice.end, slice.attempts);
      try {
        await startChild(backfillSliceWorkflow, {
          workflowId,
          taskQueue: queues.workflows,
          // ABANDON: children outlive continue-as-new and report by signal; cancel is explicit.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          args: [
            {
              accountId: input.accountId,
              start: slice.start,
              end: slice.end,
              parentWorkflowId: info.workflowId,
              batchSize: input.batchSize ?? 300,
              batchParallelism: input.batchParallelism ?? 2,
              overlapMs: input.overlapMs ?? 60_000,
              maxListPages: slice.end - slice.start >= 2 * MIN_SPLIT_MS ? (input.maxListPages ?? 20) : 0,
              format: input.format ?? 'full',
              taskQueues: queues,
            },
          ],
        });
      } catch (err) {
        // Still running from an earlier run of this backfill: it will report to this workflow id.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        log.info('slice already running, adopting it', { workflowId });
      }
    }
  };

  const handle = async (report: SliceReport) => {
    const slice = frontier.open.find((s) => s.start === report.start && s.end === report.end);
    if (!slice || slice.status !== 'running') return; // stale (e.g. from a run before a restart)
    const c = state.counters;
    c.stored += report.stored;
    c.inserted += report.inserted;
    c.bad += report.bad;
    c.gone += report.gone;
    if (report.outcome === 'split') {
      c.splits++;
      if (!split(frontier, report.start, report.end, MIN_SPLIT_MS)) log.warn('slice cannot be split further', { start: report.start });
      return;
    }
    if (report.outcome === 'failed') {
      log.warn('slice failed', { accountId: input.accountId, start: report.start, error: report.error });
      if (slice.attempts >= MAX_SLICE_ATTEMPTS || /GmailAuthError|AccountNotConnected/.test(report.error ?? '')) {
        // An ApplicationFailure fails the backfill (a plain Error would only retry the task forever).
        throw ApplicationFailure.nonRetryable(`slice ${new Date(report.start).toISOString()} failed ${slice.attempts} times: ${report.error}`, 'BackfillSliceFailed');
      }
      fail(frontier, report.start, report.end);
      return;
    }
    c.listed += report.listed;
    await judgeAlerts(report);
    if (complete(frontier, report.start, report.end)) {
      await store.backfillCommitWatermark({ accountId: input.accountId, watermark: frontier.watermark });
    }
  };

  /**
   * Seed 004's alerts: the workflow judges the bad-message rate and spikes; the activity adds the
   * metadata budget and journals level changes; each new alert is then delivered once.
   */
  const judgeAlerts = async (report: SliceReport) => {
    const now = Date.now();
    state.badWindow = slideBadWindow(state.badWindow, report.stored + report.bad, report.bad);
    state.badTimes = recordBadTimes(state.badTimes, now, report.bad);
    const judged: Partial<Record<AlertKind, Judgement>> = {
      bad_rate: judgeBadRate(state.badWindow, state.counters.messagesTotal),
      bad_spike: judgeSpike(state.badTimes, now),
    };
    const changed = Object.entries(judged).some(([kind, j]) => j.level !== (state.alerts[kind as AlertKind]?.level ?? 'ok'));
    // Bad messages are what grows the metadata; without any, only a changed level needs the journal.
    if (report.bad === 0 && !changed) return;
    const { metadata, undelivered } = await store.backfillRecordAlerts({
      accountId: input.accountId,
      backfillId,
      judgements: judged,
      progressBytes: JSON.stringify(state).length,
    });
    const alerts: BackfillCarried['alerts'] = {};
    for (const [kind, j] of Object.entries({ ...judged, metadata })) {
      if (j.level !== 'ok') alerts[kind as AlertKind] = { level: j.level, detail: j.detail };
      if (j.level !== (state.alerts[kind as AlertKind]?.level ?? 'ok')) {
        const meta = { accountId: input.accountId, kind, ...j.measured };
        if (j.level === 'ok') log.info(`backfill alert cleared: ${j.detail}`, meta);
        else log.warn(`backfill alert ${j.level}: ${j.detail}`, meta);
      }
    }
    state.alerts = alerts;
    for (const alertId of undelivered) {
      try {
        await alertDelivery.backfillDeliverAlert({ alertId });
      } catch (err) {
        if (isCancellation(err)) throw err;
        log.error('backfill alert not delivered (it stays on the health endpoint and the metrics)', { alertId, error: String(err) });
      }
    }
  };

  let slicesThisRun = 0;
  try {
    await startSlices();
    publish();
    while (!isComplete(frontier)) {
      await condition(() => inbox.length > 0);
      while (inbox.length > 0) {
        const report = inbox.shift()!;
        await handle(report);
        slicesThisRun++;
      }
      await startSlices();
      publish();
      const cap = input.slicesPerRun;
      if ((workflowInfo().continueAsNewSuggested || (cap !== undefined && slicesThisRun >= cap)) && !isComplete(frontier)) {
        await condition(allHandlersFinished);
        state.inbox = inbox.splice(0);
        state.runs++;
        await continueAsNew<typeof backfillWorkflow>({ ...input, carried: state });
      }
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err; // the window carries on in the next run
    // Cancelled or failed: the slices (ABANDON children) must not keep running on their own.
    if (isCancellation(err)) phase = 'cancelled';
    await CancellationScope.nonCancellable(async () => {
      for (const s of frontier.open.filter((o) => o.status === 'running')) {
        try {
          await getExternalWorkflowHandle(sliceWorkflowId(input.accountId, s.start, s.end, s.attempts)).cancel();
        } catch {
          // already closed
        }
      }
    });
    throw err;
  }
  if ((input.handToThreadsDays ?? 0) > 0) {
    const handoff = proxyActivities<BackfillHandoffActivities>({
      taskQueue: queues.workflows,
      startToCloseTimeout: '30 minutes',
      heartbeatTimeout: '1 minute',
    });
    const { threads } = await handoff.backfillHandToThreads({
      accountId: input.accountId,
      sinceMs: frontier.rangeEnd - input.handToThreadsDays! * DAY_MS,
    });
    state.counters.handedOff = threads;
  }
  phase = 'done';
  publish();
  log.info('backfill complete', { accountId: input.accountId, ...state.counters });
  return { accountId: input.accountId, watermark: frontier.watermark, slicesDone: frontier.slicesDone, counters: state.counters, runs: state.runs };
}

/**
 * Messages stored per second since this backfill started. Slices run side by side and report only
 * when they finish, so windows shorter than a slice would swing wildly; at a steady quota the
 * average is what the ETA needs.
 */
function averageRate(state: BackfillCarried): number {
  const elapsed = Date.now() - state.startedAt;
  return elapsed > 0 ? (state.counters.inserted * 1000) / elapsed : 0;
}
