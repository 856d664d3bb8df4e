// Journal rows for the approvals tests: an account and actions in any state, written as the thread
// workflow's journal writes them, plus the stand-in's settling of a decision.
import { SENDING_KINDS } from '../../src/actions/contracts.js';
import { uuid7 } from '../../src/db/uuid7.js';
import type { ActionDecisionEvent, ActionReason, ActionResult, ActionState, JournaledAction } from '../../src/actions/contracts.js';
import { loadAction, transitionAction } from '../../src/actions/journal.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { pgExecutor, type SqlExecutor } from '../../src/db/sql-executor.js';
import pg from 'pg';
import { createScratchDatabase } from './scratch-database.js';

/** A scratch database with the schema and one account, for journal rows; close() drops it. */
export async function openJournal(email: string): Promise<{ db: SqlExecutor; accountId: string; close(): Promise<void> }> {
  const database = await createScratchDatabase();
  await applyMigrations(database.url);
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  pool.on('error', () => {}); // dropping the scratch database ends a connection a late query still held
  const db = pgExecutor(pool);
  return {
    db,
    accountId: await seedAccount(db, email),
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}

export async function seedAccount(db: SqlExecutor, email: string): Promise<string> {
  const id = uuid7();
  await db.query(`INSERT INTO accounts (id, email, updated_at) VALUES ($1, $2, now())`, [id, email]);
  return id;
}

export interface SeedActionInput {
  accountId: string;
  kind: JournaledAction['kind'];
  argument?: string;
  state?: ActionState;
  reason?: ActionReason;
  because?: string[];
  sender?: string;
  result?: ActionResult;
  threadId?: string;
  subject?: string;
  recipients?: string[];
}

export async function seedAction(db: SqlExecutor, input: SeedActionInput): Promise<JournaledAction> {
  const id = uuid7();
  const threadId = input.threadId ?? `t${id.slice(-12)}`;
  const state = input.state ?? 'awaiting_approval';
  await db.query(
    `INSERT INTO actions (id, key, account_id, gmail_thread_id, message_id, kind, argument, reason, verdict, because,
       state, sender, workflow_id, expires_at, result, subject, recipients, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::text[], $11::action_state, $12, $13,
       CASE WHEN $11 = 'awaiting_approval' THEN now() + interval '72 hours' END, $14::jsonb, $15, $16::text[], now())`,
    [
      id,
      `${input.accountId}:${threadId}:m1:${input.kind}:${input.argument ?? ''}`,
      input.accountId,
      threadId,
      'm1',
      input.kind,
      input.argument ?? null,
      JSON.stringify(input.reason ?? { source: 'llm', confidence: 0.91, model: 'claude-sonnet-4-6' }),
      state === 'awaiting_approval' ? 'needs_approval' : 'run',
      input.because ?? [`${input.kind} is a dangerous action: it needs your approval`],
      state,
      input.sender ?? 'alice@example.com',
      `thread/${input.accountId}/${threadId}`,
      input.result ? JSON.stringify(input.result) : null,
      input.subject ?? '',
      input.recipients ?? [],
    ],
  );
  return (await loadAction(db, id))!;
}

/**
 * What the thread workflow does with a decision, in short: an approved send is scheduled (an
 * approved label change is done), a rejected action rejected.
 */
export async function settleDecision(db: SqlExecutor, event: ActionDecisionEvent): Promise<void> {
  const action = await loadAction(db, event.actionId);
  const approved = action && SENDING_KINDS.includes(action.kind) ? 'scheduled' : 'done';
  const to = event.decision === 'approve' ? approved : event.decision === 'reject' ? 'rejected' : 'undone';
  await transitionAction(db, { id: event.actionId, from: ['awaiting_approval', 'scheduled'], to, decidedBy: event.by });
}
