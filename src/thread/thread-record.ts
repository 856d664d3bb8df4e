// The per-thread record the workflow holds, and every view of it: the row Postgres keeps between
// runs, the state carried over continue-as-new, the search attributes the Web UI filters on, and
// the status query's answer. Pure: one function per view, tested without Temporal.
import {
  CLOSED_STATES,
  type CarriedThreadState,
  type Category,
  type DecisionRecord,
  type OpenAction,
  type ThreadEvent,
  type ThreadMemory,
  type ThreadState,
  type ThreadStatus,
  type Wake,
} from './contracts.js';

const HANDLED_KEPT = 200;
const SEEN_EVENTS_KEPT = 500;
const DECISIONS_CARRIED = 50;

/** What Postgres keeps of a thread (ThreadMemory), and what only a run holds. */
export interface ThreadRecord extends ThreadMemory {
  /** The body we generated last, to tell the user's edits from ours (kept across continue-as-new only). */
  lastDraftBody?: string;
  /** This run's decision log (the status query); Postgres keeps all of them. */
  decisions: DecisionRecord[];
  /** The journal key of our current draft (kept across continue-as-new only). */
  draftKey?: string;
  /** The message our current draft answers (kept across continue-as-new only). */
  draftRepliesTo?: string;
  /** Actions waiting for approval or for their send delay: the run stays open for them. */
  openActions: OpenAction[];
  /** Messages our own sends produced. */
  sentByUs: string[];
  /** The pending timers (follow-up, snooze, reminder, scheduled send): the run stays open for them. */
  wakes: Wake[];
  /** The nudge drafted when the follow-up fell due (kept across continue-as-new only). */
  nudgeDraftId?: string;
}

/**
 * The record a run starts from: what continue-as-new carried, else what earlier runs left in
 * Postgres. A closed thread starts afresh but keeps its handled message ids, so a redelivered
 * message is still not processed twice.
 */
export function openRecord(carried: CarriedThreadState | undefined, remembered: ThreadMemory | null): ThreadRecord {
  const from = carried ?? remembered;
  const resumable = from && !CLOSED_STATES.includes(from.state) ? from : undefined;
  return {
    state: resumable?.state ?? 'pending',
    category: resumable?.category,
    confidence: resumable?.confidence,
    draftId: resumable?.draftId,
    draftMessageId: resumable?.draftMessageId,
    draftCreatedAt: resumable?.draftCreatedAt,
    reworkCount: resumable?.reworkCount ?? 0,
    handledMessageIds: from?.handledMessageIds ?? [],
    lastDraftBody: carried?.lastDraftBody,
    decisions: carried?.decisions ?? [],
    draftKey: carried?.draftKey,
    draftRepliesTo: carried?.draftRepliesTo,
    openActions: carried?.openActions ?? [],
    sentByUs: carried?.sentByUs ?? [],
    wakes: resumable?.wakes ?? [],
    ...(carried?.nudgeDraftId ? { nudgeDraftId: carried.nudgeDraftId } : {}),
  };
}

export function isClosed(record: ThreadRecord): boolean {
  return CLOSED_STATES.includes(record.state);
}

/** The row in Postgres (table threads). */
export function memoryOf(record: ThreadRecord): ThreadMemory {
  return {
    state: record.state,
    category: record.category,
    confidence: record.confidence,
    draftId: record.draftId,
    draftMessageId: record.draftMessageId,
    draftCreatedAt: record.draftCreatedAt,
    reworkCount: record.reworkCount,
    handledMessageIds: record.handledMessageIds.slice(-HANDLED_KEPT),
    ...(record.wakes.length > 0 ? { wakes: record.wakes } : {}),
  };
}

/** The earliest pending timer (undefined: none). */
export function nextWake(record: Pick<ThreadRecord, 'wakes'>): Wake | undefined {
  return record.wakes.reduce<Wake | undefined>((first, w) => (first === undefined || w.at < first.at ? w : first), undefined);
}

