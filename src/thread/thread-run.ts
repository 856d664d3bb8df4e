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
import { AccountReconnect, waitingForAccountAccess } from '../accounts/account-access.js';
import { InboxAccountId, InboxCategory, InboxState } from '../temporal/search-attributes.js';
import type { GmailActivities, LlmActivities, StoreActivities } from './activity-contracts.js';
import { proxyQueueActivities, STORE_ACTIVITY_OPTIONS } from './activity-proxies.js';
import {
  eventKey,
  opensThread,
  type DecisionRecord,
  type ThreadEvent,
  type ThreadState,
  type ThreadStatus,
  type ThreadWorkflowInput,
} from './contracts.js';
import { draftGoneSignal, labelsChangedSignal, newMessageSignal, sentSeenSignal, threadStatusQuery } from './signals.js';
import {
  carriedOf,
  indexedOf,
  isClosed,
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
  /** Gmail steps; each waits, for hours if need be, while the account's grant is lost (account-access.ts). */
  readonly gmail: GmailActivities;
  readonly llm: LlmActivities;
  /** Postgres reads and writes: local activities (a marker in history, no task round trip). */
  readonly store: StoreActivities;

  private readonly queue: ThreadEvent[];
  private readonly seen: Set<string>;
  private busy = false;
  private saved: SavedRecord;
  private indexed: ReturnType<typeof indexedOf>;
  private readonly reconnect: AccountReconnect;

  private constructor(
    private readonly input: ThreadWorkflowInput,
    readonly record: ThreadRecord,
    store: StoreActivities,
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
    this.reconnect = new AccountReconnect(input.settings.reauthRecheckMs);
    this.gmail = waitingForAccountAccess(proxyQueueActivities<GmailActivities>('gmail', input.settings), this.reconnect);
    this.llm = proxyQueueActivities<LlmActivities>('llm', input.settings);
    this.store = store;
    for (const signal of [newMessageSignal, labelsChangedSignal, draftGoneSignal, sentSeenSignal]) {
      setHandler(signal, (event: ThreadEvent) => this.enqueue(event));
    }
    setHandler(threadStatusQuery, () => this.status());
  }

  /** The run's record: what continue-as-new carried, else what earlier runs left in Postgres. */
  static async open(input: ThreadWorkflowInput): Promise<ThreadRun> {
    const store = proxyLocalActivities<StoreActivities>(STORE_ACTIVITY_OPTIONS);
    const remembered = input.carried ? null : await store.loadThread({ accountId: input.accountId, threadId: input.threadId });
    return new ThreadRun(input, openRecord(input.carried, remembered), store);
  }

  get ids(): { accountId: string; threadId: string } {
    return { accountId: this.accountId, threadId: this.threadId };
  }

  get closed(): boolean {
    return isClosed(this.record);
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
    const timeout = this.record.state === 'skipped' ? settings.skippedIdleTimeoutMs : settings.idleTimeoutMs;
    const woken = await condition(() => this.queue.length > 0 || workflowInfo().continueAsNewSuggested, timeout);
    if (!woken) return 'idle';
    return this.queue.shift() ?? 'continue';
  }

  /** Runs one event's step; the status query counts it as pending until it is written to Postgres. */
  async handle<T>(work: () => Promise<T>): Promise<T> {
    this.busy = true;
    try {
      return await work();
    } finally {
      this.busy = false;
    }
  }

  decide(decision: Omit<DecisionRecord, 'at'>): void {
    this.record.decisions.push({ at: new Date().toISOString(), ...decision });
  }

  /** Shows the record's state in the Web UI (a run resumed from Postgres was indexed as pending). */
  show(): void {
    this.transition(this.record.state);
  }

  /** The new state, visible at once in the Web UI (search attributes); written to Postgres by save(). */
  transition(next: ThreadState): void {
    this.record.state = next;
    const indexed = indexedOf(this.record);
    if (indexed.state === this.indexed.state && indexed.category === this.indexed.category) return;
    this.indexed = indexed;
    upsertSearchAttributes([
      { key: InboxAccountId, value: this.accountId },
      { key: InboxState, value: indexed.state },
      ...(indexed.category ? [{ key: InboxCategory, value: indexed.category }] : []),
    ]);
  }

  /** A one-line summary in the workflow's memo (encrypted like every payload). */
  summarize(summary: string): void {
    upsertMemo({ summary: summary.slice(0, 200) });
  }

  /** Writes the thread row and the new decisions when anything changed since the last write. */
  async save(): Promise<void> {
    const changes = unsaved(this.record, this.saved);
    if (!changes) return;
    await this.store.saveThread({
      ...this.ids,
      workflowRunId: workflowInfo().runId,
      memory: changes.memory,
      closed: this.closed,
      decisions: changes.decisions,
    });
    this.saved = changes.saved;
  }

  status(): ThreadStatus {
    const pendingEvents = this.queue.length + (this.busy ? 1 : 0);
    return statusOf(this.ids, this.record, { pendingEvents, waitingFor: this.reconnect.waitingFor });
  }

  /** Carries the record and the events not handled yet into a fresh run of the workflow. */
  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    return continueAsNew<(input: ThreadWorkflowInput) => Promise<ThreadStatus>>({
      ...this.input,
      carried: carriedOf(this.record, this.seen, this.queue.splice(0)),
    });
  }

  /**
   * Ends the run: the last write, then mail that arrived while it was closing is handed to a fresh
   * run rather than dropped.
   */
  async finish(): Promise<ThreadStatus> {
    await this.save();
    await condition(allHandlersFinished);
    if (this.queue.some(opensThread)) await this.continueAsNew();
    return this.status();
  }
}
