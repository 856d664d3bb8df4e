// The thread workflow's boundary: its input, the events the sync worker signals, and what
// its query returns. Shared by the workflow, the ingest function and the activities.
import type { Category } from '../mail/types.js';
import type { ActionDecisionEvent, ActionKind, ActionSettings, ProposedAction } from '../actions/contracts.js';

export type { Category };

export const THREAD_STATES = [
  'pending',
  'skipped',
  'needs_response',
  'drafted',
  'rework_requested',
  /** The user sent a message that expects an answer: the thread waits for it until the follow-up is due. */
  'awaiting_reply',
  'sent',
  'archived',
  'action_required',
  'discarded',
] as const;

export type ThreadState = (typeof THREAD_STATES)[number];

export const CLOSED_STATES: readonly ThreadState[] = ['sent', 'archived', 'discarded'];


/** Our labels, by role; the Gmail names are configurable (ThreadSettings.labels). */
export type LabelRole = 'outbox' | 'rework' | 'done' | 'needsResponse' | 'actionRequired' | 'followUp' | 'snoozed';

export interface LabelNames {
  outbox: string;
  rework: string;
  done: string;
  needsResponse: string;
  actionRequired: string;
  /** On a thread whose follow-up fell due: the other side has not answered. */
  followUp: string;
  /** On a thread back from a snooze. */
  snoozed: string;
}

/** What a thread does about the user's sent messages that expect an answer (docs/time.md). */
export interface FollowUpSettings {
  /** Business days (in the account's zone) the thread waits for an answer before the follow-up is due. */
  businessDays: number;
  /** A fixed wait instead (ms): demos and tests (FOLLOW_UP_AFTER). */
  afterMs?: number;
}

export const DEFAULT_FOLLOW_UP_SETTINGS: FollowUpSettings = { businessDays: 3 };

export interface ThreadSettings {
  labels: LabelNames;
  /** Task queues of the Gmail and LLM activities (defaults: durable-inbox-gmail, durable-inbox-llm). */
  taskQueues?: { gmail: string; llm: string };
  /** startToCloseTimeout of one Gmail / LLM activity attempt (ms); each defaults to its queue's (activity-proxies.ts). */
  activityTimeouts?: { gmailMs?: number; llmMs?: number };
  /** heartbeatTimeout of one Gmail / LLM activity (ms): a worker that died or hangs mid-call is noticed this soon. */
  heartbeatTimeouts?: { gmailMs: number; llmMs: number };
  /**
   * A Gmail or LLM step failing with errors a retry could fix is retried this long (ms), then the
   * thread gives up on it (Action Required) unless the whole account's Gmail is out, when it waits
   * and looks again every outageRecheckMs (defaults: activity-proxies.ts STEP_LIMITS).
   */
  stepLimits?: { giveUpAfterMs: number; outageRecheckMs: number };
  /** Rework requests allowed before the thread goes to Action Required. */
  maxReworks: number;
  /** A thread waiting on the user closes after this long without any event (ms). */
  idleTimeoutMs: number;
  /** A thread that needs nothing from us (skipped) closes sooner (ms). */
  skippedIdleTimeoutMs: number;
  /** Attempts at an LLM call whose output fails its schema before giving up. */
  llmAttempts: number;
  /** While the account's Gmail grant is revoked, look again this often (ms) even without a reconnect signal. */
  reauthRecheckMs: number;
  /** Send delay, approval expiry, the kill-switch label (defaults: DEFAULT_ACTION_SETTINGS). */
  actions?: ActionSettings;
  /** Awaiting reply and follow-up (defaults: DEFAULT_FOLLOW_UP_SETTINGS). */
  followUp?: FollowUpSettings;
}

export interface ThreadWorkflowInput {
  accountId: string;
  threadId: string;
  settings: ThreadSettings;
  /** Set by continue-as-new: the state carried over from the previous run. */
  carried?: CarriedThreadState;
  /**
   * A run started only to learn from the user's label changes after the thread's last run had ended
   * (a newsletter we archived, moved back to the inbox days later): it records them as corrections
   * and ends, touching neither the thread nor Gmail. Mail arriving meanwhile makes it an ordinary run.
   */
  learnOnly?: boolean;
}

/** What a thread remembers between runs (Postgres) and across continue-as-new. */
export interface ThreadMemory {
  state: ThreadState;
  category?: Category;
  confidence?: number;
  draftId?: string;
  draftMessageId?: string;
  /** internalDate (epoch ms) of our first draft message: a SENT message after it is the reply. */
  draftCreatedAt?: number;
  reworkCount: number;
  /** Inbound message ids already classified, so a redelivered message is never processed twice. */
  handledMessageIds: string[];
  /** The thread's pending timers; absent: none. */
  wakes?: Wake[];
}

// ---- timers --------------------------------------------------------------------------------

export const WAKE_KINDS = ['follow_up', 'snooze', 'remind', 'send_later'] as const;
export type WakeKind = (typeof WAKE_KINDS)[number];

