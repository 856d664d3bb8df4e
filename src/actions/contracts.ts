// What the assistant can do to mail besides drafting, as plain data: the kinds of action, why one
// was proposed, the states of its journal entry, its idempotency key and how it is taken back.
// Pure and workflow-safe: the thread workflow, the activities, the journal and the CLI share it.

export const ACTION_KINDS = [
  'draft',
  'archive',
  'add_label',
  'remove_label',
  'mark_read',
  'star',
  'trash',
  'forward',
  'auto_reply',
] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/** Kinds that need the user's approval unless the user allowed them for the scope (seed 001's dangerous list). */
export const DANGEROUS_KINDS: readonly ActionKind[] = ['forward', 'auto_reply', 'trash'];

/** Kinds that send mail out of the mailbox. */
export const SENDING_KINDS: readonly ActionKind[] = ['forward', 'auto_reply'];

/** Who proposed the action, and on what grounds. */
export type ActionReason =
  | { source: 'rule'; ruleId: string }
  | { source: 'llm'; confidence: number; model?: string }
  | { source: 'user' }
  | { source: 'agent'; profile: string; step: number };

export interface ProposedAction {
  kind: ActionKind;
  /** The label name (add_label, remove_label) or the address (forward). */
  argument?: string;
  reason: ActionReason;
}

export const ACTION_STATES = [
  'queued',
  'awaiting_approval',
  'approved',
  'scheduled',
  'done',
  'failed',
  'rejected',
  'expired',
  'undone',
] as const;
export type ActionState = (typeof ACTION_STATES)[number];

/**
 * The action's idempotency key, in seed 001's style: account, thread, the message it answers, kind
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
  | { kind: 'none'; why: string };

/**
 * The reversal of an action. A send can be cancelled only while it waits out its delay; once it is
 * out, it cannot be taken back.
 */
export function reversalOf(action: Pick<ProposedAction, 'kind' | 'argument'>, state: ActionState): Reversal {
  if (state === 'undone') return { kind: 'none', why: 'already undone' };
  if (state === 'rejected' || state === 'expired' || state === 'failed') return { kind: 'none', why: `nothing was done (${state})` };
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
      return state === 'scheduled' ? { kind: 'cancel_send' } : { kind: 'none', why: 'the message was sent: mail cannot be unsent' };
  }
}
