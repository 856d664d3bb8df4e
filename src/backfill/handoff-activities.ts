// Optional end of a backfill: hand the last N days of backfilled inbox mail to the thread
// workflows (classification and drafts), as if the sync worker had just seen each thread's newest
// inbox message. Off by default (BackfillOptions.handToThreadsDays). Task queue durable-inbox.
import { activityInfo, heartbeat } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ingestThreadEvent } from '../thread/ingest.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { ThreadSettings } from '../thread/contracts.js';
import type { BackfillHandoffActivities, HandoffInput, HandoffResult } from './activity-contracts.js';

export interface BackfillHandoffDeps {
  db: SqlExecutor;
  client: () => Promise<Client>;
  settings: ThreadSettings;
  /** The thread workflows' task queue. */
  taskQueue: string;
}

export function createBackfillHandoffActivities(deps: BackfillHandoffDeps): BackfillHandoffActivities {
  return {
    async backfillHandToThreads(input: HandoffInput): Promise<HandoffResult> {
      // Each thread's newest stored inbox message in the window, oldest thread first.
      const rows = await deps.db.query<{ gmail_thread_id: string; gmail_id: string; label_ids: string[] }>(
        `SELECT gmail_thread_id, gmail_id, label_ids FROM (
           SELECT DISTINCT ON (gmail_thread_id) gmail_thread_id, gmail_id, label_ids, internal_date FROM messages
           WHERE account_id = $1 AND internal_date >= to_timestamp($2::float8 / 1000.0) AND 'INBOX' = ANY(label_ids) AND archived_at IS NULL
           ORDER BY gmail_thread_id, internal_date DESC, gmail_id DESC) t
         ORDER BY internal_date, gmail_thread_id`,
        [input.accountId, input.sinceMs],
      );
      const resumeAt = (activityInfo().heartbeatDetails as number | undefined) ?? 0;
      const client = await deps.client();
      for (let i = resumeAt; i < rows.length; i++) {
        const row = rows[i]!;
        await ingestThreadEvent(client, {
          accountId: input.accountId,
          threadId: row.gmail_thread_id,
          event: { type: 'message_added', messageId: row.gmail_id, labelIds: row.label_ids },
          settings: deps.settings,
          taskQueue: deps.taskQueue,
          work: 'handoff',
        });
        heartbeat(i + 1);
      }
      return { threads: rows.length };
    },
  };
}
