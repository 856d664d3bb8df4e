// Backfill and archiver activities that talk to Gmail (task queue durable-inbox-gmail). Every
// Gmail call goes through the shared quota limiter (src/quota): one budget per account across all
// worker processes. Throttles wait out Retry-After inside the activity (they are not failures);
// real failures of single messages are retried by Temporal (the heartbeat remembers what is
// already stored) and, when they persist, handed back to the workflow to split and isolate.
import { activityInfo, ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import type { GmailAccounts } from '../accounts/gmail-accounts.js';
import { AccountNotConnectedError } from '../accounts/gmail-accounts.js';
import type { QuotaLimiter } from '../quota/limiter.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { GmailAuthError, GmailNotFoundError, GmailRateLimitError } from '../gmail/errors.js';
import type { GmailService } from '../gmail/gmail-service.js';
import type { ThreadMessage } from '../mail/message.js';
import { createLogger } from '../shared/log.js';
import {
  BATCH_FAILED_TYPE,
  type ArchiveBatchInput,
  type ArchiveBatchResult,
  type BackfillGmailActivities,
  type BatchFailureDetails,
  type BatchStoredCounts,
  type ListSliceInput,
  type ListSliceResult,
  type PlanInput,
  type PlanResult,
  type StoreBatchInput,
  type StoreBatchResult,
} from './activity-contracts.js';
import { markArchived, selectArchivable, toMessageRow, upsertMessages, type MessageRow } from './message-store.js';
import { sliceQuery, DAY_MS } from './slicing.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { backfillMessages } from '../metrics/metrics.js';

const log = createLogger('backfill');

export interface BackfillGmailDeps {
  accounts: GmailAccounts;
  limiter: QuotaLimiter;
  db: SqlExecutor;
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

const isAccountFatal = (err: unknown): err is AccountNotConnectedError | GmailAuthError =>
  err instanceof AccountNotConnectedError || (err instanceof GmailAuthError && !err.retryable);

/** A batch's account-fatal error (isAccountFatal), final, with what the batch stored before it. */
function accountFailure(err: Error, counts: BatchStoredCounts): ApplicationFailure {
  return ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true, details: [counts] });
}

export function createBackfillGmailActivities(deps: BackfillGmailDeps): BackfillGmailActivities {
  const { accounts, limiter, db } = deps;
  const upsertChunk = deps.upsertChunk ?? 100;
  const fetchRetries = deps.fetchRetries ?? 1;
  const maxThrottleWaits = deps.maxThrottleWaits ?? 50;
  const flushEveryMs = deps.flushEveryMs ?? 5000;

  /** One Gmail call under the account's budget; throttles are waited out here. */
  async function gmailCall<T>(accountId: string, method: string, fn: (gmail: GmailService) => Promise<T>, signal: AbortSignal): Promise<T> {
    for (let waits = 0; ; waits++) {
      try {
        return await accounts.call(accountId, (gmail) => limiter.run(accountId, method, () => fn(gmail), signal, 'bulk'));
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
        const profile = await gmailCall(input.accountId, 'getProfile', (g) => g.getProfile(), s);
        const rangeEnd = input.rangeEnd ?? Date.now();
        let rangeStart = input.rangeStart;
        if (rangeStart === undefined) {
          // The oldest message, to the day, by bisection on `before:` (Gmail lists newest first
          // and has no "oldest" order): ~15 one-result list calls instead of paging the mailbox.
          const any = async (beforeMs: number) =>
            (
              await gmailCall(input.accountId, 'messages.list', (g) => g.listMessages({ q: `before:${Math.floor(beforeMs / 1000)}`, maxResults: 1 }), s)
            ).messages.length > 0;
          let lo = 0; // day index: nothing before lo*DAY
          let hi = Math.ceil(rangeEnd / DAY_MS); // something before hi*DAY, if anything at all
          if (!(await any(hi * DAY_MS))) {
            rangeStart = rangeEnd;
          } else {
            while (hi - lo > 1) {
              const mid = Math.floor((lo + hi) / 2);
              if (await any(mid * DAY_MS)) hi = mid;
              else lo = mid;
            }
            rangeStart = lo * DAY_MS;
          }
        }
        return { messagesTotal: profile.messagesTotal, rangeStart: Math.min(rangeStart, rangeEnd), rangeEnd };
      } catch (err) {
        throw toActivityFailure(err);
      }
    },

    async backfillListSlice(input: ListSliceInput): Promise<ListSliceResult> {
      const s = signal();
      const q = sliceQuery(input.start, input.end, input.overlapMs);
      const seen = new Set<string>();
      let pageToken: string | undefined;
      let pages = 0;
      try {
        do {
          const page = await gmailCall(
            input.accountId,
            'messages.list',
            (g) => g.listMessages({ q, maxResults: 500, ...(pageToken ? { pageToken } : {}) }),
            s,
          );
          pages++;
          for (const m of page.messages) seen.add(m.id);
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
            return await gmailCall(accountId, 'messages.get', (g) => g.getMessage(id, input.format), s);
          } catch (err) {
            if (err instanceof GmailNotFoundError) return 'gone';
            if (isAccountFatal(err) || s.aborted || attempt >= fetchRetries) throw err;
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
      const lanes = Math.max(1, limiter.options.maxConcurrency);
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
              if (isAccountFatal(err)) fatal = err;
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
        await gmailCall(input.accountId, 'messages.batchModify', (g) => g.batchModify(ids, change), s);
      } catch (err) {
        throw toActivityFailure(err);
      }
      await markArchived(db, input.accountId, ids, input.trash);
      return { ids, watermark };
    },
  };
}
