// The clean-up of a mailbox (docs/cleanup.md): unsubscribing from a sender, as plain data the
// clean-up's workflows, activities and clients agree on. Pure and workflow-safe.
import type { ActionReason, ActionState } from '../actions/contracts.js';

export interface UnsubscribeSettings {
  /** An unsubscribe not approved within this long expires. */
  approvalExpiryMs: number;
  /** Tries of the unsubscribe itself (the POST or the mail) before it is journaled failed. */
  maxAttempts: number;
  /** The first retry waits this long; each next one three times longer (bounded by maxIntervalMs). */
  firstRetryMs: number;
  maxIntervalMs: number;
}

export const DEFAULT_UNSUBSCRIBE_SETTINGS: UnsubscribeSettings = {
  approvalExpiryMs: 72 * 3600_000,
  maxAttempts: 5,
  firstRetryMs: 30_000,
  maxIntervalMs: 30 * 60_000,
};

export interface UnsubscribeInput {
  accountId: string;
  /** The sender's canonical address. */
  sender: string;
  /** Who asked: the user (the CLI with --now), else the clean-up's suggestion, judged by the policy. */
  reason: ActionReason;
  settings: UnsubscribeSettings;
  gmailTaskQueue: string;
}

/** What became of an unsubscribe: the journaled action's id and state, or why there was none. */
export interface UnsubscribeStatus {
  actionId?: string;
  state: ActionState | 'proposing' | 'nothing_to_do';
  note?: string;
}

/** One unsubscribe workflow per account and sender: asking twice is the same unsubscribe. */
export function unsubscribeWorkflowId(accountId: string, sender: string): string {
  return `unsubscribe/${accountId}/${sender}`;
}

// ---- bulk archive / trash ------------------------------------------------------------------------

/** batchModify takes at most this many ids: one batch, one journal entry. */
export const MAX_BULK_BATCH = 1000;

/**
 * Whose mail a bulk action takes: one sender's, or a domain's (the provider's match on From), or what
 * a search in Gmail's syntax finds (on IMAP only what IMAP SEARCH can say exactly: src/mail/mail-query.ts).
 */
export interface BulkSelection {
  kind: 'sender' | 'domain' | 'query';
  value: string;
}

/**
 * archive: out of the inbox; trash: into the trash; label: a label of ours added (BulkInput.label) to
 * the messages that lack it. Each batch is undone exactly (its ids back, or the label off its ids).
 */
export type BulkOperation = 'archive' | 'trash' | 'label';

export interface BulkInput {
  accountId: string;
  selection: BulkSelection;
  operation: BulkOperation;
  /** The label's name (operation label). */
  label?: string;
  /** Count what it would touch (messages and threads) and change nothing. */
  dryRun: boolean;
  /** Ids per batch (at most MAX_BULK_BATCH). */
  batchSize: number;
  gmailTaskQueue: string;
  /** A batch's activity heartbeats: a worker that died mid-batch is noticed after this long (default 20 s). */
  heartbeatTimeoutMs?: number;
  /** Carried over continue-as-new: batches done and messages moved so far. */
  progress?: BulkProgress;
}

export interface BulkProgress {
  state: 'counting' | 'running' | 'done' | 'dry_run';
  /** What it does (absent in the progress of runs started before it was kept). */
  operation?: BulkOperation;
  /** Messages moved (or labelled) so far (a dry run: that would be). */
  messages: number;
  /** A dry run: threads it would touch. */
  threads?: number;
  /** Batches journaled so far; the next batch's number. */
  batches: number;
  /** Journal entries of the batches (action ids), oldest first: what undo takes back. */
  actionIds: string[];
  startedAtMs: number;
}

export function bulkWorkflowId(accountId: string, requestId: string): string {
  return `bulk/${accountId}/${requestId}`;
}