/**
 * A durable timer of the thread: the run waits for mail, the user or the earliest wake, and never
 * ends while one is pending. Each is a row of the action journal (`actionId`): scheduled while it
 * waits, done when it fired, undone when cancelled (undo of a snooze brings the thread back).
 */
export interface Wake {
  /** The journal row of the timer (a send later's: the send itself). */
  actionId: string;
  kind: WakeKind;
  /** Epoch ms. */
  at: number;
  /** Who set it: the user (CLI, signal), a Gmail label, or the thread itself (a follow-up). */
  by: 'user' | 'label' | 'system';
  /** A reminder's note, a follow-up's message it waits on an answer to. */
  note?: string;
}

/** An action the thread waits on: for the user's approval (until it expires), or to send after its delay. */
export interface OpenAction {
  id: string;
  kind: ActionKind;
  argument?: string;
  state: 'awaiting_approval' | 'scheduled';
  /** Epoch ms: when the approval expires, or when the send goes out. */
  dueAt: number;
  /** An auto-reply's draft while it waits for approval: sending it approves, deleting it rejects. */
  draftId?: string;
  draftMessageId?: string;
  draftCreatedAt?: number;
}

export interface CarriedThreadState extends ThreadMemory {
  lastDraftBody?: string;
  /** The journal key of our current draft (its sent detection records whether it went out unedited). */
  draftKey?: string;
  /** The message our current draft answers. */
  draftRepliesTo?: string;
  openActions?: OpenAction[];
  /** Messages our own sends produced: their arrival in the thread is not the user replying. */
  sentByUs?: string[];
  /** The nudge drafted when the follow-up fell due (deleted when the answer comes). */
  nudgeDraftId?: string;
  seenEvents: string[];
  decisions: DecisionRecord[];
  pending: ThreadEvent[];
}

// ---- signals -------------------------------------------------------------------------------

/** A message was added to the thread (inbound mail, or our own draft/sent message). */
export interface MessageAddedEvent {
  type: 'message_added';
  messageId: string;
  labelIds: string[];
  /**
   * The LLM's classification of the thread's newest inbound message, decided ahead in a Message Batch
   * (a backfill's hand-over, src/backfill/batch-classification.ts): the thread takes it instead of
   * calling the model, when no rule decides and that message is still the one to classify.
   */
  classified?: BatchedClassification;
}

/** A classification a Message Batch decided (docs/llm-cost.md). */
export interface BatchedClassification {
  /** The message it classifies (the thread's newest inbound one when the batch was prepared). */
  messageId: string;
  /** The Message Batch (msgbatch_…) that decided it. */
  batchId: string;
  category: Category;
  confidence: number;
  reason: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
}

/** The user added or removed one of our labels on a message of the thread. */
export interface LabelsChangedEvent {
  type: 'labels_changed';
  messageId: string;
  /** A history id or other unique key of the change, so a duplicate delivery is ignored. */
  changeId: string;
  added: LabelRole[];
  removed: LabelRole[];
  /**
   * Found on the thread by a gap repair rather than read from history: the workflow acts only on
   * labels still there when it gets to the event (one it already handled is gone by then).
   */
  reconcile?: boolean;
  /** INBOX was added (the thread moved back to the inbox): a correction when we had archived it. */
  inboxAdded?: boolean;
  /** The user's own labels (names; not ours, not Gmail's) added and removed: corrections of our labelling (src/learning/corrections.ts). */
  userLabelsAdded?: string[];
  userLabelsRemoved?: string[];
}

/** A draft message of the thread was deleted (the user sent it, or discarded it). */
export interface DraftGoneEvent {
  type: 'draft_gone';
  messageId: string;
  /**
   * Set when a gap repair asks the thread to check its draft (it does not know whether it is gone):
   * a distinct key, so the check does not mark the real deletion as seen.
   */
  changeId?: string;
}

/** A message with the SENT label appeared in the thread. */
export interface SentSeenEvent {
  type: 'sent_seen';
  messageId: string;
}

/** An open action's time came: its approval expired, or its send delay is over (made by the run, not signalled). */
export interface ActionDueEvent {
  type: 'action_due';
  actionId: string;
}

/** The user asked for the thread to be classified again (a rule changed): `threads reclassify`. */
export interface ReclassifyEvent {
  type: 'reclassify';
  /** Unique per request, so a repeated signal is taken once. */
  requestId: string;
}

/** A wake's time came (made by the run, not signalled). */
export interface WakeEvent {
  type: 'wake';
  actionId: string;
}

/** What the user asks of the thread's timers (CLI, a Gmail label, a signal). */
export type TimerRequest =
  | { kind: 'snooze'; at: number }
  | { kind: 'remind'; at: number; note?: string }
  | { kind: 'send_later'; at: number }
  /** Ends a snooze now: the thread comes back. */
  | { kind: 'unsnooze' }
  /** Cancels the pending timers of this kind (all of them when absent). */
  | { kind: 'cancel'; timer?: WakeKind };