export function isSnoozed(record: Pick<ThreadRecord, 'wakes'>): boolean {
  return record.wakes.some((w) => w.kind === 'snooze');
}

/** What continue-as-new hands the next run: the record, the duplicate filter, and events not handled yet. */
export function carriedOf(record: ThreadRecord, seenEvents: Iterable<string>, pending: ThreadEvent[]): CarriedThreadState {
  return {
    ...memoryOf(record),
    lastDraftBody: record.lastDraftBody,
    ...(record.draftKey ? { draftKey: record.draftKey } : {}),
    ...(record.draftRepliesTo ? { draftRepliesTo: record.draftRepliesTo } : {}),
    ...(record.openActions.length > 0 ? { openActions: record.openActions } : {}),
    ...(record.sentByUs.length > 0 ? { sentByUs: record.sentByUs.slice(-HANDLED_KEPT) } : {}),
    ...(record.nudgeDraftId ? { nudgeDraftId: record.nudgeDraftId } : {}),
    seenEvents: [...seenEvents].slice(-SEEN_EVENTS_KEPT),
    decisions: isClosed(record) ? [] : record.decisions.slice(-DECISIONS_CARRIED),
    pending,
  };
}

/** The value of InboxState: the thread's state, or `snoozed` while a snooze is pending. */
export type IndexedState = ThreadState | 'snoozed';

/**
 * What the search attributes InboxState, InboxCategory and WakeAt show (never subjects or
 * addresses). A closed thread has no timers.
 */
export function indexedOf(record: ThreadRecord): { state: IndexedState; category?: Category; wakeAt?: number } {
  const wake = isClosed(record) ? undefined : nextWake(record);
  return {
    state: !isClosed(record) && isSnoozed(record) ? 'snoozed' : record.state,
    category: record.category,
    ...(wake ? { wakeAt: wake.at } : {}),
  };
}

export function statusOf(
  ids: { accountId: string; threadId: string },
  record: ThreadRecord,
  run: { pendingEvents: number; waitingFor?: string },
): ThreadStatus {
  return {
    ...ids,
    state: record.state,
    category: record.category,
    confidence: record.confidence,
    draftId: record.draftId,
    reworkCount: record.reworkCount,
    pendingEvents: run.pendingEvents,
    ...(run.waitingFor ? { waitingFor: run.waitingFor } : {}),
    ...(record.openActions.length > 0 ? { openActions: record.openActions } : {}),
    ...(record.wakes.length > 0 ? { wakes: [...record.wakes].sort((a, b) => a.at - b.at) } : {}),
    decisions: record.decisions,
  };
}

/** Where the record stands in Postgres: the last row written, and how many decisions it holds. */
export interface SavedRecord {
  row: string;
  decisions: number;
}

/**
 * What to write so Postgres holds the record: the row (when it changed) and the decisions not
 * written yet, with their sequence numbers (the write's idempotency key). Undefined: nothing to write.
 */
export function unsaved(
  record: ThreadRecord,
  saved: SavedRecord,
): { memory: ThreadMemory; decisions: { seq: number; decision: DecisionRecord }[]; saved: SavedRecord } | undefined {
  const memory = memoryOf(record);
  const row = JSON.stringify(memory);
  if (row === saved.row && saved.decisions === record.decisions.length) return undefined;
  return {
    memory,
    decisions: record.decisions.slice(saved.decisions).map((decision, i) => ({ seq: saved.decisions + i, decision })),
    saved: { row, decisions: record.decisions.length },
  };
}

/** A run resumed by continue-as-new starts with Postgres up to date; a fresh run has written nothing. */
export function savedAtStart(record: ThreadRecord, carried: boolean): SavedRecord {
  return carried ? { row: JSON.stringify(memoryOf(record)), decisions: record.decisions.length } : { row: '', decisions: 0 };
}
