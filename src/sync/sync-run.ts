// Workflow code: one run of a sync workflow and its Temporal plumbing. The activities and their
// task queue; the signals that ask for passes and the status query; the pause while the account
// cannot be used (`access`, account-access.ts); continue-as-new. The decisions are sync-state.ts;
// sync-workflow.ts holds the process that uses it.
import { allHandlersFinished, condition, continueAsNew, log, proxyActivities, setHandler, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { AccountAccess } from '../accounts/account-access.js';
import { DEFAULT_SYNC_SETTINGS, type SyncActivities, type SyncSettings, type SyncWorkflowInput } from './contracts.js';
import { WakeTrace } from '../temporal/workflow-trace.js';
import { syncFullScanSignal, syncNotifySignal, syncStatusQuery } from './signals.js';
import { carriedOf, openState, statusOf, takeFullScanRequest, takeNotification, wantsWork, type SyncState } from './sync-state.js';

/**
 * The sync's activities call Gmail and hand what they find to the thread workflows (the ingest
 * function needs a Temporal client), so the workflow worker registers them on its own queue, the
 * one this workflow runs on (src/workers/workflow-worker.ts); their Gmail calls draw from the
 * account's quota like every other.
 */
const SYNC_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  // Short, and the activities heartbeat all the time they run: a task handed to a worker's poll at
  // the moment the worker shut down (a restart) is lost until this timeout, and the account's new
  // mail waits behind it.
  heartbeatTimeout: '15 seconds',
  // Gmail throttling comes back with Retry-After as nextRetryDelay; the rest backs off exponentially.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

export class SyncRun {
  readonly accountId: string;
  readonly settings: SyncSettings;
  /** History pages, inbox scans, the persisted cursor (the workflow's own queue). */
  readonly sync: SyncActivities;
  readonly state: SyncState;
  private busy = false;
  /** The trace of the signal that woke the next pass (workflow-trace.ts). */
  private readonly wake = new WakeTrace();
  /** A revoked grant pauses the sync's steps (the cursor is kept) until the account is reconnected. */
  readonly access: AccountAccess;

  /** Registers the signals (a notification, a full-scan request, a reconnect) and the status query. */
  constructor(private readonly input: SyncWorkflowInput) {
    this.accountId = input.accountId;
    this.settings = { ...DEFAULT_SYNC_SETTINGS, ...input.settings };
    this.sync = proxyActivities<SyncActivities>({ taskQueue: workflowInfo().taskQueue, ...SYNC_ACTIVITY_OPTIONS });
    this.state = openState(input.carried);
    setHandler(syncNotifySignal, (n) => {
      this.wake.note();
      if (takeNotification(this.state, n) === 'backwards') {
        log.warn('push history id far behind the cursor: checking the mailbox', { accountId: this.accountId, pushHistoryId: n.historyId, cursor: this.state.cursor });
      }
    });
    setHandler(syncFullScanSignal, (r) => takeFullScanRequest(this.state, r.days));
    this.access = new AccountAccess(this.settings.reauthRecheckMs, () => {
      this.state.pollRequested = true;
    });
    setHandler(syncStatusQuery, () => statusOf(this.accountId, this.state, { working: this.busy, pausedReason: this.access.waitingFor }));
  }

  /** Waits for a push, a poll, a reconnect or a full-scan request. */
  async workAsked(): Promise<void> {
    await condition(() => wantsWork(this.state));
  }

  /** Runs a pass, in the trace of the push (or poll) that woke it; the status query shows the sync busy meanwhile. */
  async pass<T>(work: () => Promise<T>): Promise<T> {
    this.busy = true;
    const result = await this.wake.run(work);
    this.busy = false;
    return result;
  }

  /** Temporal suggests a fresh run, or this one's history passed `maxHistoryEvents`. */
  get historyIsLong(): boolean {
    return workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > this.settings.maxHistoryEvents;
  }

  /** Carries the cursor, what is asked for and the stats into a fresh run. */
  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    const { accountId, settings } = this.input;
    return continueAsNew<(input: SyncWorkflowInput) => Promise<void>>({ accountId, ...(settings ? { settings } : {}), carried: carriedOf(this.state) });
  }
}
