// One sync workflow per Gmail account (id `sync/<accountId>`). It holds the cursor: the last
// history id whose changes were all delivered to the thread workflows. Push notifications,
// schedule polls and reconnects arrive as signals; a burst of them coalesces into one pass.
// A pass pages history.list through an activity that delivers each page's events before the
// cursor advances. An expired cursor (404) triggers a gap repair (inbox listing since the last
// successful sync) — nothing is skipped. A mailbox whose history id went backwards (restored or
// replaced) gets a full inbox scan, and the cursor is reset to it. A revoked grant pauses the
// account's sync until it is reconnected; no crash loop, and the cursor is kept.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { AccountReconnect, accountUnusable } from '../accounts/account-access.js';
import { WakeTrace } from '../temporal/workflow-trace.js';
import {
  DEFAULT_SYNC_SETTINGS,
  historyIdGreater,
  historyIdWentBackwards,
  type FullScanRequest,
  type HistoryPageResult,
  type SyncActivities,
  type SyncCarried,
  type SyncNotification,
  type SyncStatus,
  type SyncWorkflowInput,
} from './contracts.js';

export const syncNotifySignal = defineSignal<[SyncNotification]>('syncNotify');
export const syncFullScanSignal = defineSignal<[FullScanRequest]>('syncFullScan');
export const syncStatusQuery = defineQuery<SyncStatus>('syncStatus');

const DAY_MS = 24 * 3600_000;

