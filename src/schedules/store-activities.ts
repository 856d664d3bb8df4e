// Postgres activities of a scheduled run (task queue durable-inbox, local activities): claiming the
// run, its steps, its end. Each is idempotent: a retried claim finds its own row.
import { loadActionsByKey } from '../actions/journal.js';
import { loadAgentProfile } from '../agent/profiles.js';
import { insertAgentSteps } from '../agent/store-activities.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { accountTimeZone } from '../accounts/time-settings.js';
import type { ProposedThreadAction, ScheduleStoreActivities } from './activity-contracts.js';
import { localSlotOf } from './calendar-spec.js';
import { loadAgentSchedule } from './schedule-store.js';

/** Each proposed action as the journal has it now (a row not written yet stays handed over). */
export async function proposedAsJournaled(db: SqlExecutor, proposed: ProposedThreadAction[]): Promise<ProposedThreadAction[]> {
  const byKey = await loadActionsByKey(db, proposed.map((p) => p.key));
  return proposed.map((p) => {
    const row = byKey.get(p.key);
    if (!row) return p;
    return { ...p, actionId: row.id, state: row.state, because: row.because, ...(row.note ? { note: row.note } : {}) };
  });
}

export function createScheduleStoreActivities({ db, defaultZone }: { db: SqlExecutor; defaultZone?: string }): ScheduleStoreActivities {
  return {
    readProposedActions: ({ proposed }) => proposedAsJournaled(db, proposed),
    async claimScheduledRun({ scheduleId, workflowId, runId, scheduledAt, manual }) {
      const schedule = await loadAgentSchedule(db, scheduleId);
      if (!schedule) return { kind: 'gone' };
      const [account] = await db.query<{ email: string }>(`SELECT email FROM accounts WHERE id = $1`, [schedule.accountId]);
      if (!account) return { kind: 'gone' };
      const zone = schedule.timeZone ?? (await accountTimeZone(db, schedule.accountId, defaultZone));
      // A trigger stands for itself; a Schedule's run for its local date and time, claimed once.
      const localSlot = manual ? `trigger ${workflowId}` : localSlotOf(new Date(scheduledAt), zone);
      await db.query(
        `INSERT INTO schedule_runs (schedule_id, workflow_id, run_id, scheduled_at, local_slot, status)
         SELECT $1, $2, $5, $3, $4, CASE WHEN EXISTS (
           SELECT 1 FROM schedule_runs WHERE schedule_id = $1 AND local_slot = $4 AND status <> 'duplicate' AND run_id <> $5
         ) THEN 'duplicate' ELSE 'running' END
         ON CONFLICT DO NOTHING`,
        [scheduleId, workflowId, scheduledAt, localSlot, runId],
      );
      const [mine] = await db.query<{ status: string }>(`SELECT status FROM schedule_runs WHERE run_id = $1`, [runId]);
      if (!mine) {
        // Lost a race for the slot (the partial unique index): the other run has it.
        await db.query(
          `INSERT INTO schedule_runs (schedule_id, workflow_id, run_id, scheduled_at, local_slot, status, note, finished_at)
           VALUES ($1, $2, $5, $3, $4, 'duplicate', 'the same local time ran already', clock_timestamp()) ON CONFLICT DO NOTHING`,
          [scheduleId, workflowId, scheduledAt, localSlot, runId],
        );
      }
      if (mine?.status !== 'running' && mine?.status !== 'delivered' && mine?.status !== 'failed') {
        const [other] = await db.query<{ workflow_id: string }>(
          `SELECT workflow_id FROM schedule_runs WHERE schedule_id = $1 AND local_slot = $2 AND status <> 'duplicate'`,
          [scheduleId, localSlot],
        );
        await db.query(
          `UPDATE schedule_runs SET note = $2, finished_at = COALESCE(finished_at, clock_timestamp()) WHERE run_id = $1`,
          [runId, `${localSlot} ${zone} ran already (${other?.workflow_id ?? 'another run'})${localSlot.endsWith('(repeated hour)') ? ': the clocks repeated that time' : ''}`],
        );
        return { kind: 'duplicate', localSlot, by: other?.workflow_id ?? '' };
      }
      const [previous] = await db.query<{ started_at: Date }>(
        `SELECT started_at FROM schedule_runs WHERE schedule_id = $1 AND status = 'delivered' AND run_id <> $2 ORDER BY started_at DESC LIMIT 1`,
        [scheduleId, runId],
      );
      const since = previous?.started_at ?? new Date(new Date(scheduledAt).getTime() - 24 * 3600_000);
      return { kind: 'claimed', schedule, profile: await loadAgentProfile(db, schedule.profile), email: account.email, zone, localSlot, since: since.toISOString() };
    },

    async recordScheduledRunSteps({ accountId, scheduleId, runKey, profile, steps }) {
      await insertAgentSteps(db, { accountId, scheduleId }, runKey, profile, steps);
    },

    async finishScheduledRun({ runId, status, output, steps, tokensIn, tokensOut, note }) {
      await db.query(
        `UPDATE schedule_runs SET status = $2, output = $3, steps = $4, tokens_in = $5, tokens_out = $6, note = $7,
           finished_at = COALESCE(finished_at, clock_timestamp())
         WHERE run_id = $1`,
        [runId, status, output ?? null, steps, tokensIn, tokensOut, note ?? null],
      );
    },
  };
}
