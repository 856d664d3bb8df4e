// The sync workflow's state and its decisions (pure, deterministic: workflow code, no clock of its
// own; callers pass `now`). What a notification asks for, when a pass is due, what a history page
// or an inbox scan does to the cursor and the stats, what a run carries into the next and what
// the status query shows.
import {
  historyIdGreater,
  historyIdWentBackwards,
  type HistoryPageResult,
  type InboxScanResult,
  type SyncCarried,
  type SyncNotification,
  type SyncSettings,
  type SyncStatus,
} from './contracts.js';

const DAY_MS = 24 * 3600_000;

/** What a run works on: what it carries into the next, and the last inbox scan. */
export interface SyncState extends SyncCarried {
  lastScan?: SyncStatus['lastScan'];
}

/** A new sync starts with a pass (there is no cursor yet, or the account was just connected). */
export function openState(carried: SyncCarried | undefined): SyncState {
  return carried ?? { pollRequested: true, stats: { passes: 0, pages: 0, events: 0, gapRepairs: 0, fullScans: 0, ignoredNotifications: 0 } };
}

/**
 * Takes a notification in: `backwards` when a push is far behind the cursor (not a late push: the
 * mailbox went backwards, and a pass reads its current id and repairs); a push about changes
 * already synced (out of order or a duplicate) is `ignored`; anything else asks for a pass (`due`).
 */
export function takeNotification(state: SyncState, n: SyncNotification): 'backwards' | 'ignored' | 'due' {
  if (n.source === 'push' && historyIdWentBackwards(n.historyId, state.cursor)) {
    state.pollRequested = true;
    return 'backwards';
  }
  if (n.source === 'push' && n.historyId !== undefined) {
    if (historyIdGreater(n.historyId, state.cursor) && historyIdGreater(n.historyId, state.notifiedHistoryId)) {
      state.notifiedHistoryId = n.historyId;
      return 'due';
    }
    state.stats.ignoredNotifications++;
    return 'ignored';
  }
  state.pollRequested = true;
  return 'due';
}

/** A full scan of this many days is asked for; requests that arrive together take the longest. */
export function takeFullScanRequest(state: SyncState, days: number): void {
  state.fullScanDays = Math.max(state.fullScanDays ?? 0, days);
}

/** A history pass is due: a poll was asked for, or a push names changes past the cursor. */
export function wantsHistory(state: SyncState): boolean {
  return state.pollRequested || historyIdGreater(state.notifiedHistoryId, state.cursor);
}

export function wantsWork(state: SyncState): boolean {
  return wantsHistory(state) || state.fullScanDays !== undefined;
}

/** A history page delivered: counted, and the cursor moves past it. Returns whether more pages follow. */
export function takePage(state: SyncState, page: Extract<HistoryPageResult, { kind: 'page' }>): boolean {
  state.stats.pages++;
  state.stats.events += page.events;
  if (historyIdGreater(page.cursor, state.cursor)) state.cursor = page.cursor;
  return page.more;
}

/** A pass that started at `startedAt` read history to its end. */
export function passDone(state: SyncState, startedAt: number): void {
  state.stats.passes++;
  state.lastSyncedAt = startedAt;
}

/**
 * Where a gap repair lists the inbox from: the last successful sync, less some slack; without
 * one, the fallback number of days.
 */
export function gapRepairSince(state: SyncState, settings: SyncSettings, now: number): number {
  return state.lastSyncedAt !== undefined ? state.lastSyncedAt - settings.gapRepairSlackMs : now - settings.gapRepairFallbackDays * DAY_MS;
}

/** Where a full scan of `days` (or the repair of a mailbox that went backwards) lists the inbox from. */
export function daysBack(days: number, now: number): number {
  return now - days * DAY_MS;
}

/**
 * A repair's inbox scan: the cursor is reset to the mailbox's id read before the listing.
 * `backwards`: the mailbox went backwards, and the pushes of the mailbox we had are void.
 */
export function repaired(state: SyncState, result: InboxScanResult, { backwards }: { backwards: boolean }): void {
  state.lastScan = { kind: 'gap_repair', ...result };
  state.stats.gapRepairs++;
  state.cursor = result.historyId;
  if (backwards) state.notifiedHistoryId = undefined;
}

export function fullScanned(state: SyncState, result: InboxScanResult): void {
  state.lastScan = { kind: 'full_scan', ...result };
  state.stats.fullScans++;
}

/** What the next run starts from: a push already covered by the cursor is dropped. */
export function carriedOf(state: SyncState): SyncCarried {
  const { cursor, lastSyncedAt, notifiedHistoryId, pollRequested, fullScanDays, stats } = state;
  return {
    ...(cursor !== undefined ? { cursor } : {}),
    ...(lastSyncedAt !== undefined ? { lastSyncedAt } : {}),
    ...(notifiedHistoryId !== undefined && historyIdGreater(notifiedHistoryId, cursor) ? { notifiedHistoryId } : {}),
    pollRequested,
    ...(fullScanDays !== undefined ? { fullScanDays } : {}),
    stats,
  };
}

/** What the status query shows; `pausedReason`: why the sync waits for the account, if it does. */
export function statusOf(accountId: string, state: SyncState, { working, pausedReason }: { working: boolean; pausedReason: string | undefined }): SyncStatus {
  const { cursor, lastSyncedAt, lastScan } = state;
  return {
    accountId,
    ...(cursor !== undefined ? { cursor } : {}),
    ...(lastSyncedAt !== undefined ? { lastSyncedAt } : {}),
    paused: pausedReason !== undefined,
    ...(pausedReason !== undefined ? { pausedReason } : {}),
    idle: !working && !wantsWork(state),
    stats: { ...state.stats },
    ...(lastScan ? { lastScan } : {}),
  };
}