export interface TimerRequestEvent {
  type: 'timer_request';
  /** Unique per request, so a repeated signal is taken once; the timer's journal key. */
  requestId: string;
  request: TimerRequest;
  by: 'user' | 'label';
  /** The surface the user asked through (cli, mcp): the journal's decided_by of the timer and of its cancel. */
  decidedBy?: string;
  /** A request from a Gmail label: the label to take off once the timer is set. */
  label?: string;
}

/**
 * Actions a scheduled run's agent proposes for this thread (archive, labels, a reply): the thread
 * judges and journals them under the policy and carries them out, waits for approval or refuses
 * them, as its own. About `messageId` (the thread's newest message when proposed), so each action's
 * journal key is known to the run that proposed it.
 */
export interface AgentProposalEvent {
  type: 'agent_proposal';
  /** Unique per tool call, so a repeated signal is taken once. */
  requestId: string;
  messageId: string;
  sender: string;
  subject: string;
  actions: (ProposedAction & { result?: { body: string; mailboxRead?: string[] } })[];
  /** The profile's sends wait for approval whatever the policy allows, for this reason. */
  sendsNeedApproval?: string;
  /** Who proposed them, for the decision log: `schedule Morning brief`. */
  by: string;
}

export type { ActionDecisionEvent };

/** What the sync sees change in the mailbox (ingest.ts delivers these). */
export type MailboxEvent = MessageAddedEvent | LabelsChangedEvent | DraftGoneEvent | SentSeenEvent;

export type ThreadEvent = MailboxEvent | ActionDecisionEvent | ActionDueEvent | ReclassifyEvent | WakeEvent | TimerRequestEvent | AgentProposalEvent;

// ---- query ---------------------------------------------------------------------------------

export interface DecisionRecord {
  at: string;
  kind:
    | 'classify'
    | 'draft'
    | 'rework'
    | 'label'
    | 'archive'
    | 'sent'
    | 'discarded'
    | 'action_required'
    | 'skip'
    | 'rule_skipped'
    | 'draft_kept'
    | 'action'
    | 'agent'
    | 'reclassify'
    | 'timer'
    /** A correction of our triage the user made in Gmail, recorded for learning. */
    | 'correction'
    /** How a message with broken MIME was read (a multipart whose boundary never appears, as text). */
    | 'read';
  source: 'rules' | 'llm' | 'user' | 'system';
  detail: string;
  model?: string;
  tokensIn?: number;
  tokensOut?: number;
  ruleId?: string;
  /** The accepted writing lessons a draft was written with, as id@version. */
  lessons?: string[];
  /** The Message Batch a classification came through (at the batch price), not a call of this thread's. */
  batch?: string;
}

export interface ThreadStatus {
  accountId: string;
  threadId: string;
  state: ThreadState;
  category?: Category;
  confidence?: number;
  draftId?: string;
  reworkCount: number;
  /** Events received and not yet fully handled (0 when the thread is waiting on the user). */
  pendingEvents: number;
  /** Set while the thread waits for the user to reconnect the account (the failure that stopped it). */
  waitingFor?: string;
  /** Actions waiting for approval or for their send delay. */
  openActions?: OpenAction[];
  /** The pending timers, earliest first. */
  wakes?: Wake[];
  decisions: DecisionRecord[];
}

export function threadWorkflowId(accountId: string, threadId: string): string {
  return `thread/${accountId}/${threadId}`;
}

/**
 * Events that open a new conversation turn on a closed thread: inbound mail (never the user's own
 * drafts or sent mail), or the user asking for a draft or an archive. The rest only matter to a
 * running workflow. Used by the ingest function and by a run that closes with events pending.
 */
export function opensThread(event: ThreadEvent): boolean {
  if (event.type === 'message_added') return !event.labelIds.includes('DRAFT') && !event.labelIds.includes('SENT');
  if (event.type === 'labels_changed') return event.added.includes('needsResponse') || event.added.includes('done');
  return event.type === 'reclassify' || event.type === 'timer_request' || event.type === 'agent_proposal';
}

/** A label change the thread learns from (correction-steps.ts): a move back to the inbox, the user's own labels. */
export function carriesCorrection(event: ThreadEvent): event is LabelsChangedEvent {
  if (event.type !== 'labels_changed' || event.reconcile) return false;
  return event.inboxAdded === true || (event.userLabelsAdded?.length ?? 0) > 0 || (event.userLabelsRemoved?.length ?? 0) > 0;
}

export function eventKey(event: ThreadEvent): string {
  if (event.type === 'labels_changed') return `${event.type}:${event.changeId}`;
  if (event.type === 'draft_gone' && event.changeId) return `${event.type}:${event.messageId}:${event.changeId}`;
  if (event.type === 'action_decision') return `${event.type}:${event.actionId}:${event.decision}`;
  if (event.type === 'action_due') return `${event.type}:${event.actionId}`;
  if (event.type === 'reclassify' || event.type === 'timer_request' || event.type === 'agent_proposal') return `${event.type}:${event.requestId}`;
  if (event.type === 'wake') return `${event.type}:${event.actionId}`;
  return `${event.type}:${event.messageId}`;
}
