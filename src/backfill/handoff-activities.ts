// Optional end of a backfill: hand the last N days of backfilled inbox mail to the thread
// workflows (classification and drafts), as if the sync worker had just seen each thread's newest
// inbox message. Off by default (BackfillOptions.handToThreadsDays). With a Message Batch
// (classifyInBatch), a thread it classified gets the verdict with the event. The workflow asks for
// one page of threads at a time (handOverPageSize), each page's verdicts read with it; once all are
// handed, the batch's request rows are deleted (the decision log keeps each verdict). Task queue durable-inbox.
import { activityInfo, heartbeat } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ingestThreadEvent } from '../thread/ingest.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { BatchedClassification, MessageAddedEvent, ThreadSettings } from '../thread/contracts.js';
import type { BackfillHandoffActivities, HandoffInput, HandoffResult } from './activity-contracts.js';

export interface BackfillHandoffDeps {
  db: SqlExecutor;
  client: () => Promise<Client>;
  settings: ThreadSettings;
  /** The thread workflows' task queue. */
  taskQueue: string;
}

export type RecentInboxThread = {
  gmail_thread_id: string;
  gmail_id: string;
  label_ids: string[];
};

/** Each thread's newest stored inbox message since $2 (epoch ms), for account $1. */
const RECENT_INBOX_THREADS = `
  SELECT DISTINCT ON (gmail_thread_id) gmail_thread_id, gmail_id, label_ids, internal_date FROM messages
  WHERE account_id = $1 AND internal_date >= to_timestamp($2::float8 / 1000.0) AND 'INBOX' = ANY(label_ids) AND archived_at IS NULL
  ORDER BY gmail_thread_id, internal_date DESC, gmail_id DESC`;

/** The threads a hand-over hands over: each one's newest stored inbox message since `sinceMs`, oldest thread first. */
export function recentInboxThreads(db: SqlExecutor, accountId: string, sinceMs: number): Promise<RecentInboxThread[]> {
  return db.query<RecentInboxThread>(
    `SELECT gmail_thread_id, gmail_id, label_ids FROM (${RECENT_INBOX_THREADS}) t ORDER BY internal_date, gmail_thread_id`,
    [accountId, sinceMs],
  );
}

type PageRow = RecentInboxThread & {
  at_ms: number;
  /** The batch's verdict on the thread, if it decided one. */
  verdict: BatchedClassification | null;
};

/**
 * A page of the hand-over: up to `limit` threads after `after`, in the order of recentInboxThreads,
 * each with the verdict the batch decided on it (its request row joined here, so only a page of
 * verdicts is ever read at once). One row more than asked says whether a next page follows.
 */
function threadsPage(db: SqlExecutor, input: HandoffInput): Promise<PageRow[]> {
  const { accountId, sinceMs, batchKey, after, limit } = input;
  return db.query<PageRow>(
    `SELECT t.gmail_thread_id, t.gmail_id, t.label_ids, (extract(epoch FROM t.internal_date) * 1000)::float8 AS at_ms, v.verdict
     FROM (${RECENT_INBOX_THREADS}) t
     LEFT JOIN LATERAL (
       SELECT r.classification || jsonb_build_object('messageId', r.message_id, 'batchId', b.batch_id) AS verdict
       FROM llm_batch_requests r JOIN llm_batches b USING (batch_key)
       WHERE r.batch_key = $3 AND r.thread_id = t.gmail_thread_id AND r.result_type = 'succeeded' AND r.classification IS NOT NULL AND b.batch_id IS NOT NULL
       ORDER BY r.custom_id LIMIT 1) v ON true
     WHERE $4::timestamptz IS NULL OR (t.internal_date, t.gmail_thread_id) > ($4::timestamptz, $5::text)
     ORDER BY t.internal_date, t.gmail_thread_id
     LIMIT $6`,
    [accountId, sinceMs, batchKey ?? null, after ? new Date(after.atMs).toISOString() : null, after?.threadId ?? null, limit === undefined ? null : limit + 1],
  );
}

export function createBackfillHandoffActivities(deps: BackfillHandoffDeps): BackfillHandoffActivities {
  return {
    async backfillHandToThreads(input: HandoffInput): Promise<HandoffResult> {
      const found = await threadsPage(deps.db, input);
      const more = input.limit !== undefined && found.length > input.limit;
      const rows = more ? found.slice(0, input.limit) : found;
      // Within the page, a retry resumes after the threads it heartbeated; one handed twice (its heartbeat
      // lost) is a redelivery its workflow ignores (the message is among the ones it handled).
      const resumeAt = (activityInfo().heartbeatDetails as number | undefined) ?? 0;
      const client = await deps.client();
      let classified = 0;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const classifiedBy = row.verdict ?? undefined;
        if (classifiedBy) classified++;
        if (i < resumeAt) continue;
        const event: MessageAddedEvent = { type: 'message_added', messageId: row.gmail_id, labelIds: row.label_ids, ...(classifiedBy ? { classified: classifiedBy } : {}) };
        await ingestThreadEvent(client, {
          accountId: input.accountId,
          threadId: row.gmail_thread_id,
          event,
          settings: deps.settings,
          taskQueue: deps.taskQueue,
          work: 'handoff',
        });
        heartbeat(i + 1);
      }
      const last = rows.at(-1);
      return {
        threads: rows.length,
        ...(input.batchKey ? { classified } : {}),
        ...(more && last ? { next: { atMs: last.at_ms, threadId: last.gmail_thread_id } } : {}),
      };
    },

    async backfillForgetBatchRequests({ batchKey }) {
      const [deleted] = await deps.db.query<{ n: number }>(
        `WITH gone AS (DELETE FROM llm_batch_requests WHERE batch_key = $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        [batchKey],
      );
      return deleted?.n ?? 0;
    },
  };
}
