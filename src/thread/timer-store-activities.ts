// Postgres activities of the thread's timers (local activities): when a follow-up falls due, in
// the account's time zone, and whether the account lets a follow-up draft a nudge.
import { loadSafetyPolicy } from '../actions/journal.js';
import type { SqlExecutor } from '../db/sql-executor.js';

export interface TimerStoreActivities {
  /** `businessDays` business days after `fromMs`, in the account's zone (its weekend skipped), at the same local time. */
  followUpDueAt(input: { accountId: string; fromMs: number; businessDays: number }): Promise<number>;
  /** Whether a follow-up that falls due drafts a nudge (the account's policy, else the global one; off by default). */
  followUpNudgeAllowed(input: { accountId: string }): Promise<boolean>;
}

export function createTimerStoreActivities({ db }: { db: SqlExecutor }): TimerStoreActivities {
  return {
    async followUpDueAt({ fromMs, businessDays }) {
      // TODO(time): the account's zone and weekend (src/time addBusinessDays) once merged.
      let at = new Date(fromMs);
      let left = businessDays;
      while (left > 0) {
        at = new Date(at.getTime() + 86_400_000);
        if (at.getUTCDay() !== 0 && at.getUTCDay() !== 6) left--;
      }
      return at.getTime();
    },
    async followUpNudgeAllowed({ accountId }) {
      return (await loadSafetyPolicy(db, accountId)).followUpNudge;
    },
  };
}
