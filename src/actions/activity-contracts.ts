// The action activities as types: the thread workflow and the undo workflow import only these;
// gmail-activities.ts (Gmail task queue) and store-activities.ts (local, Postgres) implement them.
import type { ActionResult, ActionState, JournaledAction, ProposeActionsInput, TimerJournalInput } from './contracts.js';

export interface ActionGmailActivities {
  /**
   * Judges the proposed actions by the safety policy, with the kill switch (the pause label) read
   * from Gmail, journals them (journal.proposeActions) and carries out at once the label changes it
   * lets run. Returns each action as journaled after the step: done or failed (with the reason),
   * queued (a send, which its thread schedules), awaiting approval or refused. One round trip for
   * the lot; a retry finds the rows by key and redoes nothing that is done.
   */
  proposeAndPerform(
    input: Omit<ProposeActionsInput, 'pausedByLabel' | 'recipients'> & {
      pauseLabel: string;
      /**
       * Who a reply to the message goes to, as readThread read it (its replyHeaders); when absent
       * (a history from before recipients were judged) the activity reads them from the message.
       */
      recipients?: string[];
    },
  ): Promise<JournaledAction[]>;
  /**
   * Carries out an approved action that changes labels (archive, labels, read, star,
   * trash) and journals it done. An action already done returns its result: a retry never acts twice.
   */
  performAction(input: { actionId: string }): Promise<ActionResult>;
  /**
   * Sends a scheduled forward or auto-reply and journals it done. Looks first for a message carrying
   * the action's marker in the thread, so a worker killed between sending and journaling never sends
   * twice. Under the kill switch an automatic send goes back to awaiting approval instead. A send
   * cut off after the server had the message is not tried again: failed, with `why`.
   */
  sendAction(input: { actionId: string; pauseLabel: string }): Promise<{ sent: boolean; state: ActionState; sentMessageId?: string; why?: string }>;
  /**
   * Journals a send later of the thread's newest draft (ours or the user's), judged by the policy
   * as the user's own send, and schedules it for `atMs`. Null action: no draft, or the journal
   * row as it stands when the policy did not let it run (why). Idempotent by the request id.
   */
  proposeSendLater(input: {
    accountId: string;
    threadId: string;
    requestId: string;
    workflowId: string;
    atMs: number;
    pauseLabel: string;
    approvalExpiryMs: number;
    /** The surface the user asked through (cli, mcp): the journal records it. */
    decidedBy?: string;
  }): Promise<{ action: JournaledAction | null; why?: string }>;
  /** Takes a done action back in Gmail (reversalOf) and journals it undone; says why when it cannot be. */
  undoAction(input: { actionId: string; by: string }): Promise<{ undone: boolean; why?: string }>;
  /** An auto-reply waiting for approval, visible in the thread as a draft with the awaiting label. */
  placeApprovalDraft(input: { actionId: string; label: string }): Promise<{ draftId: string; messageId: string }>;
  /** Takes the awaiting label off the thread and deletes the approval draft if given (rejected, expired); gone already is fine. */
  discardApprovalDraft(input: { accountId: string; threadId: string; draftId?: string; label: string }): Promise<void>;
}

export interface ActionStoreActivities {
  /** Moves an action between states (journal.transitionAction); null when it does not exist. */
  settleAction(input: {
    id: string;
    from: ActionState[];
    to: ActionState;
    note?: string;
    decidedBy?: string;
    result?: ActionResult;
    scheduledForMs?: number;
  }): Promise<{ action: JournaledAction; moved: boolean } | null>;
  /** The action as the journal has it now. */
  readAction(input: { id: string }): Promise<JournaledAction | null>;
  /** Journals a thread's timer (snooze, reminder, follow-up) as scheduled; idempotent by its request. */
  journalTimer(input: TimerJournalInput): Promise<JournaledAction>;
}

export interface ApprovalNotifyActivities {
  /**
   * Tells the user an action waits for approval: a Discord webhook message (a short, secret-free
   * summary and a signed link to the approvals page), when a webhook is configured. Idempotent per action.
   */
  notifyApproval(input: { actionId: string }): Promise<{ notified: boolean; channel?: string }>;
  /** Tells the user a reminder or a follow-up fell due (Discord, when configured). Idempotent per timer. */
  notifyTimer(input: { actionId: string }): Promise<{ notified: boolean; channel?: string }>;
}
