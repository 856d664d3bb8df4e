// Postgres activities of the thread workflow: what earlier runs left in, thread rows and the
// decision log out. (The rules are read with the thread: rules-verdict.ts.)
// Every write is idempotent (upsert by thread, decisions keyed by run id and sequence), so a
// retried activity changes nothing the first attempt already wrote.
import type { PrismaClient } from '../db/client.js';
import { isCategory } from '../mail/types.js';
import { uuid7 } from '../db/uuid7.js';
import { recordLifecycleActions } from '../actions/journal.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { emailsHandled } from '../metrics/metrics.js';
import type { StoreActivities } from './activity-contracts.js';
import { threadWorkflowId, type DecisionRecord, type ThreadMemory, type ThreadState, type Wake } from './contracts.js';

const SAVE_THREAD_SQL = `
WITH thread AS (
  INSERT INTO threads AS t (id, account_id, gmail_thread_id, state, category, confidence, draft_id,
    draft_message_id, draft_created_at, rework_count, handled_message_ids, last_message_id, last_run_id,
    closed_at, updated_at, wakes, wake_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text[], $12, $13,
    CASE WHEN $14::boolean THEN clock_timestamp() END, clock_timestamp(), $16::jsonb, $17::timestamptz)
  ON CONFLICT (account_id, gmail_thread_id) DO UPDATE SET
    state = EXCLUDED.state, category = EXCLUDED.category, confidence = EXCLUDED.confidence,
    draft_id = EXCLUDED.draft_id, draft_message_id = EXCLUDED.draft_message_id,
    draft_created_at = EXCLUDED.draft_created_at, rework_count = EXCLUDED.rework_count,
    handled_message_ids = EXCLUDED.handled_message_ids, last_message_id = EXCLUDED.last_message_id,
    last_run_id = EXCLUDED.last_run_id, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at,
    wakes = EXCLUDED.wakes, wake_at = EXCLUDED.wake_at
  RETURNING t.id
)
INSERT INTO decisions (account_id, thread_id, run_id, seq, kind, source, model, tokens_in, tokens_out, detail)
SELECT $2, thread.id, $13, d.seq, d.kind, d.source::decision_source, d.model, d.tokens_in, d.tokens_out, d.detail
FROM thread, jsonb_to_recordset($15::jsonb)
  AS d(seq int, kind text, source text, model text, tokens_in int, tokens_out int, detail jsonb)
ON CONFLICT (run_id, seq) DO NOTHING`;

// A learn-only run (thread-workflow.ts) writes its decisions to the thread's log, never the row.
const APPEND_DECISIONS_SQL = `
INSERT INTO decisions (account_id, thread_id, run_id, seq, kind, source, model, tokens_in, tokens_out, detail)
SELECT $1, t.id, $3, d.seq, d.kind, d.source::decision_source, d.model, d.tokens_in, d.tokens_out, d.detail
FROM threads t, jsonb_to_recordset($4::jsonb)
  AS d(seq int, kind text, source text, model text, tokens_in int, tokens_out int, detail jsonb)
WHERE t.account_id = $1 AND t.gmail_thread_id = $2
ON CONFLICT (run_id, seq) DO NOTHING`;

// Raw SQL on the per-email paths: Prisma's query building costs about a millisecond of the
// worker's main thread per query (docs/thread-workflow.md).
const LOAD_THREAD_SQL = `
SELECT state, category, confidence, draft_id, draft_message_id, draft_created_at, rework_count, handled_message_ids, wakes
FROM threads
WHERE account_id = $1 AND gmail_thread_id = $2`;

interface ThreadRow {
  state: string;
  category: string | null;
  confidence: number | null;
  draft_id: string | null;
  draft_message_id: string | null;
  draft_created_at: Date | null;
  rework_count: number;
  handled_message_ids: string[];
  wakes: Wake[] | null;
}

export function createStoreActivities({ prisma }: { prisma: PrismaClient }): StoreActivities {
  return {
    async loadThread({ accountId, threadId }) {
      const [row] = await prisma.$queryRawUnsafe<ThreadRow[]>(LOAD_THREAD_SQL, accountId, threadId);
      if (!row) return null;
      const memory: ThreadMemory = {
        state: row.state as ThreadState,
        category: row.category && isCategory(row.category) ? row.category : undefined,
        confidence: row.confidence ?? undefined,
        draftId: row.draft_id ?? undefined,
        draftMessageId: row.draft_message_id ?? undefined,
        draftCreatedAt: row.draft_created_at?.getTime(),
        reworkCount: row.rework_count,
        handledMessageIds: row.handled_message_ids,
        ...(row.wakes && row.wakes.length > 0 ? { wakes: row.wakes } : {}),
      };
      return memory;
    },

    async saveThread({ accountId, threadId, workflowRunId, memory, closed, decisions, journal }) {
      if (journal && journal.length > 0) {
        await recordLifecycleActions(prismaExecutor(prisma), { accountId, threadId, workflowId: threadWorkflowId(accountId, threadId), actions: journal });
      }
      // One statement (the thread's hot path: once per handled event): upsert the row, append the
      // new decisions; a retried activity finds them by (run_id, seq) and adds nothing.
      await prisma.$executeRawUnsafe(
        SAVE_THREAD_SQL,
        uuid7(),
        accountId,
        threadId,
        memory.state,
        memory.category ?? null,
        memory.confidence ?? null,
        memory.draftId ?? null,
        memory.draftMessageId ?? null,
        memory.draftCreatedAt === undefined ? null : new Date(memory.draftCreatedAt),
        memory.reworkCount,
        memory.handledMessageIds,
        memory.handledMessageIds.at(-1) ?? null,
        workflowRunId,
        closed,
        decisionRows(decisions),
        memory.wakes && memory.wakes.length > 0 && !closed ? JSON.stringify(memory.wakes) : null,
        memory.wakes && memory.wakes.length > 0 && !closed ? new Date(Math.min(...memory.wakes.map((w) => w.at))) : null,
      );
      // A save with new decisions is mail handled; the state it left the thread in is the outcome.
      if (decisions.length > 0) emailsHandled.inc({ outcome: memory.state });
    },

    async appendDecisions({ accountId, threadId, workflowRunId, decisions }) {
      if (decisions.length === 0) return;
      await prisma.$executeRawUnsafe(APPEND_DECISIONS_SQL, accountId, threadId, workflowRunId, decisionRows(decisions));
    },
  };
}

/** The decisions as the SQL's jsonb_to_recordset reads them. */
function decisionRows(decisions: { seq: number; decision: DecisionRecord }[]): string {
  return JSON.stringify(
    decisions.map(({ seq, decision }) => ({
      seq,
      kind: decision.kind,
      source: decision.source,
      model: decision.model ?? null,
      tokens_in: decision.tokensIn ?? null,
      tokens_out: decision.tokensOut ?? null,
      detail: { text: decision.detail, ...(decision.ruleId ? { ruleId: decision.ruleId } : {}), ...(decision.lessons ? { lessons: decision.lessons } : {}), ...(decision.batch ? { batch: decision.batch } : {}), at: decision.at },
    })),
  );
}
