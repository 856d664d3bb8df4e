// The hand-over's Message Batch, first step (mail queue): each thread the hand-over will hand over is
// read as its thread workflow reads it (readThread with the rules), and the ones whose newest inbound
// message no rule decides get a request row in llm_batch_requests, with what the classification
// prompt is built from. Rows are keyed by batch and custom_id, so a retry adds nothing twice; the
// position heartbeats, so a retry resumes. A thread that cannot be read is left out: it classifies
// as always once handed over.
import { createHash } from 'node:crypto';
import { activityInfo, heartbeat, log } from '@temporalio/activity';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { createGmailActivities } from '../thread/gmail-activities.js';
import type { BackfillBatchMailActivities, BatchPrepareInput, BatchPrepareResult } from './activity-contracts.js';
import { recentInboxThreads } from './handoff-activities.js';

/** One request per thread and message: the same thread and message always get the same custom_id (^[a-zA-Z0-9_-]{1,64}$). */
export function batchCustomId(threadId: string, messageId: string): string {
  return `c-${createHash('sha256').update(`${threadId}\n${messageId}`).digest('hex').slice(0, 40)}`;
}

export function createBatchPrepareActivities(deps: { accounts: MailboxAccess; db: SqlExecutor }): BackfillBatchMailActivities {
  const gmail = createGmailActivities(deps);
  return {
    async batchPrepareClassification({ accountId, batchKey, sinceMs }: BatchPrepareInput): Promise<BatchPrepareResult> {
      await deps.db.query(`INSERT INTO llm_batches (batch_key, account_id) VALUES ($1, $2) ON CONFLICT (batch_key) DO NOTHING`, [batchKey, accountId]);
      const threads = await recentInboxThreads(deps.db, accountId, sinceMs);
      const resumeAt = (activityInfo().heartbeatDetails as number | undefined) ?? 0;
      for (let i = resumeAt; i < threads.length; i++) {
        const threadId = threads[i]!.gmail_thread_id;
        let thread;
        try {
          thread = await gmail.readThread({ accountId, threadId, withRules: true, withoutReplyContext: true });
        } catch (err) {
          log.warn('thread not read for the Message Batch; it classifies once handed over', { accountId, threadId, error: String(err) });
          continue;
        }
        const email = thread?.latestInbound;
        // The rules decide first, as in the thread; unreadable mail goes to the user, not the model.
        if (thread && email && !email.unreadable && thread.rules && !thread.rules.decided) {
          await deps.db.query(
            `INSERT INTO llm_batch_requests (batch_key, custom_id, thread_id, message_id, prompt) VALUES ($1, $2, $3, $4, $5::jsonb)
             ON CONFLICT (batch_key, custom_id) DO NOTHING`,
            [batchKey, batchCustomId(threadId, email.messageId), threadId, email.messageId, JSON.stringify({ email, instructions: thread.rules.instructions })],
          );
        }
        heartbeat(i + 1);
      }
      const [counted] = await deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM llm_batch_requests WHERE batch_key = $1`, [batchKey]);
      return { threads: threads.length, requests: counted?.n ?? 0 };
    },
  };
}
