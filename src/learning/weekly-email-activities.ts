// The weekly "what I learned" e-mail (Gmail worker): `weeklyReport` put into the account's own inbox,
// unread and labelled (LABEL_LESSONS), once per account per ISO week in the account's zone. The
// Message-ID is made of the account and the week, and insertOnce looks for it before inserting, so
// the hourly learning run (and any retry) finds the week's e-mail and never puts a second one there.
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { needsReconnect, toActivityFailure } from '../accounts/mailbox-failures.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { insertOnce } from '../mail/insert-once.js';
import { LabelDirectory } from '../gmail/label-directory.js';
import { buildPlainTextMessage, toRaw } from '../gmail/mime.js';
import { accountTimeZone } from '../accounts/time-settings.js';
import { describeLocal, isoWeekOf, weeklyTimeIn, type WeeklyTime } from '../time/index.js';
import { weeklyReport } from './weekly-report.js';
import type { WeeklyEmailActivities } from './activity-contracts.js';

/** Marks our weekly lessons e-mail (the built-in rule builtin:own-lessons files it as fyi). */
export const LESSONS_REPORT_HEADER = 'X-Durable-Inbox-Lessons';

export const weeklyReportMessageId = (accountId: string, week: string) => `<lessons.${accountId}.${week}@durable-inbox.local>`;

export function createWeeklyEmailActivities(deps: {
  db: SqlExecutor;
  accounts: MailboxAccess;
  label: string;
  /** From when in each week it goes out, in the account's zone (LEARNING_WEEKLY_EMAIL); null: never. */
  sendFrom: WeeklyTime | null;
  defaultZone?: string;
  now?: () => Date;
}): WeeklyEmailActivities {
  const labels = new LabelDirectory();
  return {
    async deliverWeeklyReport({ accountId }) {
      const now = deps.now?.() ?? new Date();
      const zone = await accountTimeZone(deps.db, accountId, deps.defaultZone);
      const week = isoWeekOf(now, zone);
      if (!deps.sendFrom) return { accountId, week, gmailMessageId: null, inserted: false, note: 'the weekly e-mail is off (LEARNING_WEEKLY_EMAIL)' };
      const from = weeklyTimeIn(now, zone, deps.sendFrom);
      if (now < from) return { accountId, week, gmailMessageId: null, inserted: false, note: `not yet: it goes out from ${describeLocal(from, zone)}` };
      const report = await weeklyReport(deps.db, { accountId, now });
      // An empty report is not worth an e-mail (nor a Gmail call): a later run of the week may send one.
      if (report.waiting + report.accepted + report.reverted === 0) return { accountId, week, gmailMessageId: null, inserted: false, note: 'nothing to report' };
      const messageId = weeklyReportMessageId(accountId, week);
      try {
        const done = await deps.accounts.call(accountId, (mailbox, email) =>
          insertOnce(mailbox, messageId, () => {
            const rfc2822 = buildPlainTextMessage({
              from: { name: 'durable-inbox', address: email },
              to: [{ address: email }],
              subject: `[durable-inbox] ${report.subject}`,
              body: report.body,
              date: now,
              messageId,
              extraHeaders: { 'Auto-Submitted': 'auto-generated', [LESSONS_REPORT_HEADER]: week },
            });
            return labels.withIds(accountId, mailbox, [deps.label], (ids) => mailbox.insertMessage(toRaw(rfc2822), ['INBOX', 'UNREAD', ids.get(deps.label)!]));
          }),
        );
        return { accountId, week, gmailMessageId: done.id, inserted: done.inserted };
      } catch (err) {
        if (needsReconnect(err)) return { accountId, week, gmailMessageId: null, inserted: false, note: `email: ${err.message}` };
        throw toActivityFailure(err);
      }
    },
  };
}
