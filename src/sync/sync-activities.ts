// Activities of the sync workflow (main task queue): page history.list, turn records into thread
// events and deliver them through the ingest function, then persist the cursor. Also the inbox
// scan (gap repair and the hourly full scan) and the schedule fan-outs (poll, watch renewal).
import { Context, ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { MailboxAccounts } from '../accounts/mailbox-accounts.js';
import type { PrismaClient } from '../db/client.js';
import { ingestThreadEvent, learnAfterClose, requestTimer } from '../thread/ingest.js';
import { mayHoldCorrections } from '../learning/corrections.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { labelsToRead, recordLabelChanges, storedLabelsSince, storeLabels } from '../db/message-rows.js';
import { isNotInMailbox } from '../mail/mailbox-errors.js';
import { accountTimeSettings } from '../accounts/time-settings.js';
import { readTimerLabel, resolveWhen, TimeSpecError, type TimeDefaults, type TimerLabelPrefixes } from '../time/index.js';
import type { TimerRequest } from '../thread/contracts.js';
import { GmailAuthError } from '../gmail/errors.js';
import type { GmailService } from '../gmail/gmail-service.js';
import type { Mailbox, MailSearch } from '../mail/mailbox.js';
import { MailboxCursorExpiredError } from '../mail/mailbox-errors.js';
import type { HistoryRecord, MessageRef } from '../mail/message.js';
import type { QuotaLane, QuotaLimiter } from '../quota/limiter.js';
import { createLogger } from '../shared/log.js';
import { forEachLimited, historyToThreadEvents, timerLabelsAdded, type LabelRoles, type ThreadEvents, type UserLabels } from './history-events.js';
import { notifySync, requestFullScan, type SyncTarget } from './notify.js';
import { carriesCorrection, type LabelRole, type MailboxEvent, type ThreadSettings } from '../thread/contracts.js';
import { historyIdGreater, historyIdWentBackwards, type SyncActivities, type SyncFanoutActivities } from './contracts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { heartbeatingWhileRunning } from '../shared/activity-heartbeat.js';

export interface SyncActivityDeps {
  prisma: PrismaClient;
  accounts: MailboxAccounts;
  /** Client for the ingest function and the sync workflows. */
  client: Client;
  threadSettings: ThreadSettings;
  /** Where the sync workflows run (the main queue outside tests). */
  syncTaskQueue?: string;
  /** Where the thread workflows run (the main queue outside tests). */
  threadTaskQueue?: string;
  /** Pub/Sub topic for users.watch; without it there is no push and the schedules poll. */
  pushTopic?: string;
  /** Threads delivered in parallel within one page (events of one thread stay in order). */
  deliverConcurrency?: number;
  /** The shared per-account Gmail budget (src/quota); every sync call draws from it when given. */
  limiter?: QuotaLimiter;
  /** Limits the schedule fan-outs (poll, full scan, watch renewal) to these accounts: sharding, tests. */
  accountIds?: readonly string[];
  /** Timer labels a user sets in Gmail (`Snooze/Tomorrow`): their prefixes, and the time settings their times are read in. */
  timerLabels?: { prefixes: TimerLabelPrefixes; time: TimeDefaults };
  /**
   * Hand the threads the user's own label changes and moves back to the inbox, which they learn from
   * (LEARNING; src/thread/correction-steps.ts). Off: only our labels' changes reach them.
   */
  learnFromLabels?: boolean;
}

/** Labels the user adds to ask for something; we take them off once it is done. */
const REQUEST_ROLES: readonly LabelRole[] = ['done', 'rework', 'needsResponse'];
const LABEL_CACHE_MS = 60_000;
/** Stored messages whose labels one scan reads again at most (Gmail: 5 quota units each); the rest wait for the next scan. */
const MAX_RELABEL_READS = 2_000;
const log = createLogger('sync');

function heartbeat(details?: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // called outside an activity (tests of the functions themselves)
  }
}

