// Workflow code: one run of a thread workflow and its Temporal plumbing. The record (thread-record.ts)
// and the activities; the signals that feed the event queue (a repeated event is dropped) and the
// status query; the decision log; search attributes at every transition; the Postgres row written
// after each event; continue-as-new. thread-workflow.ts holds the process that uses it.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { AccountAccess } from '../accounts/account-access.js';
import { givingUpOnStuckSteps, StuckSteps } from '../accounts/stuck-steps.js';
import type { ApprovalNotifyActivities } from '../actions/activity-contracts.js';
import { type ActionSettings, DEFAULT_ACTION_SETTINGS, type LifecycleAction } from '../actions/contracts.js';
import { InboxAccountId, InboxCategory, InboxLlmPaused, InboxState, WakeAt } from '../temporal/search-attributes.js';
import type { GmailActivities, ThreadGmailSteps, ThreadLlmSteps, ThreadStoreSteps } from './activity-contracts.js';
import { proxyGmailProbe, proxyNotifyActivities, proxyQueueActivities, STEP_LIMITS, STORE_ACTIVITY_OPTIONS } from './activity-proxies.js';
import { LlmPause, waitingWhileLlmPaused } from './llm-pause.js';
import {
  carriesCorrection,
  eventKey,
  opensThread,
  threadWorkflowId,
  type DecisionRecord,
  type LabelsChangedEvent,
  type ThreadEvent,
  type ThreadState,
  type ThreadStatus,
  type ThreadWorkflowInput,
  type Wake,
} from './contracts.js';
import { parseTimerRequest, type TimerSignalName } from './timer-requests.js';
import { parseAgentProposal } from './agent-proposals.js';
import {
  actionDecisionSignal,
  agentProposalSignal,
  draftGoneSignal,
  labelsChangedSignal,
  newMessageSignal,
  reclassifySignal,
  sentSeenSignal,
  threadStatusQuery,
  TIMER_SIGNALS,
} from './signals.js';
import {
  carriedOf,
  indexedOf,
  isClosed,
  memoryOf,
  nextWake,
  openRecord,
  savedAtStart,
  statusOf,
  unsaved,
  type SavedRecord,
  type ThreadRecord,
} from './thread-record.js';


export class ThreadRun {
  readonly accountId: string;
  readonly threadId: string;
  readonly settings: ThreadWorkflowInput['settings'];
  /**
   * The Gmail task queue's steps, every feature's (thread, actions, agent). Each waits, for hours if
   * need be, while the account's grant is lost or its Gmail is out (account-access.ts, stuck-steps.ts).
   */
  readonly gmail: ThreadGmailSteps;
  /** The LLM task queue's steps; each waits, for a day if need be, while the account's LLM is paused (llm-pause.ts). */
  readonly llm: ThreadLlmSteps;
  /** Postgres reads and writes, every feature's: local activities (a marker in history, no task round trip). */
  readonly store: ThreadStoreSteps;
  /** The approval notification (Gmail task queue, a few attempts: the approval waits elsewhere too). */
  readonly notify: ApprovalNotifyActivities;
  readonly actionSettings: ActionSettings;
  /** Changes the lifecycle made in Gmail (drafts, Done's archive), journaled with the next save. */
  private lifecycle: LifecycleAction[] = [];

  private readonly queue: ThreadEvent[];
  private readonly seen: Set<string>;
  private busy = false;
  private saved: SavedRecord;
  private indexed: ReturnType<typeof indexedOf>;
  private readonly access: AccountAccess;
  private readonly llmPause: LlmPause;
  private readonly stuckSteps: StuckSteps;

