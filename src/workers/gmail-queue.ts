// The Gmail task queue's activities (GMAIL_TASK_QUEUE, src/workers/gmail-worker.ts): every Gmail side
// effect, the thread's, the actions', the agent's and the backfill's, and the notifications (the
// other outside calls: approval requests, lesson proposals and the weekly lessons e-mail, backfill alerts, reminders). Workflow code imports the type only.
import { approvalKeysOnce } from '../actions/approval-links.js';
import { createActionGmailActivities } from '../actions/gmail-activities.js';
import { createApprovalNotifyActivities } from '../actions/notify-activities.js';
import { createLessonNotifyActivities } from '../learning/notify-activities.js';
import { createWeeklyEmailActivities } from '../learning/weekly-email-activities.js';
import { createAgentGmailActivities } from '../agent/gmail-activities.js';
import { createAlertDeliveryActivities } from '../backfill/alert-delivery.js';
import { createBackfillMailActivities } from '../backfill/mail-activities.js';
import { createBatchPrepareActivities } from '../backfill/batch-prepare-activities.js';
import { approvalsSettingsFromConfig, backfillAlertSettingsFromConfig, reminderSettingsFromConfig } from '../config/settings.js';
import { createUnsubscribeActivities } from '../cleanup/unsubscribe-activities.js';
import { createBulkActivities } from '../cleanup/bulk-activities.js';
import { createReminderDeliveryActivities } from '../reminders/delivery-activities.js';
import { createScheduleGmailActivities } from '../schedules/gmail-activities.js';
import { createGmailActivities } from '../thread/gmail-activities.js';
import { createTimerGmailActivities } from '../thread/timer-activities.js';
import type { WorkerContext } from './context.js';
import { createBackfillMailboxAccounts, createMailboxAccounts } from './mailbox-access.js';
import { mergeActivities } from './merge-activities.js';
import type { ApprovalNotifyActivities } from '../actions/activity-contracts.js';
import type { BackfillAlertDeliveryActivities, BackfillBatchMailActivities, BackfillMailActivities } from '../backfill/activity-contracts.js';
import type { LessonNotifyActivities, WeeklyEmailActivities } from '../learning/activity-contracts.js';
import type { ReminderDeliveryActivities } from '../reminders/contracts.js';
import type { ScheduleGmailActivities } from '../schedules/activity-contracts.js';
import type { ThreadGmailSteps } from '../thread/activity-contracts.js';
import type { CleanupBulkActivities, CleanupGmailActivities } from '../cleanup/activity-contracts.js';

/** Every step the workflows call on the Gmail queue, by their contracts: one missing or mistyped here fails to compile. */
type GmailQueueSteps = ThreadGmailSteps &
  BackfillMailActivities &
  BackfillBatchMailActivities &
  BackfillAlertDeliveryActivities &
  ScheduleGmailActivities &
  ApprovalNotifyActivities &
  LessonNotifyActivities &
  ReminderDeliveryActivities &
  WeeklyEmailActivities &
  CleanupGmailActivities &
  CleanupBulkActivities;

export async function createGmailQueueActivities(ctx: WorkerContext) {
  // The thread's, actions' and agent's calls draw from the account's shared budget; the backfill's
  // wait behind them (the bulk lane), an IMAP account's on connections of their own.
  const backfillMailboxes = await createBackfillMailboxAccounts(ctx);
  const mailboxes = await createMailboxAccounts(ctx, { metered: true });
  // The clean-up's bulk batches wait behind live mail for the account's slots, as the backfill does.
  const bulkMailboxes = await createMailboxAccounts(ctx, { metered: true, lane: 'bulk' });
  return mergeActivities(
    createGmailActivities({ accounts: mailboxes, db: ctx.sql }),
    createTimerGmailActivities({ accounts: mailboxes }),
    createAgentGmailActivities({ accounts: mailboxes }),
    createActionGmailActivities({ accounts: mailboxes, db: ctx.sql, pauseCheckTtlMs: ctx.cfg.PAUSE_LABEL_CHECK_EVERY }),
    createBackfillMailActivities({ accounts: backfillMailboxes, concurrency: Math.max(ctx.quota.options.maxConcurrency, ctx.cfg.IMAP_BACKFILL_CONNECTIONS), db: ctx.sql }),
    createAlertDeliveryActivities({ db: ctx.sql, accounts: mailboxes, ...backfillAlertSettingsFromConfig(ctx.cfg) }),
    createBatchPrepareActivities({ accounts: backfillMailboxes, db: ctx.sql }),
    createScheduleGmailActivities({ db: ctx.sql, accounts: mailboxes, defaultZone: ctx.cfg.DEFAULT_TIME_ZONE, ...(ctx.cfg.DISCORD_WEBHOOK_URL ? { discordWebhookUrl: ctx.cfg.DISCORD_WEBHOOK_URL } : {}) }),
    createApprovalNotifyActivities({ db: ctx.sql, keys: approvalKeysOnce(ctx.cfg), settings: approvalsSettingsFromConfig(ctx.cfg) }),
    createLessonNotifyActivities({ db: ctx.sql, keys: approvalKeysOnce(ctx.cfg), settings: approvalsSettingsFromConfig(ctx.cfg) }),
    createReminderDeliveryActivities({ db: ctx.sql, accounts: mailboxes, ...reminderSettingsFromConfig(ctx.cfg) }),
    createUnsubscribeActivities({ accounts: mailboxes, db: ctx.sql, oneClick: ctx.oneClick }),
    createBulkActivities({ accounts: bulkMailboxes, db: ctx.sql }),
    createWeeklyEmailActivities({ db: ctx.sql, accounts: mailboxes, label: ctx.cfg.LABEL_LESSONS, sendFrom: ctx.cfg.LEARNING_WEEKLY_EMAIL, defaultZone: ctx.cfg.DEFAULT_TIME_ZONE }),
  ) satisfies GmailQueueSteps;
}

export type GmailQueueActivities = Awaited<ReturnType<typeof createGmailQueueActivities>>;
