// Workflow code: one run of a backfill workflow and its Temporal plumbing. The activities, each
// with its task queue; the slice-done signal that fills the report inbox and the progress query;
// the search attributes; the slice children (started or adopted, cancelled when the backfill
// stops); the wait while the account cannot be used (`access`, account-access.ts); continue-as-new.
// backfill-workflow.ts holds the process that uses it.
import {
  allHandlersFinished,
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
  type ActivityOptions,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { AccountAccess } from '../accounts/account-access.js';
import {
  BackfillBadCount,
  BackfillMessagesStored,
  BackfillRate,
  BackfillSlicesDone,
  BackfillSlicesTotal,
} from '../temporal/search-attributes.js';
import type {
  BackfillAlertDeliveryActivities,
  BackfillMailActivities,
  BackfillHandoffActivities,
  BackfillStoreActivities,
} from './activity-contracts.js';
import { progressOf } from './backfill-state.js';
import { type BackfillCarried, type BackfillInput, type BackfillProgress, backfillProgressQuery, type BackfillResult, type BackfillSettings, backfillSettingsOf, type FrontierState, type OpenSlice, sliceDoneSignal, type SliceReport, sliceWorkflowId } from './contracts.js';
import { isComplete } from './frontier.js';
import { sliceInputOf } from './slice-window.js';
import { backfillSliceWorkflow } from './slice-workflow.js';

/**
 * Planning on the mail queue, retried; an account that cannot be used fails at once (the activity
 * says it is final) and the planning waits for the account to be reconnected.
 */
const MAIL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '60 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
};
const STORE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
};
/**
 * A channel that stays down must not hold the import up: after these attempts the alert stays
 * journaled (health endpoint, metrics) and the backfill goes on.
 */
