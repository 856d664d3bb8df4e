// Backfill and archiver activities that read and change the account's mailbox (task queue
// durable-inbox-gmail), whichever provider serves it: every call goes through the Mailbox boundary
// (src/mail/mailbox.ts), metered by the access the worker gives them (Gmail: the shared quota limiter;
// IMAP: the backfill's own connections and limiter), in the bulk lane. Throttles wait out Retry-After
// inside the activity (they are not failures); real failures of single messages are retried by
// Temporal (the heartbeat remembers what is already stored) and, when they persist, handed back to
// the workflow to split and isolate.
import { activityInfo, ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { needsReconnect, toActivityFailure } from '../accounts/mailbox-failures.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { GmailRateLimitError } from '../gmail/errors.js';
import type { Mailbox } from '../mail/mailbox.js';
import { isNotInMailbox } from '../mail/mailbox-errors.js';
import type { ThreadMessage } from '../mail/message.js';
import { backfillMessages } from '../metrics/metrics.js';
import { createLogger } from '../shared/log.js';
import {
  BATCH_FAILED_TYPE,
  type ArchiveBatchInput,
  type ArchiveBatchResult,
  type BackfillMailActivities,
  type BatchFailureDetails,
  type BatchStoredCounts,
  type ListSliceInput,
  type ListSliceResult,
  type PlanInput,
  type PlanResult,
  type StoreBatchInput,
  type StoreBatchResult,
} from './activity-contracts.js';
import { markArchived, selectArchivable, upsertMessages } from './message-store.js';
import { toMessageRow, type MessageRow } from '../db/message-rows.js';
import { DAY_MS } from './slicing.js';

const log = createLogger('backfill');

export interface BackfillMailDeps {
  /** The accounts' mailboxes, every call metered under the account's budget in the bulk lane (src/workers/mailbox-access.ts). */
  accounts: MailboxAccess;
  /** Messages a batch reads at once (the limiter's in-flight slots bound them per account and process). */
  concurrency: number;
  db: SqlExecutor;
  /** Ids per listing page (default 500, Gmail's maximum). */
  pageSize?: number;
  /** Rows per upsert statement (default 100). */
  upsertChunk?: number;
  /** Local retries of a failing (non-throttle) fetch within one attempt (default 1). */
  fetchRetries?: number;
  /** Throttles of one message tolerated within one attempt before it counts as failed (default 50). */
  maxThrottleWaits?: number;
  /** Rows are written at least this often, even short of a full chunk (default 5000 ms). */
  flushEveryMs?: number;
}

interface BatchProgress {
  /** One character per id: '1' done (stored or gone), '0' not yet. */
  done: string;
  stored: number;
  inserted: number;
  gone: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A batch's account-fatal error (needsReconnect), final, with what the batch stored before it; its type as the account's failures have it. */
function accountFailure(err: Error, counts: BatchStoredCounts): ApplicationFailure {
  const failure = toActivityFailure(err);
  const type = failure instanceof ApplicationFailure && failure.type ? failure.type : err.name;
  return ApplicationFailure.create({ type, message: err.message, nonRetryable: true, details: [counts] });
}

export function createBackfillMailActivities(deps: BackfillMailDeps): BackfillMailActivities {
  const { accounts, db } = deps;
  const pageSize = deps.pageSize ?? 500;
  const upsertChunk = deps.upsertChunk ?? 100;
  const fetchRetries = deps.fetchRetries ?? 1;
  const maxThrottleWaits = deps.maxThrottleWaits ?? 50;
  const flushEveryMs = deps.flushEveryMs ?? 5000;

  /** One call on the account's mailbox (metered by `accounts`); throttles are waited out here. */
  async function mailCall<T>(accountId: string, fn: (mailbox: Mailbox) => Promise<T>, signal: AbortSignal): Promise<T> {
    for (let waits = 0; ; waits++) {
      try {
        return await accounts.call(accountId, (mailbox) => fn(mailbox));
      } catch (err) {
        if (!(err instanceof GmailRateLimitError) || waits >= maxThrottleWaits) throw err;
        await sleep(err.retryAfterMs, signal);
      }
    }
  }

  const signal = () => Context.current().cancellationSignal;

  return {
    async backfillPlan(input: PlanInput): Promise<PlanResult> {
      const s = signal();
      try {
        const messagesTotal = await mailCall(input.accountId, (m) => m.countMessages(), s);
        const rangeEnd = input.rangeEnd ?? Date.now();
        let rangeStart = input.rangeStart;
        if (rangeStart === undefined) {
          // The day of the oldest message (the provider finds it: Gmail by bisection, IMAP from its dates).
          const oldest = await mailCall(input.accountId, (m) => m.oldestReceived(rangeEnd), s);
          rangeStart = oldest === undefined ? rangeEnd : Math.floor(oldest / DAY_MS) * DAY_MS;
        }
        return { messagesTotal, rangeStart: Math.min(rangeStart, rangeEnd), rangeEnd };
      } catch (err) {
        throw toActivityFailure(err);
      }
    },

    async backfillListSlice(input: ListSliceInput): Promise<ListSliceResult> {
      const s = signal();
      // Widened by the overlap on both sides: a provider whose bounds are not exact (Gmail's) misses nothing.
      const after = Math.max(0, input.start - input.overlapMs);
      const before = input.end + input.overlapMs;
      const seen = new Set<string>();
      let pageToken: string | undefined;
      let pages = 0;
      try {
        do {
          const token = pageToken;
          const page = await mailCall(input.accountId, (m) => m.listReceived({ after, before, pageSize, ...(token ? { pageToken: token } : {}) }), s);
          pages++;
          for (const id of page.ids) seen.add(id);
          pageToken = page.nextPageToken;
          heartbeat({ pages });
          if (pageToken && input.maxPages > 0 && pages >= input.maxPages) return { tooDeep: true, pages };
        } while (pageToken);
      } catch (err) {
        throw toActivityFailure(err);
      }
      // Oldest first is not knowable from ids; a stable order keeps batches deterministic.
      return { tooDeep: false, ids: [...seen] };
    },

    async backfillStoreBatch(input: StoreBatchInput): Promise<StoreBatchResult> {
      const s = signal();
      const { accountId, ids } = input;
      const previous = activityInfo().heartbeatDetails as BatchProgress | undefined;
      const progress: BatchProgress =
        previous && previous.done?.length === ids.length ? { ...previous } : { done: '0'.repeat(ids.length), stored: 0, inserted: 0, gone: 0 };
      const done = progress.done.split('');
      const failures = new Map<string, string>();
      let fatal: Error | undefined;

      let buffer: { index: number; row: MessageRow }[] = [];
      let writing: Promise<void> = Promise.resolve();
      const flush = () => {
        const chunk = buffer;
        buffer = [];
        if (chunk.length === 0) return writing;
        writing = writing.then(async () => {
          try {
            const inserted = await upsertMessages(db, accountId, chunk.map((c) => c.row));
            for (const c of chunk) done[c.index] = '1';
            progress.stored += chunk.length;
            progress.inserted += inserted;
            backfillMessages.inc({ result: 'stored' }, chunk.length);
            backfillMessages.inc({ result: 'inserted' }, inserted);
          } catch (err) {
            // A chunk that cannot be written fails as a whole: its ids stay pending; after the
            // retries the workflow splits them until the culprit stands alone.
            for (const c of chunk) failures.set(ids[c.index]!, `store: ${(err as Error).message}`);
          }
          progress.done = done.join('');
          heartbeat(progress);
        });
        return writing;
      };

      const fetchOne = async (id: string): Promise<ThreadMessage | 'gone'> => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await mailCall(accountId, (m) => m.getMessage(id, input.format), s);
          } catch (err) {
            if (isNotInMailbox(err)) return 'gone';
            if (needsReconnect(err) || s.aborted || attempt >= fetchRetries) throw err;
            await sleep(250 * 2 ** attempt, s);
          }
        }
      };

      const pending = ids.map((_, i) => i).filter((i) => done[i] !== '1');
      let next = 0;
      // Liveness: under a slow quota a batch can take minutes between flushes; heartbeat anyway,
      // so a dead worker is noticed and a cancelled attempt stops instead of spending quota.
      const beat = setInterval(() => heartbeat(progress), 5000);
      let lastFlush = Date.now();
      const lanes = Math.max(1, deps.concurrency);
      await Promise.all(
        Array.from({ length: Math.min(lanes, pending.length) }, async () => {
          // (lanes wait on the limiter's per-account slots; see QuotaLimiter.run)
          while (next < pending.length && fatal === undefined && !s.aborted) {
            const index = pending[next++]!;
            const id = ids[index]!;
            try {
              const message = await fetchOne(id);
              if (message === 'gone') {
                done[index] = '1';
                progress.gone++;
                backfillMessages.inc({ result: 'gone' });
              } else {
                buffer.push({ index, row: toMessageRow(message) });
                // Every 100 rows, or every few seconds: what is stored survives a retry.
                if (buffer.length >= upsertChunk || Date.now() - lastFlush > flushEveryMs) {
                  lastFlush = Date.now();
                  await flush();
                }
              }
            } catch (err) {
              if (needsReconnect(err)) fatal = err;
              else if (!s.aborted) failures.set(id, `fetch: ${(err as Error).message}`);
            }
          }
        }),
      );
      try {
        await flush();
      } finally {
        clearInterval(beat);
      }
      // The account stopped working: the slice counts what was stored (it is in Postgres) and the backfill waits.
      if (fatal !== undefined) throw accountFailure(fatal, { stored: progress.stored, inserted: progress.inserted, gone: progress.gone });
      if (s.aborted) throw s.reason;
      const remaining = ids.filter((_, i) => done[i] !== '1');
      if (remaining.length > 0) {
        const reasons: Record<string, string> = {};
        for (const id of remaining) reasons[id] = failures.get(id) ?? 'not processed';
        const details: BatchFailureDetails = { remaining, reasons, stored: progress.stored, inserted: progress.inserted, gone: progress.gone };
        log.warn(`batch of ${ids.length}: ${remaining.length} still failing (attempt ${activityInfo().attempt})`, { accountId });
        throw ApplicationFailure.create({ type: BATCH_FAILED_TYPE, message: `${remaining.length} of ${ids.length} messages failed`, details: [details] });
      }
      return { stored: progress.stored, inserted: progress.inserted, gone: progress.gone };
    },

    async archiveBatch(input: ArchiveBatchInput): Promise<ArchiveBatchResult> {
      const s = signal();
      // The watermark is read again for every batch: the archiver never runs ahead of it.
      const { ids, watermark } = await selectArchivable(db, input.accountId, input.afterId, Math.min(1000, input.limit));
      if (input.dryRun || ids.length === 0) return { ids, watermark };
      try {
        const change = input.trash ? { add: ['TRASH'], remove: ['INBOX'] } : { remove: ['INBOX'] };
        await mailCall(input.accountId, (m) => m.batchModify(ids, change), s);
      } catch (err) {
        throw toActivityFailure(err);
      }
      await markArchived(db, input.accountId, ids, input.trash);
      return { ids, watermark };
    },
  };
}