  private constructor(
    private readonly input: ThreadWorkflowInput,
    readonly record: ThreadRecord,
    store: ThreadStoreSteps,
    /** The state earlier runs left in Postgres (a learn-only run answers with it). */
    private readonly rememberedState?: ThreadState,
  ) {
    this.accountId = input.accountId;
    this.threadId = input.threadId;
    this.settings = input.settings;
    const carried = input.carried;
    this.queue = carried?.pending ?? [];
    this.seen = new Set(carried?.seenEvents ?? []);
    this.saved = savedAtStart(record, carried !== undefined);
    // The ingest indexed a new run as pending; a carried-over run shows its state already.
    this.indexed = carried ? indexedOf(record) : { state: 'pending' };
    this.access = new AccountAccess(input.settings.reauthRecheckMs);
    // One proxy per queue; the fields are views of it by feature.
    // A Gmail step: through a lost grant it waits for the user; through an outage of the account's
    // Gmail it waits for Gmail; stuck on this thread's own mail, it fails (and the thread needs the user).
    const limits = input.settings.stepLimits ?? STEP_LIMITS;
    const probe = proxyGmailProbe<GmailActivities>(input.settings);
    this.stuckSteps = new StuckSteps(() => probe.gmailAnswers({ accountId: input.accountId }), limits.outageRecheckMs);
    const gmail = this.access.activitiesWhileUsable(givingUpOnStuckSteps(proxyQueueActivities<ThreadGmailSteps>('gmail', input.settings), this.stuckSteps));
    this.llmPause = new LlmPause((reason) => upsertSearchAttributes([{ key: InboxLlmPaused, value: reason }]));
    const llm = waitingWhileLlmPaused(proxyQueueActivities<ThreadLlmSteps>('llm', input.settings), this.llmPause);
    this.gmail = gmail;
    this.llm = llm;
    this.store = store;
    this.notify = proxyNotifyActivities<ApprovalNotifyActivities>(input.settings);
    this.actionSettings = input.settings.actions ?? DEFAULT_ACTION_SETTINGS;
    for (const signal of [newMessageSignal, labelsChangedSignal, draftGoneSignal, sentSeenSignal, actionDecisionSignal, reclassifySignal]) {
      setHandler(signal, (event: ThreadEvent) => this.enqueue(event));
    }
    for (const signal of Object.values(TIMER_SIGNALS)) {
      // Checked where it comes in: the CLI's, a label's or an operator's `temporal workflow signal`.
      setHandler(signal, (raw: unknown) => {
        const parsed = parseTimerRequest(signal.name as TimerSignalName, raw);
        if ('event' in parsed) this.enqueue(parsed.event);
        else this.logDecision({ kind: 'timer', source: 'user', detail: `${signal.name} refused: ${parsed.error}` });
      });
    }
    setHandler(agentProposalSignal, (raw: unknown) => {
      const parsed = parseAgentProposal(raw);
      if ('event' in parsed) this.enqueue(parsed.event);
      else this.logDecision({ kind: 'agent', source: 'system', detail: `agentProposal refused: ${parsed.error}` });
    });
    setHandler(threadStatusQuery, () => this.status());
  }

  /** The run's record: what continue-as-new carried, else what earlier runs left in Postgres. */
  static async open(input: ThreadWorkflowInput): Promise<ThreadRun> {
    const store = proxyLocalActivities<ThreadStoreSteps>(STORE_ACTIVITY_OPTIONS);
    const remembered = input.carried ? null : await store.loadThread({ accountId: input.accountId, threadId: input.threadId });
    return new ThreadRun(input, openRecord(input.carried, remembered), store, remembered?.state);
  }

  get ids(): { accountId: string; threadId: string } {
    return { accountId: this.accountId, threadId: this.threadId };
  }

  get closed(): boolean {
    return isClosed(this.record);
  }

  get workflowId(): string {
    return threadWorkflowId(this.accountId, this.threadId);
  }

  /** Journals a change the lifecycle made in Gmail (written with the next save). */
  journalLifecycle(action: LifecycleAction): void {
    this.lifecycle.push(action);
  }

  private enqueue(event: ThreadEvent): void {
    const key = eventKey(event);
    if (this.seen.has(key)) return; // a duplicate delivery changes nothing
    this.seen.add(key);
    this.queue.push(event);
  }

