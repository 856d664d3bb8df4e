// What the assistant can do to mail besides drafting, as plain data: the kinds of action, why one
// was proposed, the states of its journal entry, its idempotency key and how it is taken back.
// Pure and workflow-safe: the thread workflow, the activities, the journal and the CLI share it.

export const ACTION_KINDS = [
  'draft',
  // label changes
  'archive', 'add_label', 'remove_label', 'mark_read', 'star',
  // the dangerous kinds (DANGEROUS_KINDS): they wait for approval unless allowed
  'trash', 'forward', 'auto_reply',
] as const;

/**
 * The thread's timers, journaled like actions (scheduled while they wait, done when they fire,
 * undone when cancelled); set by the user or the thread itself, never by a rule or category.
 * send_later is a send: it goes out through the send path under the policy.
 */
export const TIMER_KINDS = ['snooze', 'remind', 'follow_up', 'send_later'] as const;
export type TimerKind = (typeof TIMER_KINDS)[number];

/**
 * The clean-up's kinds (src/cleanup): journaled and judged like the others, run by the clean-up's
 * own workflows, never asked for by a rule or a category. An unsubscribe reaches a stranger's server
 * (RFC 8058 one-click) or mails the list's address.
 */
export const CLEANUP_KINDS = ['unsubscribe'] as const;
export type CleanupKind = (typeof CLEANUP_KINDS)[number];

export type ActionKind = (typeof ACTION_KINDS)[number] | TimerKind | CleanupKind;

/** Kinds that need the user's approval unless the user allowed them for the scope (the dangerous kinds). */
export const DANGEROUS_KINDS: readonly ActionKind[] = ['forward', 'auto_reply', 'trash', 'unsubscribe'];

/** Kinds that send mail out of the mailbox. */
export const SENDING_KINDS: readonly ActionKind[] = ['forward', 'auto_reply', 'send_later'];

/** Who proposed the action, and on what grounds. */
export type ActionReason =
  | { source: 'rule'; ruleId: string }
  | { source: 'llm'; confidence: number; model?: string }
  | { source: 'user' }
  /** readsMailbox: the profile can read the user's other mail and send, so its sends always wait for the user. */
  | { source: 'agent'; profile: string; step: number; readsMailbox?: boolean }
  /** The thread's own lifecycle (Action Required when it needs you, Outbox off once a draft is gone). */
  | { source: 'system'; why: string };

/** One configured action: what a rule or a category asks for (category_actions, rules.actions). */
export interface ActionSpec {
  kind: ActionKind;
  /** The label name (add_label, remove_label) or the address (forward). */
  argument?: string;
}

export interface ProposedAction extends ActionSpec {
  reason: ActionReason;
}

export const ACTION_STATES = [
  'queued',
  'awaiting_approval',
  'approved',
  'scheduled',
  'done',
  'failed',
  'refused',
  'rejected',
  'expired',
  'undone',
] as const;
export type ActionState = (typeof ACTION_STATES)[number];

/**
 * The action's idempotency key: account, thread, the message it answers, kind
 * and argument. A retry, a duplicate signal or a restarted worker finds the action by this key and
 * never performs it twice.
 */
export function actionKey(ids: { accountId: string; threadId: string; messageId: string }, action: Pick<ProposedAction, 'kind' | 'argument'>): string {
  return [ids.accountId, ids.threadId, ids.messageId, action.kind, action.argument ?? ''].join(':');
}

/** How an action is taken back: the inverse label change, or why it cannot be. */
export type Reversal =
  | { kind: 'labels'; add: string[]; remove: string[] }
  | { kind: 'untrash' }
  | { kind: 'delete_draft' }
  | { kind: 'cancel_send' }
  /** A pending timer: its thread cancels it (a snooze's thread comes back). */
  | { kind: 'cancel_timer' }
  | { kind: 'none'; why: string };

/**
 * The reversal of an action. A send can be cancelled only while it waits out its delay; once it is
 * out, it cannot be taken back.
 */
export function reversalOf(action: Pick<ProposedAction, 'kind' | 'argument'>, state: ActionState): Reversal {
  if (state === 'undone') return { kind: 'none', why: 'already undone' };
  if (state === 'rejected' || state === 'expired' || state === 'failed' || state === 'refused') return { kind: 'none', why: `nothing was done (${state})` };
  if (state === 'queued' || state === 'awaiting_approval' || state === 'approved') {
    return { kind: 'none', why: `not done yet (${state}): reject it instead` };
  }
  switch (action.kind) {
    case 'archive':
      return { kind: 'labels', add: ['INBOX'], remove: [] };
    case 'add_label':
      return { kind: 'labels', add: [], remove: [action.argument!] };
    case 'remove_label':
      return { kind: 'labels', add: [action.argument!], remove: [] };
    case 'mark_read':
      return { kind: 'labels', add: ['UNREAD'], remove: [] };
    case 'star':
      return { kind: 'labels', add: [], remove: ['STARRED'] };
    case 'trash':
      return { kind: 'untrash' }; // Gmail puts the mail back where it was, INBOX included
    case 'draft':
      return { kind: 'delete_draft' };
    case 'forward':
    case 'auto_reply':
    case 'send_later':
      return state === 'scheduled' ? { kind: 'cancel_send' } : { kind: 'none', why: 'the message was sent: mail cannot be unsent' };
    case 'snooze':
    case 'remind':
    case 'follow_up':
      return state === 'scheduled' ? { kind: 'cancel_timer' } : { kind: 'none', why: `the ${action.kind.replace('_', '-')} has fired already` };
    case 'unsubscribe':
      return { kind: 'none', why: 'an unsubscribe cannot be taken back: subscribe again at the sender' };
  }
}

