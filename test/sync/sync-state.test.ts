// The sync workflow's decisions, pure and without Temporal: what a notification asks for, when a
// pass is due, what pages and repairs do to the cursor and the stats, what a run carries into the
// next, and what the status query shows.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SYNC_SETTINGS, HISTORY_ID_BACKWARDS_MARGIN, type InboxScanResult } from '../../src/sync/contracts.js';
import {
  carriedOf,
  fullScanned,
  gapRepairSince,
  openState,
  passDone,
  repaired,
  statusOf,
  takeFullScanRequest,
  takeNotification,
  takePage,
  wantsHistory,
  wantsWork,
  type SyncState,
} from '../../src/sync/sync-state.js';

const HOUR = 3600_000;

/** A sync that has synced up to `cursor` and has nothing asked of it. */
function synced(cursor = '5000'): SyncState {
  const state = openState(undefined);
  state.cursor = cursor;
  state.pollRequested = false;
  return state;
}

const scan = (historyId: string): InboxScanResult => ({ historyId, listed: 3, threads: 2, ingested: 1 });

describe('notifications', () => {
  it('starts a new sync with a pass', () => {
    const state = openState(undefined);
    expect(wantsHistory(state)).toBe(true);
    expect(state.stats).toEqual({ passes: 0, pages: 0, events: 0, gapRepairs: 0, fullScans: 0, ignoredNotifications: 0 });
  });

  it('takes a push past the cursor, and ignores one about changes already synced', () => {
    const state = synced();
    expect(wantsWork(state)).toBe(false);
    expect(takeNotification(state, { source: 'push', historyId: '5010' })).toBe('due');
    expect(wantsHistory(state)).toBe(true);
    expect(takeNotification(state, { source: 'push', historyId: '5005' })).toBe('ignored'); // older than the last push
    expect(takeNotification(state, { source: 'push', historyId: '4990' })).toBe('ignored'); // a late push
    expect(state.stats.ignoredNotifications).toBe(2);
    expect(state.notifiedHistoryId).toBe('5010');
  });

  it('asks for a pass on a push far behind the cursor: the mailbox went backwards', () => {
    const state = synced();
    const far = String(5000n - HISTORY_ID_BACKWARDS_MARGIN - 1n);
    expect(takeNotification(state, { source: 'push', historyId: far })).toBe('backwards');
    expect(state.pollRequested).toBe(true);
  });

  it('asks for a pass on a poll, a manual sync or a connect', () => {
    for (const source of ['poll', 'manual', 'connect'] as const) {
      const state = synced();
      expect(takeNotification(state, { source })).toBe('due');
      expect(wantsHistory(state)).toBe(true);
    }
  });

  it('takes the longest of the full scans asked for together', () => {
    const state = synced();
    takeFullScanRequest(state, 3);
    takeFullScanRequest(state, 10);
    takeFullScanRequest(state, 1);
    expect(state.fullScanDays).toBe(10);
    expect(wantsHistory(state)).toBe(false);
    expect(wantsWork(state)).toBe(true);
  });
});

describe('passes and repairs', () => {
  it('moves the cursor forward with each page, never back', () => {
    const state = synced();
    expect(takePage(state, { kind: 'page', cursor: '5100', more: true, records: 4, events: 3 })).toBe(true);
    expect(takePage(state, { kind: 'page', cursor: '5050', more: false, records: 0, events: 0 })).toBe(false);
    expect(state.cursor).toBe('5100');
    expect(state.stats).toMatchObject({ pages: 2, events: 3 });
    passDone(state, 1234);
    expect(state).toMatchObject({ lastSyncedAt: 1234, stats: { passes: 1 } });
  });

  it('repairs a gap from the last successful sync less the slack, else from the fallback days', () => {
    const state = synced();
    const now = 100 * 24 * HOUR;
    expect(gapRepairSince(state, DEFAULT_SYNC_SETTINGS, now)).toBe(now - 10 * 24 * HOUR);
    state.lastSyncedAt = now - 5 * HOUR;
    expect(gapRepairSince(state, DEFAULT_SYNC_SETTINGS, now)).toBe(now - 6 * HOUR);
  });

  it("resets the cursor to a repair's scan; a mailbox that went backwards also voids its pushes", () => {
    const state = synced();
    state.notifiedHistoryId = '6000';
    repaired(state, scan('7000'), { backwards: false });
    expect(state).toMatchObject({ cursor: '7000', notifiedHistoryId: '6000', stats: { gapRepairs: 1 }, lastScan: { kind: 'gap_repair', historyId: '7000' } });
    repaired(state, scan('20'), { backwards: true });
    expect(state.cursor).toBe('20');
    expect(state.notifiedHistoryId).toBeUndefined();
    fullScanned(state, scan('25'));
    expect(state).toMatchObject({ cursor: '20', stats: { fullScans: 1, gapRepairs: 2 }, lastScan: { kind: 'full_scan' } });
  });
});

describe('continue-as-new and status', () => {
  it('carries what is asked for, and drops a push the cursor already covers', () => {
    const state = synced('5000');
    state.notifiedHistoryId = '4000';
    state.lastScan = { kind: 'full_scan', ...scan('1') };
    expect(carriedOf(state)).toEqual({ cursor: '5000', pollRequested: false, stats: state.stats });
    state.notifiedHistoryId = '6000';
    takeFullScanRequest(state, 2);
    expect(carriedOf(state)).toMatchObject({ notifiedHistoryId: '6000', fullScanDays: 2 });
  });

  it('shows a paused sync with its reason, and idle only with nothing running or asked for', () => {
    const state = synced();
    expect(statusOf('a', state, { working: false, pausedReason: undefined })).toEqual({
      accountId: 'a',
      cursor: '5000',
      paused: false,
      idle: true,
      stats: state.stats,
    });
    expect(statusOf('a', state, { working: true, pausedReason: 'GmailAuthError: revoked' })).toMatchObject({
      paused: true,
      pausedReason: 'GmailAuthError: revoked',
      idle: false,
    });
    state.pollRequested = true;
    expect(statusOf('a', state, { working: false, pausedReason: undefined }).idle).toBe(false);
  });
});
