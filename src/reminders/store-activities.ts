// The reminder workflow's Postgres steps (local activities on the workflow worker): planning the
// next occurrence from the row (rule, zone, state), and recording what became of each occurrence.
import type { SqlExecutor } from '../db/sql-executor.js';
import { missedWhy, type ReminderPlan, type ReminderStoreActivities } from './contracts.js';
import { occurrencesAfter } from './recurrence.js';
import { finishReminder, lastHandledDueAt, loadReminder, markSent, recordSkipped, setNextAt } from './reminder-store.js';

/** How many missed occurrences one plan records one by one; past that, the rest are counted and passed over. */
const MAX_SKIPS_RECORDED = 100;

export interface ReminderStoreDeps {
  db: SqlExecutor;
  /** The zone of an account that has none of its own (DEFAULT_TIME_ZONE). */
  defaultZone: string;
}

export function createReminderStoreActivities(deps: ReminderStoreDeps): ReminderStoreActivities {
  const { db } = deps;
  return {
    async planReminder({ reminderId, after, now, catchUpWindowMs }): Promise<ReminderPlan> {
      const reminder = await loadReminder(db, reminderId, deps.defaultZone);
      if (!reminder) return { kind: 'ended', why: 'missing', skipped: 0 };
      if (reminder.state === 'removed' || reminder.state === 'finished') return { kind: 'ended', why: reminder.state, skipped: 0 };
      if (reminder.state === 'paused') return { kind: 'paused', skipped: 0 };

      const nowMs = Date.parse(now);
      const oldestDeliverable = nowMs - catchUpWindowMs;
      // After the last one handled (this run's, or the table's when a run started afresh), and not before not_before.
      const handled = await lastHandledDueAt(db, reminderId);
      let from = new Date(Math.max(after ? Date.parse(after) : 0, handled?.getTime() ?? 0, reminder.notBefore.getTime() - 1));
      let skipped = 0;
      for (;;) {
        const batch = occurrencesAfter(reminder, reminder.zone, from, 50);
        if (batch.length === 0) {
          await finishReminder(db, reminderId);
          return { kind: 'ended', why: 'finished', skipped };
        }
        for (const occurrence of batch) {
          if (occurrence.at.getTime() >= oldestDeliverable) {
            await setNextAt(db, reminderId, occurrence.at);
            return { kind: 'due', dueAt: occurrence.at.toISOString(), localTime: `${occurrence.local} ${reminder.zone}`, skipped };
          }
          if (skipped < MAX_SKIPS_RECORDED) {
            const why = missedWhy(nowMs - occurrence.at.getTime(), catchUpWindowMs);
            await recordSkipped(db, { reminderId, dueAt: occurrence.at, localTime: `${occurrence.local} ${reminder.zone}` }, why);
          }
          skipped++;
        }
        from = skipped >= MAX_SKIPS_RECORDED ? new Date(Math.max(batch.at(-1)!.at.getTime(), oldestDeliverable - 1)) : batch.at(-1)!.at;
      }
    },

    async markOccurrenceSent({ reminderId, dueAt }) {
      await markSent(db, reminderId, new Date(dueAt));
    },

    async skipOccurrence({ reminderId, dueAt, localTime, why }) {
      await recordSkipped(db, { reminderId, dueAt: new Date(dueAt), localTime }, why);
    },
  };
}
