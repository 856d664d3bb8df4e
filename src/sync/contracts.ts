// The sync workflow's boundary: its input, the notifications it takes as signals, the
// activities it calls and what its query returns. Shared by workflow, activities and callers.

export interface SyncSettings {
  /** history.list page size (≤ 500). Each page is delivered, then the cursor advances. */
  pageSize: number;
  /** Continue-as-new once the run's history has this many events (Temporal suggests it anyway near its limits). */
  maxHistoryEvents: number;
  /** While the account's grant is revoked, look again this often (ms) even without a reconnect signal. */
  reauthRecheckMs: number;
  /** Gap repair when the last successful sync time is unknown: list the inbox this far back (days). */
  gapRepairFallbackDays: number;
  /** Slack subtracted from the last successful sync time when listing the inbox for a gap (ms). */
  gapRepairSlackMs: number;
}

export const DEFAULT_SYNC_SETTINGS: SyncSettings = {
  pageSize: 500,
  maxHistoryEvents: 5_000,
  reauthRecheckMs: 6 * 3600_000,
  gapRepairFallbackDays: 10,
  gapRepairSlackMs: 3600_000,
};

/** Why a sync pass was asked for. `push` carries the mailbox's history id at the time of the change. */
export interface SyncNotification {
  source: 'push' | 'poll' | 'manual' | 'connect';
  historyId?: string;
}

export interface FullScanRequest {
  days: number;
}

/** What one run hands to the next (continue-as-new). */
export interface SyncCarried {
  cursor?: string;
  /** Epoch ms (workflow time) at which the last complete pass started. */
  lastSyncedAt?: number;
  notifiedHistoryId?: string;
  pollRequested: boolean;
  fullScanDays?: number;
  stats: SyncStats;
}

export interface SyncStats {
  passes: number;
  pages: number;
  events: number;
  gapRepairs: number;
  fullScans: number;
  ignoredNotifications: number;
}

export interface SyncWorkflowInput {
  accountId: string;
  settings?: Partial<SyncSettings>;
  carried?: SyncCarried;
}

export interface SyncStatus {
  accountId: string;
  cursor?: string;
  lastSyncedAt?: number;
  paused: boolean;
  pausedReason?: string;
  /** No pass running and none asked for. */
  idle: boolean;
  stats: SyncStats;
  /** The last inbox scan (full scan or gap repair). */
  lastScan?: InboxScanResult & { kind: 'full_scan' | 'gap_repair' };
}

// ---- activities ----------------------------------------------------------------------------

export type HistoryPageResult =
  | { kind: 'page'; cursor: string; more: boolean; records: number; events: number }
  /** startHistoryId is older than Gmail keeps: a gap repair is needed. */
  | { kind: 'expired' }
  /** The mailbox's history id is far behind startHistoryId (restored or replaced): a full scan is needed. */
  | { kind: 'behind'; mailboxHistoryId: string };

export interface InboxScanResult {
  /** The mailbox's history id read before listing: history after it covers everything the scan may have missed. */
  historyId: string;
  listed: number;
  threads: number;
  ingested: number;
  /**
   * Gap repair only: events handed over for what the lost history may have hidden: one per thread
   * carrying a label request (Done, Rework, Needs Response), one per drafted thread (draft sent or deleted?).
   */
  reconciled?: number;
  /** Stored messages (`messages` rows) of the window whose labels the scan brought up to date with the mailbox. */
  relabelled?: number;
}

export interface SyncActivities {
  /** The persisted cursor (Account.historyId); starts one at the mailbox's current id when there is none. */
  loadCursor(input: { accountId: string }): Promise<string>;
  /** One page of history.list after `startHistoryId`, delivered to the thread workflows, then persisted. */
  syncHistoryPage(input: { accountId: string; startHistoryId: string; pageSize: number }): Promise<HistoryPageResult>;
  /** Lists the inbox since `sinceMs` and hands every message not yet known to the thread workflows. */
  scanInbox(input: { accountId: string; sinceMs: number; resetCursor: boolean }): Promise<InboxScanResult>;
}

export interface SyncFanoutActivities {
  /** Signals (with start) the sync workflow of every active account. */
  notifyActiveAccounts(input: { kind: 'poll' | 'full_scan'; days?: number }): Promise<{ accounts: number }>;
  /** users.watch for every active account whose watch expires within `renewWithinMs` (or has none). */
  renewWatches(input: { renewWithinMs: number }): Promise<{ renewed: number; failed: number; skipped: number }>;
}

export function syncWorkflowId(accountId: string): string {
  return `sync/${accountId}`;
}

/**
 * How far a history id may lag behind our cursor before we say the mailbox went backwards. Gmail's ids
 * only grow: a late or duplicate push lags by the few changes made while it was on its way, and a
 * history answer never lags at all. Further behind than this, the mailbox was restored or replaced
 * (the emulator's demo mailbox generated afresh): history after our cursor will never come, and
 * only a full inbox scan finds its mail.
 */
export const HISTORY_ID_BACKWARDS_MARGIN = 500n;

const DECIMAL = /^\d+$/;

/** `historyId` is behind `cursor` by more than HISTORY_ID_BACKWARDS_MARGIN (Gmail's ids; an IMAP cursor never is). */
export function historyIdWentBackwards(historyId: string | undefined, cursor: string | undefined): boolean {
  if (!historyId || !cursor || !DECIMAL.test(historyId) || !DECIMAL.test(cursor)) return false;
  return BigInt(cursor) - BigInt(historyId) > HISTORY_ID_BACKWARDS_MARGIN;
}

/**
 * Compares change cursors: Gmail's history ids (decimal strings of up to 64 bits) by value; an IMAP
 * cursor (folder states, src/imap/mail-ids.ts) only comes from the mailbox after the one before it,
 * so any other cursor is taken as later.
 */
export function historyIdGreater(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || a === '') return false;
  if (b === undefined || b === '') return true;
  if (DECIMAL.test(a) && DECIMAL.test(b)) return BigInt(a) > BigInt(b);
  return a !== b;
}
