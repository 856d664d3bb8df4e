// Postgres activities of the thread's timers (local activities): whether the rules say a sent message
// expects an answer, when a follow-up falls due, in the account's time zone, and whether the account
// lets a follow-up draft a nudge.
import { ApplicationFailure } from '@temporalio/activity';
import { loadSafetyPolicy } from '../actions/journal.js';
import { accountTimeSettings } from '../accounts/time-settings.js';
import type { PrismaClient } from '../db/client.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { addBusinessDays, type TimeDefaults } from '../time/index.js';
import { followUpRulesVerdict } from './rules-verdict.js';
import type { TimerStoreActivities } from './activity-contracts.js';

export function createTimerStoreActivities({ db, prisma, time }: { db: SqlExecutor; prisma: PrismaClient; time: TimeDefaults }): TimerStoreActivities {
  return {
    async followUpRules({ accountId, sent }) {
      return followUpRulesVerdict(db, accountId, sent);
    },
    async followUpDueAt({ accountId, fromMs, businessDays }) {
      const settings = await accountTimeSettings(prisma, accountId, time);
      if (!settings) throw ApplicationFailure.nonRetryable(`no account ${accountId}`, 'AccountNotFound');
      return addBusinessDays(new Date(fromMs), businessDays, settings).getTime();
    },
    async followUpNudgeAllowed({ accountId }) {
      return (await loadSafetyPolicy(db, accountId)).followUpNudge;
    },
  };
}
