// Optional end of a backfill: hand the last N days of backfilled inbox mail to the thread
// workflows (classification and drafts), as if the sync worker had just seen each thread's newest
// inbox message. Off by default (BackfillOptions.handToThreadsDays). With a Message Batch
// (classifyInBatch), a thread it classified gets the verdict with the event. Task queue durable-inbox.
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

/** The threads a hand-over hands over: each one's newest stored inbox message since `sinceMs`, oldest thread first. */
export function recentInboxThreads(db: SqlExecutor, accountId: string, sinceMs: number): Promise<RecentInboxThread[]> {
  return db.query<RecentInboxThread>(
    `SELECT gmail_thread_id, gmail_id, label_ids FROM (
       SELECT DISTINCT ON (gmail_thread_id) gmail_thread_id, gmail_id, label_ids, internal_date FROM messages
       WHERE account_id = $1 AND internal_date >= to_timestamp($2::float8 / 1000.0) AND 'INBOX' = ANY(label_ids) AND archived_at IS NULL
       ORDER BY gmail_thread_id, internal_date DESC, gmail_id DESC) t
     ORDER BY internal_date, gmail_thread_id`,
    [accountId, sinceMs],
  );
}

/** The verdicts a batch decided, by thread. */
async function batchedVerdicts(db: SqlExecutor, batchKey: string): Promise<Map<string, BatchedClassification>> {
  const rows = await db.query<{ thread_id: string; message_id: string; batch_id: string; classification: Omit<BatchedClassification, 'messageId' | 'batchId'> }>(
    `SELECT r.thread_id, r.message_id, b.batch_id, r.classification FROM llm_batch_requests r JOIN llm_batches b USING (batch_key)
     WHERE r.batch_key = $1 AND r.result_type = 'succeeded' AND r.classification IS NOT NULL AND b.batch_id IS NOT NULL`,
    [batchKey],
  );
  return new Map(rows.map((r) => [r.thread_id, { ...r.classification, messageId: r.message_id, batchId: r.batch_id }]));
}

export function createBackfillHandoffActivities(deps: BackfillHandoffDeps): BackfillHandoffActivities {
  return {
    async backfillHandToThreads(input: HandoffInput): Promise<HandoffResult> {
      const rows = await recentInboxThreads(deps.db, input.accountId, input.sinceMs);
      const verdicts = input.batchKey ? await batchedVerdicts(deps.db, input.batchKey) : new Map<string, BatchedClassification>();
      const resumeAt = (activityInfo().heartbeatDetails as number | undefined) ?? 0;
      const client = await deps.client();
      let classified = 0;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const verdict = verdicts.get(row.gmail_thread_id);
        if (verdict) classified++;
        if (i < resumeAt) continue;
        const event: MessageAddedEvent = { type: 'message_added', messageId: row.gmail_id, labelIds: row.label_ids, ...(verdict ? { classified: verdict } : {}) };
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
      return input.batchKey ? { threads: rows.length, classified } : { threads: rows.length };
    },
  };
}