/** States after which nothing more happens to an action but an undo. */
export const FINAL_STATES: readonly ActionState[] = ['done', 'failed', 'refused', 'rejected', 'expired', 'undone'];

/** A journal row as the workflow, the CLI and the approvals page see it. */
export interface JournaledAction extends ActionSpec {
  id: string;
  key: string;
  accountId: string;
  threadId: string;
  messageId: string;
  /** The workflow that journaled it and waits for its decision (the thread's, or a clean-up's). */
  workflowId: string;
  reason: ActionReason;
  state: ActionState;
  verdict: 'run' | 'needs_approval' | 'refused';
  because: string[];
  /** The sender of the mail it is about (canonical address; '' when it has none). */
  sender: string;
  /**
   * Who it sends to (auto-reply, forward) or is addressed to (draft): the addresses the policy
   * judged. A send goes to exactly these, or not at all.
   */
  recipients: string[];
  /** The subject of the mail it is about. */
  subject: string;
  scheduledFor?: string;
  expiresAt?: string;
  note?: string;
  decidedBy?: string;
  result?: ActionResult;
  createdAt: string;
  doneAt?: string;
}

/** What an action did in Gmail, for the journal and for its undo. */
export interface ActionResult {
  /** Messages whose labels changed (the reversal changes them back). */
  messageIds?: string[];
  /**
   * A bulk trash: those of messageIds that were not in the inbox when trashed (archived mail, sent
   * mail). Undo takes them out of the trash without bringing them into the inbox; the others go back
   * to the inbox. Absent on batches journaled before it was kept: the mailbox's own untrash.
   */
  notInInbox?: string[];
  /** The label id an add_label/remove_label touched. */
  labelId?: string;
  /** Our draft (draft, and an auto-reply waiting for approval). */
  draftId?: string;
  /** The message a send produced. */
  sentMessageId?: string;
  /** The text an auto-reply sends (written by the LLM before it is proposed). */
  body?: string;
  /** What the agent read of the mailbox in the run that wrote this reply (what it may quote), shown with its approval. */
  mailboxRead?: string[];
  /** Set on a draft once the sent detection saw it go out: whether the user changed it first. */
  sentUnedited?: boolean;
  /** The Discord message that asked for approval (so it is posted once). */
  discordMessageId?: string;
  /** An unsubscribe: how (the URI is the sender's List-Unsubscribe), and what the sender's server answered. */
  unsubscribe?: { method: 'one_click' | 'mailto'; uri: string; to?: string; status?: number; attempts?: number };
}

/** The user's decision about one action: from the CLI, the approvals page, Discord's link or a signal. */
export interface ActionDecisionEvent {
  type: 'action_decision';
  actionId: string;
  decision: 'approve' | 'reject' | 'undo';
  /** Who decided: cli, page, signal, gmail. */
  by: string;
}

/** The header every message we send carries: the look-before-send finds a send a lost attempt made. */
export const ACTION_MARKER_HEADER = 'X-Durable-Inbox-Action';

/** How the thread workflow runs actions: part of the thread's settings. */
export interface ActionSettings {
  /** A send waits this long first (its undo window). */
  sendDelayMs: number;
  /** An approval not given within this long expires; the thread gets Action Required. */
  approvalExpiryMs: number;
  /** A Gmail label that, set on any message, pauses every automatic action (the kill switch from a phone). */
  pauseLabel: string;
  /** The label on an auto-reply's draft while it waits for approval. */
  awaitingApprovalLabel: string;
}

export const DEFAULT_ACTION_SETTINGS: ActionSettings = {
  sendDelayMs: 2 * 60_000,
  approvalExpiryMs: 72 * 3600_000,
  pauseLabel: 'Assistant Paused',
  awaitingApprovalLabel: 'Awaiting Approval',
};

/** The approvals page and its notifications: who may open what, where links point, where Discord is. */
export interface ApprovalsSettings {
  operatorToken?: string;
  linkTtlMs: number;
  /** Where links point, without a trailing slash. */
  publicBaseUrl: string;
  discordWebhookUrl?: string;
}

/** What the user decides about an action (the approvals page, the CLI, Discord's link). */
export type Decision = ActionDecisionEvent['decision'];

export interface ProposeActionsInput {
  accountId: string;
  threadId: string;
  /** The message the actions answer. */
  messageId: string;
  sender: string;
  /** Who a reply to the message goes to (canonical addresses): what an auto-reply is judged for and sent to. */
  recipients: string[];
  /** The subject of the mail, for the approvals list. */
  subject?: string;
  workflowId: string;
  actions: (ProposedAction & { result?: ActionResult })[];
  pausedByLabel: boolean;
  approvalExpiryMs: number;
  /** Sends wait for approval whatever the policy allows, for this reason (an agent profile's setting). */
  sendsNeedApproval?: string;
}

export interface TimerJournalInput {
  accountId: string;
  threadId: string;
  workflowId: string;
  /** The request's id: with the kind, the timer's idempotency key. */
  requestId: string;
  kind: 'snooze' | 'remind' | 'follow_up';
  /** When it fires (epoch ms). */
  atMs: number;
  reason: ActionReason;
  note?: string;
  /** The surface the user set it through (cli, mcp): the row's decided_by. */
  decidedBy?: string;
  /** The message a follow-up waits on an answer to: its subject and To header, for the approvals page's list. */
  about?: { subject: string; to: string };
}

/** A change the thread's own lifecycle made (our draft, Done's archive): journaled as done. */
export interface LifecycleAction extends ActionSpec {
  key: string;
  messageId: string;
  /** The sender of the mail the change is about (lower-case address). */
  sender: string;
  /** Who our draft is addressed to (canonical addresses): earned autonomy counts per recipient. */
  recipients?: string[];
  reason: ActionReason;
  result: ActionResult;
}
