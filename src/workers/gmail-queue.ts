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
import { createBackfillGmailActivities } from '../backfill/gmail-activities.js';
import { approvalsSettingsFromConfig, backfillAlertSettingsFromConfig, reminderSettingsFromConfig } from '../config/settings.js';
import { createReminderDeliveryActivities } from '../reminders/delivery-activities.js';
import { createScheduleGmailActivities } from '../schedules/gmail-activities.js';
import { createGmailActivities } from '../thread/gmail-activities.js';
import { createTimerGmailActivities } from '../thread/timer-activities.js';
import type { WorkerContext } from './context.js';
import { createGmailAccounts, createMailboxAccounts } from './mailbox-access.js';
import { mergeActivities } from './merge-activities.js';
import type { ApprovalNotifyActivities } from '../actions/activity-contracts.js';
import type { BackfillAlertDeliveryActivities, BackfillGmailActivities } from '../backfill/activity-contracts.js';
import type { LessonNotifyActivities, WeeklyEmailActivities } from '../learning/activity-contracts.js';
import type { ReminderDeliveryActivities } from '../reminders/contracts.js';
import type { ScheduleGmailActivities } from '../schedules/activity-contracts.js';
import type { ThreadGmailSteps } from '../thread/activity-contracts.js';

/** Every step the workflows call on the Gmail queue, by their contracts: one missing or mistyped here fails to compile. */
type GmailQueueSteps = ThreadGmailSteps &
  BackfillGmailActivities &
  BackfillAlertDeliveryActivities &
  ScheduleGmailActivities &
  ApprovalNotifyActivities &
  LessonNotifyActivities &
  ReminderDeliveryActivities &
  WeeklyEmailActivities;

export async function createGmailQueueActivities(ctx: WorkerContext) {
  // The thread's, actions' and agent's calls draw from the account's shared budget; the backfill
  // meters its batches itself.
  const metered = await createGmailAccounts(ctx, { metered: true });
  const unmetered = await createGmailAccounts(ctx, { metered: false });
  const mailboxes = await createMailboxAccounts(ctx, { metered: true });
  return mergeActivities(
    createGmailActivities({ accounts: mailboxes, db: ctx.sql }),
    createTimerGmailActivities({ accounts: mailboxes }),
    createAgentGmailActivities({ accounts: metered }),
    createActionGmailActivities({ accounts: mailboxes, db: ctx.sql, pauseCheckTtlMs: ctx.cfg.PAUSE_LABEL_CHECK_EVERY }),
    createBackfillGmailActivities({ accounts: unmetered, limiter: ctx.quota, db: ctx.sql }),
    createAlertDeliveryActivities({ db: ctx.sql, accounts: metered, ...backfillAlertSettingsFromConfig(ctx.cfg) }),
    createScheduleGmailActivities({ db: ctx.sql, accounts: metered, defaultZone: ctx.cfg.DEFAULT_TIME_ZONE, ...(ctx.cfg.DISCORD_WEBHOOK_URL ? { discordWebhookUrl: ctx.cfg.DISCORD_WEBHOOK_URL } : {}) }),
    createApprovalNotifyActivities({ db: ctx.sql, keys: approvalKeysOnce(ctx.cfg), settings: approvalsSettingsFromConfig(ctx.cfg) }),
    createLessonNotifyActivities({ db: ctx.sql, keys: approvalKeysOnce(ctx.cfg), settings: approvalsSettingsFromConfig(ctx.cfg) }),
    createReminderDeliveryActivities({ db: ctx.sql, accounts: metered, ...reminderSettingsFromConfig(ctx.cfg) }),
    createWeeklyEmailActivities({ db: ctx.sql, accounts: metered, label: ctx.cfg.LABEL_LESSONS, sendFrom: ctx.cfg.LEARNING_WEEKLY_EMAIL, defaultZone: ctx.cfg.DEFAULT_TIME_ZONE }),
  ) satisfies GmailQueueSteps;
}

export type GmailQueueActivities = Awaited<ReturnType<typeof createGmailQueueActivities>>;
