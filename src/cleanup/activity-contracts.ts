// The clean-up's activities as types: its workflows import only these.
import type { ActionReason, JournaledAction } from '../actions/contracts.js';
import type { BulkOperation, BulkSelection } from './contracts.js';

export interface CleanupGmailActivities {
  /**
   * Finds the sender's newest message that says how to unsubscribe (List-Unsubscribe, with
   * List-Unsubscribe-Post for one-click), judges an `unsubscribe` action by the safety policy and
   * journals it. Null action, with why: no message of the sender says how. Idempotent by the key.
   */
  proposeUnsubscribe(input: {
    accountId: string;
    sender: string;
    reason: ActionReason;
    workflowId: string;
    approvalExpiryMs: number;
  }): Promise<{ action: JournaledAction | null; why?: string }>;
  /**
   * Carries out a queued or approved unsubscribe: the RFC 8058 POST through the one-click client, or
   * the mail through the user's mailbox (looked for first by its marker, so it is sent once), and
   * journals it done, or failed for a reason no retry mends. A failure worth retrying is thrown.
   */
  performUnsubscribe(input: { actionId: string }): Promise<JournaledAction>;
}

export interface CleanupBulkActivities {
  /** How many messages and threads a bulk action would touch now (its dry run). */
  countBulk(input: { accountId: string; selection: BulkSelection; operation: BulkOperation; label?: string }): Promise<{ messages: number; threads: number }>;
  /**
   * One batch of a bulk action: the journal entry `batch` of the workflow (found again when a killed
   * run left it, its ids then moved again), else up to `batchSize` messages that still match,
   * journaled with their ids before they move, then moved in one batchModify and journaled done.
   * Zero moved: nothing matches any more.
   */
  runBulkBatch(input: {
    accountId: string;
    workflowId: string;
    batch: number;
    selection: BulkSelection;
    operation: BulkOperation;
    /** The label's name (operation label). */
    label?: string;
    batchSize: number;
  }): Promise<{ moved: number; actionId?: string }>;
}
