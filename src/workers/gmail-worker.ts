// Worker for the Gmail task queue: every Gmail side effect, and the notifications (approval
// requests, backfill alerts: the other outside calls). Its own queue lets operators cap Gmail calls
// (GMAIL_ACTIVITIES_PER_SECOND, all workers of the queue together).
import { Worker } from '@temporalio/worker';
import { createActionGmailActivities } from '../actions/gmail-activities.js';
import { createAgentGmailActivities } from '../agent/gmail-activities.js';
import { approvalKeysOnce } from '../actions/approval-links.js';
import { createApprovalNotifyActivities } from '../actions/notify-activities.js';
import { approvalsSettingsFromConfig, backfillAlertSettingsFromConfig } from '../config.js';
import { createAlertDeliveryActivities } from '../backfill/alert-delivery.js';
import { createBackfillGmailActivities } from '../backfill/gmail-activities.js';
import { isMainModule } from '../shared/main-module.js';
import { createGmailActivities } from '../thread/gmail-activities.js';
import { ioWorkerInterceptors, type WorkerContext } from './context.js';
import { createGmailAccounts } from './gmail-access.js';
import { runWorkerMain } from './main.js';

export async function createGmailWorker(ctx: WorkerContext, taskQueue = ctx.cfg.GMAIL_TASK_QUEUE): Promise<Worker> {
  // The thread activities' calls draw from the account's shared budget (with sync and backfill).
  const metered = await createGmailAccounts(ctx, { metered: true });
  const unmetered = await createGmailAccounts(ctx, { metered: false });
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    activities: {
      ...createGmailActivities({ accounts: metered, db: ctx.sql }),
      ...createAgentGmailActivities(metered),
      ...createActionGmailActivities({ accounts: metered, db: ctx.sql, pauseCheckTtlMs: ctx.cfg.PAUSE_LABEL_CHECK_SECONDS * 1000 }),
      ...createBackfillGmailActivities({ accounts: unmetered, limiter: ctx.quota, db: ctx.sql }),
      ...createAlertDeliveryActivities({ db: ctx.sql, accounts: metered, ...backfillAlertSettingsFromConfig(ctx.cfg) }),
      ...createApprovalNotifyActivities({
        db: ctx.sql,
        keys: approvalKeysOnce(ctx.cfg),
        settings: approvalsSettingsFromConfig(ctx.cfg),
      }),
    },
    dataConverter: ctx.dataConverter,
    ...ioWorkerInterceptors(ctx),
    maxTaskQueueActivitiesPerSecond: ctx.cfg.GMAIL_ACTIVITIES_PER_SECOND,
    maxConcurrentActivityTaskExecutions: 50,
    shutdownGraceTime: '10 seconds',
  });
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('gmail-worker', createGmailWorker);
}