  /**
   * The next event, once one arrives: 'idle' after the idle timeout (the run closes; new mail starts
   * a new one), 'continue' when history is long enough to carry on in a fresh run.
   */
  async nextEvent(): Promise<ThreadEvent | 'idle' | 'continue'> {
    const { settings } = this;
    const idle = this.record.state === 'skipped' ? settings.skippedIdleTimeoutMs : settings.idleTimeoutMs;
    // An open action (an approval's expiry, a send's delay) or a timer (wakes) wakes the run when its time comes.
    const actionDue = this.record.openActions.reduce<number | undefined>((min, a) => (min === undefined || a.dueAt < min ? a.dueAt : min), undefined);
    const wake = nextWake(this.record);
    const due = wake === undefined ? actionDue : Math.min(wake.at, actionDue ?? wake.at);
    const timeout = due === undefined ? idle : Math.max(1, Math.min(idle, due - Date.now()));
    const woken = await condition(() => this.queue.length > 0 || workflowInfo().continueAsNewSuggested, timeout);
    if (!woken) {
      const dueAction = this.record.openActions.find((a) => a.dueAt <= Date.now());
      if (dueAction) return { type: 'action_due', actionId: dueAction.id };
      if (wake && wake.at <= Date.now()) return { type: 'wake', actionId: wake.actionId };
      // Never idle while something is pending: a timer or an open action keeps the run.
      return this.record.openActions.length > 0 || this.record.wakes.length > 0 ? this.nextEvent() : 'idle';
    }
    return this.queue.shift() ?? 'continue';
  }

  /**
   * A learn-only run's events (thread-workflow.ts): the label changes it learns from, taken off the
   * queue. What opens the thread (new mail, Done, Needs Response) stays, for an ordinary run.
   */
  takeLabelChanges(): LabelsChangedEvent[] {
    const taken = this.queue.filter((e): e is LabelsChangedEvent => carriesCorrection(e) && !opensThread(e));
    for (const event of taken) this.queue.splice(this.queue.indexOf(event), 1);
    return taken;
  }

  /** Something waits that only an ordinary run handles: new mail, the user asking for a draft or an archive. */
  get opened(): boolean {
    return this.queue.some(opensThread);
  }

  /** A learn-only run's write: its new decisions to the thread's log; the row stays as earlier runs left it. */
  async saveDecisions(): Promise<void> {
    const from = this.saved.decisions;
    const decisions = this.record.decisions.slice(from).map((decision, i) => ({ seq: from + i, decision }));
    if (decisions.length === 0) return;
    await this.store.appendDecisions({ ...this.ids, workflowRunId: workflowInfo().runId, decisions });
    this.saved = { ...this.saved, decisions: this.record.decisions.length };
  }

  /** A learn-only run's answer: the thread as earlier runs left it, with what this run logged. */
  learnedStatus(): ThreadStatus {
    return { ...this.status(), state: this.rememberedState ?? this.record.state };
  }

  /** Runs one event's step; the status query counts it as pending until it is written to Postgres. */
  async busyWith<T>(work: () => Promise<T>): Promise<T> {
    this.busy = true;
    try {
      return await work();
    } finally {
      this.busy = false;
    }
  }

  logDecision(decision: Omit<DecisionRecord, 'at'>): void {
    this.record.decisions.push({ at: new Date().toISOString(), ...decision });
  }

  /** Shows the record's state in the Web UI (a run resumed from Postgres was indexed as pending). */
  show(): void {
    this.transition(this.record.state);
  }

  /** The new state, visible at once in the Web UI (search attributes); written to Postgres by save(). */
  transition(next: ThreadState): void {
    this.record.state = next;
    this.reindex();
  }

  /** Shows the state and the next wake-up in the Web UI when either changed (InboxState, WakeAt). */
  reindex(): void {
    const indexed = indexedOf(this.record);
    const before = this.indexed;
    const wakeMoved = indexed.wakeAt !== before.wakeAt;
    if (indexed.state === before.state && indexed.category === before.category && !wakeMoved) return;
    this.indexed = indexed;
    upsertSearchAttributes([
      { key: InboxAccountId, value: this.accountId },
      { key: InboxState, value: indexed.state },
      ...(indexed.category ? [{ key: InboxCategory, value: indexed.category }] : []),
      ...(wakeMoved ? [{ key: WakeAt, value: indexed.wakeAt === undefined ? null : new Date(indexed.wakeAt) }] : []),
    ]);
  }