export async function syncWorkflow(input: SyncWorkflowInput): Promise<void> {
  const settings = { ...DEFAULT_SYNC_SETTINGS, ...input.settings };
  const { accountId } = input;
  const carried: SyncCarried = input.carried ?? {
    pollRequested: true,
    stats: { passes: 0, pages: 0, events: 0, gapRepairs: 0, fullScans: 0, ignoredNotifications: 0 },
  };
  let { cursor, lastSyncedAt, notifiedHistoryId, pollRequested, fullScanDays } = carried;
  const stats = carried.stats;
  let working = false;
  let lastScan: SyncStatus['lastScan'];

  const acts = proxyActivities<SyncActivities>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '1 minute',
    // Gmail throttling comes back with Retry-After as nextRetryDelay; the rest backs off exponentially.
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });

  // A pass runs in the trace of the push (or poll) that woke it.
  const wake = new WakeTrace();
  setHandler(syncNotifySignal, (n) => {
    wake.note();
    if (n.source === 'push' && historyIdWentBackwards(n.historyId, cursor)) {
      // Not a late push: the mailbox went backwards. A pass reads its current id and repairs.
      log.warn('push history id far behind the cursor: checking the mailbox', { accountId, pushHistoryId: n.historyId, cursor });
      pollRequested = true;
    } else if (n.source === 'push' && n.historyId !== undefined) {
      // Out-of-order or duplicate notifications about changes already synced change nothing.
      if (historyIdGreater(n.historyId, cursor) && historyIdGreater(n.historyId, notifiedHistoryId)) {
        notifiedHistoryId = n.historyId;
      } else {
        stats.ignoredNotifications++;
      }
    } else {
      pollRequested = true;
    }
  });
  setHandler(syncFullScanSignal, (r) => {
    fullScanDays = Math.max(fullScanDays ?? 0, r.days);
  });
  // A revoked grant pauses the sync (the cursor is kept) until the account is reconnected.
  const reconnect = new AccountReconnect(settings.reauthRecheckMs, () => {
    pollRequested = true;
  });
  setHandler(syncStatusQuery, () => ({
    accountId,
    ...(cursor !== undefined ? { cursor } : {}),
    ...(lastSyncedAt !== undefined ? { lastSyncedAt } : {}),
    paused: reconnect.waitingFor !== undefined,
    ...(reconnect.waitingFor !== undefined ? { pausedReason: reconnect.waitingFor } : {}),
    idle: !working && !wantsWork(),
    stats: { ...stats },
    ...(lastScan ? { lastScan } : {}),
  }));

  const wantsHistory = () => pollRequested || historyIdGreater(notifiedHistoryId, cursor);
  const wantsWork = () => wantsHistory() || fullScanDays !== undefined;

  /** Runs `fn`; on a revoked grant, pauses until reconnected (or the recheck interval) and returns false. */
  async function guarded(fn: () => Promise<void>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      const unusable = accountUnusable(err);
      if (!unusable) throw err;
      await reconnect.wait(`${unusable.type}: ${unusable.message}`);
      pollRequested = true;
      return false;
    }
  }

  async function gapRepair(): Promise<void> {
    const since =
      lastSyncedAt !== undefined
        ? lastSyncedAt - settings.gapRepairSlackMs
        : Date.now() - settings.gapRepairFallbackDays * DAY_MS;
    log.warn('history id expired: repairing the gap from an inbox listing', { accountId, since: new Date(since).toISOString() });
    const result = await acts.scanInbox({ accountId, sinceMs: since, resetCursor: true });
    lastScan = { kind: 'gap_repair', ...result };
    stats.gapRepairs++;
    cursor = result.historyId;
  }

  /** The mailbox went backwards: everything in it may be new to us, and our cursor is from another mailbox. */
  async function backwardsRepair(mailboxHistoryId: string, ours: string): Promise<void> {
    log.warn('mailbox history id behind the cursor: full inbox scan, cursor reset', { accountId, mailboxHistoryId, cursor: ours });
    const result = await acts.scanInbox({ accountId, sinceMs: Date.now() - settings.gapRepairFallbackDays * DAY_MS, resetCursor: true });
    lastScan = { kind: 'gap_repair', ...result };
    stats.gapRepairs++;
    cursor = result.historyId;
    notifiedHistoryId = undefined; // pushes of the mailbox we had are void
  }

  async function historyPass(): Promise<void> {
    const startedAt = Date.now();
    pollRequested = false;
    if (cursor === undefined) cursor = await acts.loadCursor({ accountId });
    for (;;) {
      const start: string = cursor ?? (await acts.loadCursor({ accountId }));
      const page: HistoryPageResult = await acts.syncHistoryPage({ accountId, startHistoryId: start, pageSize: settings.pageSize });
      if (page.kind === 'expired') {
        await gapRepair();
        continue; // then history from the fresh id: changes made during the repair
      }
      if (page.kind === 'behind') {
        await backwardsRepair(page.mailboxHistoryId, start);
        continue;
      }
      stats.pages++;
      stats.events += page.events;
      if (historyIdGreater(page.cursor, cursor)) cursor = page.cursor;
      if (!page.more) break;
    }
    stats.passes++;
    lastSyncedAt = startedAt;
  }

  async function fullScan(days: number): Promise<void> {
    const result = await acts.scanInbox({ accountId, sinceMs: Date.now() - days * DAY_MS, resetCursor: false });
    lastScan = { kind: 'full_scan', ...result };
    stats.fullScans++;
  }

  for (;;) {
    await condition(wantsWork);
    working = true;
    if (wantsHistory()) {
      if (!(await wake.run(() => guarded(historyPass)))) {
        working = false;
        continue;
      }
    }
    if (fullScanDays !== undefined) {
      const days = fullScanDays;
      if (await guarded(() => fullScan(days))) fullScanDays = undefined;
    }
    working = false;
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > settings.maxHistoryEvents) {
      await condition(allHandlersFinished);
      const next: SyncCarried = {
        ...(cursor !== undefined ? { cursor } : {}),
        ...(lastSyncedAt !== undefined ? { lastSyncedAt } : {}),
        ...(notifiedHistoryId !== undefined && historyIdGreater(notifiedHistoryId, cursor) ? { notifiedHistoryId } : {}),
        pollRequested,
        ...(fullScanDays !== undefined ? { fullScanDays } : {}),
        stats,
      };
      await continueAsNew<typeof syncWorkflow>({ accountId, ...(input.settings ? { settings: input.settings } : {}), carried: next });
    }
  }
}