const ALERT_DELIVERY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
};
const HANDOFF_OPTIONS: ActivityOptions = { startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute' };

export class BackfillRun {
  readonly accountId: string;
  readonly settings: BackfillSettings;
  /** The workflow id and first run id: alerts and their rate limit are per backfill. */
  readonly backfillId: string;
  /** While the account cannot be used, the planning and the slices wait for it to be reconnected. */
  readonly access: AccountAccess;
  /** Planning on the account's mailbox (the mail queue, durable-inbox-gmail); a call waits while the account cannot be used. */
  readonly mail: BackfillMailActivities;
  /** The backfill's rows: range, watermark, alerts (workflow queue). */
  readonly store: BackfillStoreActivities;
  /** Alerts to Discord and the account's inbox (Gmail queue). */
  readonly alertDelivery: BackfillAlertDeliveryActivities;
  /** The hand-over of recent threads to their thread workflows (workflow queue). */
  readonly handoff: BackfillHandoffActivities;

  private phase: BackfillProgress['state'] = 'planning';
  private carried: BackfillCarried | undefined;
  /** Slice reports that arrived and are not taken yet. */
  private readonly inbox: SliceReport[];
  private reportsThisRun = 0;
  /** The accountReconnected signals received when each slice (by workflow id) started in this run. */
  private readonly reconnectsAtStart = new Map<string, number>();

  /** Registers the slice-done signal and the progress query (the query answers while planning too). */
  constructor(private readonly input: BackfillInput) {
    this.accountId = input.accountId;
    this.settings = backfillSettingsOf(input);
    const info = workflowInfo();
    this.backfillId = `${info.workflowId}/${info.firstExecutionRunId}`;
    const { gmail, workflows } = this.settings.taskQueues;
    this.access = new AccountAccess(this.settings.reauthRecheckMs);
    this.mail = this.access.activitiesWhileUsable(proxyActivities<BackfillMailActivities>({ taskQueue: gmail, ...MAIL_OPTIONS }));
    this.store = proxyActivities<BackfillStoreActivities>({ taskQueue: workflows, ...STORE_OPTIONS });
    this.alertDelivery = proxyActivities<BackfillAlertDeliveryActivities>({ taskQueue: gmail, ...ALERT_DELIVERY_OPTIONS });
    this.handoff = proxyActivities<BackfillHandoffActivities>({ taskQueue: workflows, ...HANDOFF_OPTIONS });
    this.carried = input.carried;
    this.inbox = [...(input.carried?.inbox ?? [])];
    setHandler(sliceDoneSignal, (report) => {
      this.inbox.push(report);
    });
    setHandler(backfillProgressQuery, () => {
      const progress = progressOf(this.accountId, this.phase, this.carried, Date.now());
      return this.access.waitingFor ? { ...progress, waitingFor: this.access.waitingFor } : progress;
    });
  }

  /** The state the run works on: what continue-as-new carried, or what planning made. */
  get state(): BackfillCarried {
    if (!this.carried) throw new Error('the backfill is not planned yet');
    return this.carried;
  }

  get frontier(): FrontierState {
    return this.state.frontier;
  }

  /** Every slice of the range is finished. */
  get complete(): boolean {
    return isComplete(this.frontier);
  }

  /** The slices start running on this state. */
  begin(state: BackfillCarried): void {
    this.carried = state;
    this.phase = 'running';
  }

  /** Waits until a slice reports (by signal, in any order). */
  async reportsArrived(): Promise<void> {
    await condition(() => this.inbox.length > 0);
  }

  /** The oldest report not taken yet. */
  nextReport(): SliceReport | undefined {
    const report = this.inbox.shift();
    if (report) this.reportsThisRun++;
    return report;
  }

  /** Starts the slice's child workflow; one still running from an earlier run of this backfill is adopted. */
  async startSlice(slice: OpenSlice): Promise<void> {
    const workflowId = sliceWorkflowId(this.accountId, slice.start, slice.end, slice.attempts);
    this.reconnectsAtStart.set(workflowId, this.access.reconnects);
    try {
      await startChild(backfillSliceWorkflow, {
        workflowId,
        taskQueue: this.settings.taskQueues.workflows,
        // ABANDON: children outlive continue-as-new and report by signal; cancel is explicit.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        args: [sliceInputOf(this.accountId, workflowInfo().workflowId, slice, this.settings)],
      });
    } catch (err) {
      // Still running from an earlier run of this backfill: it will report to this workflow id.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      log.info('slice already running, adopting it', { workflowId });
    }
  }

  /**
   * Whether the account was reconnected after the slice of this report started: its failure was on
   * the old grant, and it just starts again. (A slice started in an earlier run counts as started
   * at this run's start.)
   */
  startedBeforeReconnect(report: SliceReport): boolean {
    const slice = this.frontier.open.find((s) => s.start === report.start && s.end === report.end);
    if (!slice) return false;
    const reconnects = this.reconnectsAtStart.get(sliceWorkflowId(this.accountId, slice.start, slice.end, slice.attempts)) ?? 0;
    return reconnects < this.access.reconnects;
  }

  /** The progress in the Web UI (search attributes). */
  publish(): void {
    const p = progressOf(this.accountId, this.phase, this.carried, Date.now());
    upsertSearchAttributes([
      { key: BackfillSlicesDone, value: p.slicesDone },
      { key: BackfillSlicesTotal, value: p.slicesTotal },
      { key: BackfillMessagesStored, value: p.counters.inserted },
      { key: BackfillBadCount, value: p.counters.bad },
      { key: BackfillRate, value: Math.round(p.rate * 100) / 100 },
    ]);
  }

  /** Time for a fresh run: Temporal suggests it, or this run took `slicesPerRun` reports. */
  get runIsLong(): boolean {
    const cap = this.settings.slicesPerRun;
    return (workflowInfo().continueAsNewSuggested || (cap !== undefined && this.reportsThisRun >= cap)) && !this.complete;
  }

  /** Carries the window, the counters and the reports not taken yet into a fresh run; running slices keep running. */
  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    this.state.inbox = this.inbox.splice(0);
    this.state.runs++;
    return continueAsNew<(input: BackfillInput) => Promise<BackfillResult>>({ ...this.input, carried: this.state });
  }

  /**
   * Runs the window. When the backfill is cancelled or fails, its slices (ABANDON children) must not
   * keep running on their own: they are cancelled. Continue-as-new is neither: the window carries on.
   */
  async stoppingSlicesOnFailure(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (err instanceof ContinueAsNew) throw err;
      if (isCancellation(err)) this.phase = 'cancelled';
      await CancellationScope.nonCancellable(() => this.cancelRunningSlices());
      throw err;
    }
  }

  private async cancelRunningSlices(): Promise<void> {
    for (const s of this.frontier.open.filter((o) => o.status === 'running')) {
      try {
        await getExternalWorkflowHandle(sliceWorkflowId(this.accountId, s.start, s.end, s.attempts)).cancel();
      } catch {
        // already closed
      }
    }
  }

  /** The backfill is done: its final progress shown, its result returned. */
  finish(): BackfillResult {
    this.phase = 'done';
    this.publish();
    const { frontier, counters, runs } = this.state;
    log.info('backfill complete', { accountId: this.accountId, ...counters });
    return { accountId: this.accountId, watermark: frontier.watermark, slicesDone: frontier.slicesDone, counters, runs };
  }
}
