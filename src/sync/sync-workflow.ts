// One sync workflow per Gmail account (id `sync/<accountId>`). It holds the cursor: the last
// history id whose changes were all delivered to the thread workflows. Push notifications,
// schedule polls and reconnects arrive as signals; a burst of them coalesces into one pass.
// A pass pages history.list through an activity that delivers each page's events before the
// cursor advances. An expired cursor (404) triggers a gap repair (inbox listing since the last
// successful sync) — nothing is skipped. A mailbox whose history id went backwards (restored or
// replaced) gets a full inbox scan, and the cursor is reset to it. A revoked grant pauses the
// account's sync until it is reconnected; no crash loop, and the cursor is kept.
// The process is syncWorkflow below, its steps after it; the decisions are sync-state.ts; the
// Temporal plumbing of a run (signals, query, activities, the pause, continue-as-new) is sync-run.ts.
import { log } from '@temporalio/workflow';
import type { SyncWorkflowInput } from './contracts.js';
import { SyncRun } from './sync-run.js';
import { daysBack, fullScanned, gapRepairSince, passDone, repaired, takePage, wantsHistory } from './sync-state.js';

export { syncFullScanSignal, syncNotifySignal, syncStatusQuery } from './signals.js';

export async function syncWorkflow(input: SyncWorkflowInput): Promise<void> {
  const run = new SyncRun(input);
  for (;;) {
    await run.workAsked(); // a push, a poll, a reconnect, a full-scan request
    await run.pass(async () => {
      // A revoked grant pauses a step until the account is reconnected (account-access.ts), then it runs again.
      if (wantsHistory(run.state)) await run.access.whileUsable('history', () => historyPass(run));
      await requestedFullScan(run);
    });
    if (run.historyIsLong) await run.continueAsNew();
  }
}

// ---- the steps ------------------------------------------------------------------------------

/** From the cursor, history page by page to its end, each page's events delivered; an expired or backwards cursor is repaired. */
async function historyPass(run: SyncRun): Promise<void> {
  const { state, accountId } = run;
  const startedAt = Date.now();
  state.pollRequested = false;
  for (;;) {
    const start = await cursor(run);
    const page = await run.sync.syncHistoryPage({ accountId, startHistoryId: start, pageSize: run.settings.pageSize });
    if (page.kind === 'expired') {
      await gapRepair(run);
      continue; // then history from the fresh id: changes made during the repair
    }
    if (page.kind === 'behind') {
      await backwardsRepair(run, page.mailboxHistoryId, start);
      continue;
    }
    if (!takePage(state, page)) break;
  }
  passDone(state, startedAt);
}

/** This run's cursor, else the persisted one (a new account's starts at the mailbox's current id). */
async function cursor(run: SyncRun): Promise<string> {
  run.state.cursor ??= await run.sync.loadCursor({ accountId: run.accountId });
  return run.state.cursor;
}

/** History no longer reaches back to the cursor: the inbox since the last successful sync is listed instead. */
async function gapRepair(run: SyncRun): Promise<void> {
  const since = gapRepairSince(run.state, run.settings, Date.now());
  log.warn('history id expired: repairing the gap from an inbox listing', { accountId: run.accountId, since: new Date(since).toISOString() });
  const result = await run.sync.scanInbox({ accountId: run.accountId, sinceMs: since, resetCursor: true });
  repaired(run.state, result, { backwards: false });
}

/** The mailbox went backwards: everything in it may be new to us, and our cursor is from another mailbox. */
async function backwardsRepair(run: SyncRun, mailboxHistoryId: string, ours: string): Promise<void> {
  log.warn('mailbox history id behind the cursor: full inbox scan, cursor reset', { accountId: run.accountId, mailboxHistoryId, cursor: ours });
  const sinceMs = daysBack(run.settings.gapRepairFallbackDays, Date.now());
  const result = await run.sync.scanInbox({ accountId: run.accountId, sinceMs, resetCursor: true });
  repaired(run.state, result, { backwards: true });
}

/** The full scan asked for (hourly schedule, or by hand): threads the sync missed are handed over. */
async function requestedFullScan(run: SyncRun): Promise<void> {
  const days = run.state.fullScanDays;
  if (days === undefined) return;
  await run.access.whileUsable('full scan', async () => {
    const result = await run.sync.scanInbox({ accountId: run.accountId, sinceMs: daysBack(days, Date.now()), resetCursor: false });
    fullScanned(run.state, result);
  });
  run.state.fullScanDays = undefined;
}