  /** A new timer: the run wakes for it (journaled by the step that set it). */
  addWake(wake: Wake): void {
    this.record.wakes = [...this.record.wakes.filter((w) => w.actionId !== wake.actionId), wake];
    this.reindex();
  }

  /** Takes the timer off the record (fired or cancelled); undefined when it is not pending. */
  takeWake(actionId: string): Wake | undefined {
    const wake = this.record.wakes.find((w) => w.actionId === actionId);
    if (!wake) return undefined;
    this.record.wakes = this.record.wakes.filter((w) => w !== wake);
    this.reindex();
    return wake;
  }

  /** A one-line summary in the workflow's memo (encrypted like every payload). */
  summarize(summary: string): void {
    upsertMemo({ summary: summary.slice(0, 200) });
  }

  /** Writes the thread row, the new decisions and the lifecycle's journal entries, when anything changed since the last write. */
  async save(): Promise<void> {
    const changes = unsaved(this.record, this.saved);
    if (!changes && this.lifecycle.length === 0) return;
    await this.store.saveThread({
      ...this.ids,
      workflowRunId: workflowInfo().runId,
      memory: changes?.memory ?? memoryOf(this.record),
      closed: this.closed,
      decisions: changes?.decisions ?? [],
      ...(this.lifecycle.length > 0 ? { journal: this.lifecycle } : {}),
    });
    this.lifecycle = [];
    if (changes) this.saved = changes.saved;
  }

  /** A closing thread leaves nothing waiting: approvals expire, scheduled sends and timers are cancelled. */
  private async closeOpenActions(): Promise<void> {
    for (const wake of [...this.record.wakes]) {
      this.takeWake(wake.actionId);
      await this.store.settleAction({ id: wake.actionId, from: ['scheduled', 'queued'], to: 'undone', note: `the thread was closed (${this.record.state})` });
      this.logDecision({ kind: 'timer', source: 'system', detail: `${wake.kind.replace('_', '-')} cancelled: the thread was closed` });
    }
    for (const open of this.record.openActions.splice(0)) {
      const awaiting = open.state === 'awaiting_approval';
      await this.store.settleAction({
        id: open.id,
        from: [open.state],
        to: awaiting ? 'expired' : 'undone',
        note: `the thread was closed (${this.record.state}) before it ${awaiting ? 'was approved' : 'went out'}`,
      });
      this.logDecision({ kind: 'action', source: 'system', detail: `${open.kind} ${awaiting ? 'expired' : 'cancelled'}: the thread was closed` });
    }
  }

  status(): ThreadStatus {
    const pendingEvents = this.queue.length + (this.busy ? 1 : 0);
    return statusOf(this.ids, this.record, { pendingEvents, waitingFor: this.access.waitingFor ?? this.stuckSteps.waitingFor ?? this.llmPause.waitingFor });
  }

  /** Carries the record and the events not handled yet into a fresh run of the workflow. */
  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    // A learn-only run that carried on as an ordinary one (mail came) continues as an ordinary one.
    const { learnOnly: _learnOnly, ...input } = this.input;
    return continueAsNew<(input: ThreadWorkflowInput) => Promise<ThreadStatus>>({
      ...input,
      carried: carriedOf(this.record, this.seen, this.queue.splice(0)),
    });
  }

  /**
   * Ends the run: the last write, then mail that arrived while it was closing is handed to a fresh
   * run rather than dropped.
   */
  async finish(): Promise<ThreadStatus> {
    await this.closeOpenActions();
    await this.save();
    await condition(allHandlersFinished);
    if (this.queue.some(opensThread)) await this.continueAsNew();
    return this.status();
  }
}
