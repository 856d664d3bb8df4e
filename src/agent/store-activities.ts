// Postgres activities of the agent (local activities of the thread workflow): what we know of a
// sender, and the run's steps.
import type { SqlExecutor } from '../db/sql-executor.js';
import type { AgentStoreActivities } from './activity-contracts.js';
import type { AgentStepRecord } from './contracts.js';

export function createAgentStoreActivities({ db }: { db: SqlExecutor }): AgentStoreActivities {
  return {
    async senderHistory({ accountId, sender }) {
      // The journal keeps the sender of every action; the drafts' results say whether the user sent them.
      const rows = await db.query<{ kind: string; state: string; created_at: Date; thread: string; unedited: boolean | null }>(
        `SELECT kind, state::text AS state, created_at, gmail_thread_id AS thread, (result->>'sentUnedited')::boolean AS unedited
         FROM actions WHERE account_id = $1 AND sender = $2 ORDER BY created_at DESC LIMIT 20`,
        [accountId, sender],
      );
      if (rows.length === 0) return `Nothing is known about ${sender}: no earlier threads or actions.`;
      const threads = new Set(rows.map((r) => r.thread)).size;
      const lines = rows.map((r) => {
        const fate = r.kind === 'draft' && r.unedited !== null ? (r.unedited ? ', sent by the user unedited' : ', sent by the user after editing') : '';
        return `- ${r.created_at.toISOString().slice(0, 10)} ${r.kind} (${r.state}${fate}) in thread ${r.thread}`;
      });
      return `${sender}: ${threads} earlier thread(s), latest actions first:\n${lines.join('\n')}`;
    },

    async recordAgentSteps({ accountId, threadId, runKey, profile, steps }) {
      await insertAgentSteps(db, { accountId, threadId }, runKey, profile, steps);
    },
  };
}

/**
 * An agent run's steps into agent_steps, once each (a retry finds them by run key and step): the
 * run of a thread (`threadId`) or of a user schedule (`scheduleId`).
 */
export async function insertAgentSteps(
  db: SqlExecutor,
  owner: { accountId: string; threadId?: string; scheduleId?: string },
  runKey: string,
  profile: string,
  steps: AgentStepRecord[],
): Promise<void> {
  for (const step of steps) {
    await db.query(
      `INSERT INTO agent_steps (account_id, gmail_thread_id, schedule_id, run_key, seq, profile, name, input, result, status, tokens_in, tokens_out, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12, $13, $14)
       ON CONFLICT (run_key, seq) DO NOTHING`,
      [
        owner.accountId,
        owner.threadId ?? null,
        owner.scheduleId ?? null,
        runKey,
        step.seq,
        profile,
        step.name,
        step.input === undefined ? null : JSON.stringify(step.input),
        step.result === undefined ? null : JSON.stringify(step.result),
        step.status,
        step.tokensIn ?? null,
        step.tokensOut ?? null,
        step.startedAt,
        step.finishedAt,
      ],
    );
  }
}