/** The sync's activities heartbeat while they run: the sync workflow's heartbeat timeout is short (sync-run.ts). */
export function createSyncActivities(deps: SyncActivityDeps): SyncActivities & SyncFanoutActivities {
  return heartbeatingWhileRunning(syncActivitiesOf(deps));
}

function syncActivitiesOf(deps: SyncActivityDeps): SyncActivities & SyncFanoutActivities {
  const { prisma, accounts, client, threadSettings } = deps;
  const concurrency = deps.deliverConcurrency ?? 32;
  const target: SyncTarget = { client, ...(deps.syncTaskQueue ? { taskQueue: deps.syncTaskQueue } : {}) };
  const scoped = () => (deps.accountIds ? { id: { in: [...deps.accountIds] } } : {});
  type AccountLabels = { at: number; roles: LabelRoles; timerLabels: Map<string, string>; userLabels: UserLabels; known: Set<string> };
  const labelCache = new Map<string, AccountLabels>();
  // Labels of ours that are not roles: the kill switch and the approval draft's, never a correction.
  const actionLabels = new Set([threadSettings.actions?.pauseLabel, threadSettings.actions?.awaitingApprovalLabel].flatMap((n) => (n ? [n.toLowerCase()] : [])));

  /** One mailbox call of the account, through the shared quota budget; errors as they come. */
  function rawGmail<T>(accountId: string, method: string, fn: (g: Mailbox) => Promise<T>, lane: QuotaLane = 'live'): Promise<T> {
    const limiter = deps.limiter;
    return accounts.call(accountId, (g) => (limiter ? limiter.run(accountId, method, () => fn(g), undefined, lane) : fn(g)));
  }

  async function gmail<T>(accountId: string, method: string, fn: (g: Mailbox) => Promise<T>): Promise<T> {
    try {
      return await rawGmail(accountId, method, fn);
    } catch (err) {
      throw toActivityFailure(err);
    }
  }

  async function accountLabels(accountId: string): Promise<AccountLabels> {
    const cached = labelCache.get(accountId);
    if (cached && Date.now() - cached.at < LABEL_CACHE_MS) return cached;
    const labels = await gmail(accountId, 'labels.list', (g) => g.listLabels());
    const roles = new Map<string, LabelRole>();
    for (const [role, name] of Object.entries(threadSettings.labels) as [LabelRole, string][]) {
      const label = labels.find((l) => l.name === name) ?? labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
      if (label) roles.set(label.id, role);
    }
    const prefixes = deps.timerLabels?.prefixes;
    const timerLabels = new Map(prefixes ? labels.filter((l) => readTimerLabel(l.name, prefixes)).map((l) => [l.id, l.name] as const) : []);
    const userLabels = new Map(
      labels.filter((l) => l.type === 'user' && !roles.has(l.id) && !timerLabels.has(l.id) && !actionLabels.has(l.name.toLowerCase())).map((l) => [l.id, l.name] as const),
    );
    const entry = { at: Date.now(), roles, timerLabels, userLabels, known: new Set(labels.map((l) => l.id)) };
    labelCache.set(accountId, entry);
    return entry;
  }

  async function labelRoles(accountId: string): Promise<LabelRoles> {
    return (await accountLabels(accountId)).roles;
  }

  /** The account's labels, read again when the records name one made a moment ago (`Snooze/Friday` on a phone). */
  async function labelsFor(accountId: string, records: readonly HistoryRecord[]): Promise<AccountLabels> {
    const labels = await accountLabels(accountId);
    if (!records.some((r) => r.labelsAdded.some((l) => l.labelIds.some((id) => !labels.known.has(id))))) return labels;
    labelCache.delete(accountId);
    return accountLabels(accountId);
  }

  /**
   * Timer labels the user set (`Snooze/Tomorrow`, `Remind/3 days`, `Send/Tomorrow 8:00`): each is a
   * timer request to its thread, its time read in the account's zone now; the thread takes the label
   * off once the timer is set. A label whose time cannot be read stays on, with a warning.
   */
  async function deliverTimerLabels(accountId: string, records: readonly HistoryRecord[]): Promise<number> {
    const timers = deps.timerLabels;
    if (!timers) return 0;
    const { timerLabels } = await labelsFor(accountId, records);
    const added = timerLabelsAdded(records, new Set(timerLabels.keys()));
    if (added.length === 0) return 0;
    const settings = await accountTimeSettings(prisma, accountId, timers.time);
    if (!settings) return 0;
    for (const a of added) {
      const name = timerLabels.get(a.labelId)!;
      const read = readTimerLabel(name, timers.prefixes);
      if (!read || !('when' in read)) {
        log.warn(`account ${accountId}: ${read && 'problem' in read ? read.problem : `label ${name} is not a timer`}`);
        continue;
      }
      let at: number;
      try {
        at = resolveWhen(read.when, new Date(), settings).getTime();
      } catch (err) {
        if (!(err instanceof TimeSpecError)) throw err;
        log.warn(`account ${accountId}: label ${JSON.stringify(name)}: ${err.message}`);
        continue;
      }
      const request: TimerRequest = read.kind === 'snooze' ? { kind: 'snooze', at } : read.kind === 'remind' ? { kind: 'remind', at } : { kind: 'send_later', at };
      await requestTimer(client, {
        accountId,
        threadId: a.threadId,
        settings: threadSettings,
        event: { type: 'timer_request', requestId: a.changeId, request, by: 'label', label: name },
        ...(deps.threadTaskQueue ? { taskQueue: deps.threadTaskQueue } : {}),
      });
    }
    return added.length;
  }

  /** Every message the search finds, all pages (heartbeating the count); returns how many. */
  async function forEachListedMessage(accountId: string, query: MailSearch, visit: (message: MessageRef) => void): Promise<number> {
    let listed = 0;
    let pageToken: string | undefined;
    do {
      const token = pageToken;
      const page = await gmail(accountId, 'messages.list', (g) =>
        g.searchMessages({ ...query, maxResults: 500, ...(token ? { pageToken: token } : {}) }),
      );
      for (const m of page.messages) visit(m);
      listed += page.messages.length;
      pageToken = page.nextPageToken;
      heartbeat({ listed });
    } while (pageToken);
    return listed;
  }

  /**
   * What a gap repair hands over besides new mail:
   * - the labels the user adds to ask us for something (Done, Rework, Needs Response) stay on the
   *   thread until we have done it, so a thread carrying one now gets a `labels_changed` marked
   *   `reconcile`; the workflow acts only on labels still there when it gets to the event, so a
   *   request it handled meanwhile (and took the label off) is not handled twice;
   * - every drafted thread gets a `draft_gone` for its draft's message: the workflow reads the draft
   *   and only when it is gone looks for the user's reply (sent) or calls it discarded.
   */
  async function gapReconciliation(accountId: string, changeId: string): Promise<ThreadEvents[]> {
    const drafted = await prisma.thread.findMany({
      where: { accountId, state: 'drafted', draftMessageId: { not: null } },
      select: { gmailThreadId: true, draftMessageId: true },
    });
    const events = new Map<string, MailboxEvent[]>(
      drafted.map((t) => [t.gmailThreadId, [{ type: 'draft_gone', messageId: t.draftMessageId!, changeId }]]),
    );
    for (const request of await labelRequests(accountId, changeId)) {
      events.set(request.threadId, [...(events.get(request.threadId) ?? []), ...request.events]);
    }
    return [...events].map(([threadId, list]) => ({ threadId, events: list }));
  }

  async function labelRequests(accountId: string, changeId: string): Promise<ThreadEvents[]> {
    const byThread = new Map<string, { messageId: string; roles: Set<LabelRole> }>();
    for (const [labelId, role] of await labelRoles(accountId)) {
      if (!REQUEST_ROLES.includes(role)) continue;
      await forEachListedMessage(accountId, { labelId, in: 'ALL' }, (m) => {
        const entry = byThread.get(m.threadId) ?? { messageId: m.id, roles: new Set<LabelRole>() };
        entry.roles.add(role);
        byThread.set(m.threadId, entry);
      });
    }
    return [...byThread].map(([threadId, { messageId, roles }]) => {
      const added = [...roles].sort();
      return {
        threadId,
        events: [{ type: 'labels_changed', messageId, changeId: `${changeId}:${added.join('+')}`, added, removed: [], reconcile: true }],
      };
    });
  }

  async function deliver(accountId: string, threads: ThreadEvents[]): Promise<number> {
    let delivered = 0;
    await forEachLimited(threads, concurrency, async ({ threadId, events }) => {
      for (const event of events) {
        const target = { accountId, threadId, settings: threadSettings, ...(deps.threadTaskQueue ? { taskQueue: deps.threadTaskQueue } : {}) };
        const outcome = await ingestThreadEvent(client, { ...target, event });
        // The thread's workflow has ended (Done, sent, idle): what the user corrected is still learned from.
        if (outcome === 'ignored_closed' && carriesCorrection(event) && (await mayHoldCorrections(prismaExecutor(prisma), accountId, threadId))) {
          await learnAfterClose(client, { ...target, event });
        }
        delivered++;
      }
      heartbeat({ delivered });
    });
    return delivered;
  }

  /**
   * The labels of the stored messages of the scan's window (the `messages` rows: the senders view,
   * the backfill's handoff) brought up to date with the mailbox, whatever happened while its changes
   * were out of sight (an expired history, a gap, changes before the sync ran). The mailbox's inbox
   * (listed by the scan already) and its unread mail of the window are listed; each stored message
   * whose INBOX or UNREAD disagrees is read (its labels only matter), and its row gets the labels it
   * has now; a message no longer in the mailbox keeps its row. Provider-neutral (Mailbox). Returns
   * how many rows changed. Changes made during the scan come after the scan's history id, and the
   * history pages that carry them write the rows again.
   */
  async function refreshStoredLabels(accountId: string, sinceMs: number, inInbox: ReadonlySet<string>): Promise<number> {
    const db = prismaExecutor(prisma);
    // Gmail's after: is to the second (inclusive or not): the rows compared start a minute later than the listings.
    const rows = await storedLabelsSince(db, accountId, Math.max(0, sinceMs) + 60_000);
    if (rows.length === 0) return 0;
    const unread = new Set<string>();
    await forEachListedMessage(accountId, { in: 'ANYWHERE', unread: true, since: new Date(Math.max(0, sinceMs)) }, (m) => unread.add(m.id));
    const toRead = labelsToRead(rows, { inbox: inInbox, unread });
    if (toRead.length > MAX_RELABEL_READS) log.warn(`account ${accountId}: ${toRead.length} stored messages' labels differ from the mailbox's; ${MAX_RELABEL_READS} read this scan, the rest at the next`);
    const now: { gmail_id: string; label_ids: string[] }[] = [];
    await forEachLimited(toRead.slice(0, MAX_RELABEL_READS), 4, async (id) => {
      try {
        // Background work: the bulk lane, so live mail keeps its slots first.
        const message = await rawGmail(accountId, 'messages.get', (g) => g.getMessage(id, 'metadata'), 'bulk');
        now.push({ gmail_id: id, label_ids: message.labelIds });
      } catch (err) {
        if (!isNotInMailbox(err)) throw toActivityFailure(err);
      }
      heartbeat({ relabelled: now.length });
    });
    return storeLabels(db, accountId, now);
  }

  /** Persists the cursor, never moving it backwards. */
  /** `changed`: the mailbox had changes; the health endpoint compares their time with the last push's. */
  async function saveCursor(accountId: string, historyId: string, force = false, changed = false): Promise<void> {
    const account = await prisma.account.findUniqueOrThrow({ where: { id: accountId }, select: { historyId: true } });
    const forward = force || historyIdGreater(historyId, account.historyId ?? undefined);
    if (forward || changed) {
      await prisma.account.update({ where: { id: accountId }, data: { ...(forward ? { historyId } : {}), ...(changed ? { lastHistoryAt: new Date() } : {}) } });
    }
  }

  return {
    async loadCursor({ accountId }) {
      const account = await prisma.account.findUniqueOrThrow({ where: { id: accountId }, select: { historyId: true } });
      if (account.historyId) return account.historyId;
      const profile = await gmail(accountId, 'getProfile', (g) => g.getProfile());
      await saveCursor(accountId, profile.historyId);
      return profile.historyId;
    },

    async syncHistoryPage({ accountId, startHistoryId, pageSize }) {
      let page;
      try {
        page = await rawGmail(accountId, 'history.list', (g) => g.listChanges({ cursor: startHistoryId, pageSize }));
      } catch (err) {
        if (err instanceof MailboxCursorExpiredError) {
          log.warn(`the change cursor of account ${accountId} expired (${err.message}): gap repair`);
          return { kind: 'expired' };
        }
        throw toActivityFailure(err);
      }
      if (page.records.length === 0 && historyIdWentBackwards(page.historyId, startHistoryId)) {
        // history.list from the cursor would stay empty for good: the workflow repairs with a full scan.
        log.warn(`account ${accountId}: the mailbox's history id ${page.historyId} is behind our cursor ${startHistoryId} (restored or replaced mailbox): full inbox scan`);
        return { kind: 'behind', mailboxHistoryId: page.historyId };
      }
      let threads: ThreadEvents[] = [];
      if (page.records.length > 0) {
        // Labels of stored messages kept current (the senders view's unread share): one statement per page.
        await recordLabelChanges(prismaExecutor(prisma), accountId, page.records);
        const labels = await labelsFor(accountId, page.records);
        threads = historyToThreadEvents(page.records, labels.roles, deps.learnFromLabels ? labels.userLabels : undefined);
      }
      const events = (await deliver(accountId, threads)) + (page.records.length > 0 ? await deliverTimerLabels(accountId, page.records) : 0);
      const more = page.nextPageToken !== undefined && page.records.length > 0;
      // Within a listing the next page starts after the last record we delivered; after the last
      // page, the mailbox's current id (nothing between the last record and it concerns us).
      const next = more ? page.records[page.records.length - 1]!.id : page.historyId || startHistoryId;
      const cursor = historyIdGreater(next, startHistoryId) ? next : startHistoryId;
      await saveCursor(accountId, cursor, false, page.records.length > 0);
      return { kind: 'page', cursor, more, records: page.records.length, events };
    },

    async scanInbox({ accountId, sinceMs, resetCursor }) {
      // The fresh id comes first: anything that changes while we list shows up in history after it.
      const profile = await gmail(accountId, 'getProfile', (g) => g.getProfile());
      const newestByThread = new Map<string, string>();
      const inInbox = new Set<string>();
      const listed = await forEachListedMessage(accountId, { in: 'INBOX', since: new Date(Math.max(0, sinceMs)) }, (m) => {
        // messages.list answers newest first: the first message seen is the thread's newest.
        if (!newestByThread.has(m.threadId)) newestByThread.set(m.threadId, m.id);
        inInbox.add(m.id);
      });

      const threadIds = [...newestByThread.keys()];
      const known = new Map<string, string | null>();
      for (let i = 0; i < threadIds.length; i += 1000) {
        const rows = await prisma.thread.findMany({
          where: { accountId, gmailThreadId: { in: threadIds.slice(i, i + 1000) } },
          select: { gmailThreadId: true, lastMessageId: true },
        });
        for (const row of rows) known.set(row.gmailThreadId, row.lastMessageId);
      }
      // A thread whose newest inbox message was already handled is known; the rest get their newest
      // message (a running thread workflow ignores an event it has seen).
      const todo: ThreadEvents[] = [];
      for (const [threadId, messageId] of newestByThread) {
        if (known.get(threadId) === messageId) continue;
        todo.push({ threadId, events: [{ type: 'message_added', messageId, labelIds: ['INBOX'] }] });
      }
      const ingested = await deliver(accountId, todo);
      // History of the gap is lost: label changes, sent and deleted drafts included. Handed over
      // after the new mail, so a thread sees its new message first.
      const reconciled = resetCursor ? await deliver(accountId, await gapReconciliation(accountId, `repair:${profile.historyId}`)) : 0;
      const relabelled = await refreshStoredLabels(accountId, sinceMs, inInbox);
      if (resetCursor) await saveCursor(accountId, profile.historyId, true);
      log.info(
        `inbox scan of account ${accountId}: ${listed} messages, ${newestByThread.size} threads, ${ingested} handed over` +
          (resetCursor ? `, ${reconciled} events to reconcile drafts and label requests` : '') +
          `, labels of ${relabelled} stored messages brought up to date`,
      );
      return {
        historyId: profile.historyId,
        listed,
        threads: newestByThread.size,
        ingested,
        ...(resetCursor ? { reconciled } : {}),
        relabelled,
      };
    },

    async notifyActiveAccounts({ kind, days }) {
      const active = await prisma.account.findMany({ where: { status: 'active', ...scoped() }, select: { id: true } });
      for (const { id } of active) {
        if (kind === 'full_scan') await requestFullScan(target, id, { days: days ?? 10 });
        else await notifySync(target, id, { source: 'poll' });
        heartbeat();
      }
      return { accounts: active.length };
    },

    async renewWatches({ renewWithinMs }) {
      // Only the Gmail API pushes through a watch; an IMAP account's changes come by IDLE or the poll.
      const active = await prisma.account.findMany({
        where: { status: 'active', provider: 'gmail', ...scoped() },
        select: { id: true, watchExpiration: true },
      });
      const topic = deps.pushTopic;
      if (!topic) {
        log.warn('GMAIL_PUSH_TOPIC is not set: no Gmail watch, mail arrives through the fallback poll only');
        return { renewed: 0, failed: 0, skipped: active.length };
      }
      let renewed = 0;
      let failed = 0;
      let skipped = 0;
      let lastError: unknown;
      for (const account of active) {
        if (account.watchExpiration && account.watchExpiration.getTime() > Date.now() + renewWithinMs) {
          skipped++;
          continue;
        }
        try {
          await renewWatch({ prisma, accounts, ...(deps.limiter ? { limiter: deps.limiter } : {}) }, account.id, topic);
          renewed++;
        } catch (err) {
          // A revoked grant already marked the account needs_reauth; other failures are retried.
          if (!(err instanceof GmailAuthError && err.revoked)) {
            failed++;
            lastError = err;
          }
          log.warn(`watch renewal of account ${account.id} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
        heartbeat({ renewed, failed });
      }
      if (failed > 0) {
        throw ApplicationFailure.create({
          type: 'WatchRenewalFailed',
          message: `${failed} watch renewal(s) failed, last: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
        });
      }
      return { renewed, failed, skipped };
    },
  };
}

/** users.watch for one account and the new expiration saved. Throws the Gmail error as is. */
export async function renewWatch(
  deps: Pick<SyncActivityDeps, 'prisma' | 'accounts' | 'limiter'>,
  accountId: string,
  topicName: string,
): Promise<{ historyId: string; expiration: number }> {
  const limiter = deps.limiter;
  const watch = (g: GmailService) => g.watch({ topicName });
  const result = await deps.accounts.gmail.call(accountId, (g) => (limiter ? limiter.run(accountId, 'watch', () => watch(g)) : watch(g)));
  await deps.prisma.account.update({ where: { id: accountId }, data: { watchExpiration: new Date(result.expiration) } });
  return result;
}
