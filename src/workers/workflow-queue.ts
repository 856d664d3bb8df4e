// The main task queue's activities (TEMPORAL_TASK_QUEUE, src/workers/workflow-worker.ts), beside every
// workflow: the Postgres steps (the thread's, the journal's, the agent's, the backfill's; local
// activities of the thread; the reminders' plans), retention, the backfill's hand-over and the sync. The sync runs here
// because it hands what it finds to the thread workflows; its Gmail calls still draw from the
// account's quota budget. Workflow code imports the type only.
import { createActionStoreActivities } from '../actions/store-activities.js';
import { createAgentStoreActivities } from '../agent/store-activities.js';
import { createBackfillHandoffActivities } from '../backfill/handoff-activities.js';
import { createBackfillStoreActivities } from '../backfill/store-activities.js';
import { backfillAlertSettingsFromConfig, learningSettingsFromConfig, threadSettingsFromConfig, timerLabelPrefixesFromConfig } from '../config/settings.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { createReminderStoreActivities } from '../reminders/store-activities.js';
import { createScheduleHandoffActivities } from '../schedules/handoff-activities.js';
import { createScheduleStoreActivities } from '../schedules/store-activities.js';
import { createLearningActivities } from '../learning/learning-activities.js';
import { createRetentionActivities } from '../retention/retention-activities.js';
import type { SyncActivities, SyncFanoutActivities } from '../sync/contracts.js';
import { createSyncActivities } from '../sync/sync-activities.js';
import { createStoreActivities } from '../thread/store-activities.js';
import { createTimerStoreActivities } from '../thread/timer-store-activities.js';
import type { WorkerContext } from './context.js';
import { createMailboxAccounts } from './mailbox-access.js';
import { mergeActivities } from './merge-activities.js';
import type { BackfillHandoffActivities, BackfillStoreActivities } from '../backfill/activity-contracts.js';
import type { ReminderStoreActivities } from '../reminders/contracts.js';
import type { RetentionActivities } from '../retention/contracts.js';
import type { ScheduleHandoffActivities, ScheduleStoreActivities } from '../schedules/activity-contracts.js';
import type { ThreadStoreSteps } from '../thread/activity-contracts.js';

/** Every step the workflows run on the main queue (activities and local activities), by their contracts. */
type WorkflowQueueSteps = ThreadStoreSteps &
  BackfillStoreActivities &
  BackfillHandoffActivities &
  ScheduleStoreActivities &
  ScheduleHandoffActivities &
  ReminderStoreActivities &
  RetentionActivities &
  AllSyncActivities;

/** `taskQueue`: the worker's own queue, where the sync and thread workflows run. */
export function createWorkflowQueueActivities(ctx: WorkerContext, taskQueue: string) {
  const db = prismaExecutor(ctx.prisma);
  const threadSettings = threadSettingsFromConfig(ctx.cfg);
  return mergeActivities(
    createRetentionActivities({ prisma: ctx.prisma }),
    createStoreActivities({ prisma: ctx.prisma }),
    createTimerStoreActivities({ db, prisma: ctx.prisma, time: ctx.cfg }),
    createActionStoreActivities({ db }),
    createAgentStoreActivities({ db }),
    createScheduleStoreActivities({ db, defaultZone: ctx.cfg.DEFAULT_TIME_ZONE }),
    createLearningActivities({ db, settings: learningSettingsFromConfig(ctx.cfg) }),
    createBackfillStoreActivities({ db, alerts: backfillAlertSettingsFromConfig(ctx.cfg) }),
    createReminderStoreActivities({ db, defaultZone: ctx.cfg.DEFAULT_TIME_ZONE }),
    createBackfillHandoffActivities({ db: ctx.sql, client: () => ctx.client(), settings: threadSettings, taskQueue }),
    createScheduleHandoffActivities({ db: ctx.sql, client: () => ctx.client(), settings: threadSettings, taskQueue }),
    syncActivitiesOnFirstUse(ctx, taskQueue),
  ) satisfies WorkflowQueueSteps;
}

export type WorkflowQueueActivities = ReturnType<typeof createWorkflowQueueActivities>;

type AllSyncActivities = SyncActivities & SyncFanoutActivities;

/**
 * The sync activities, their dependencies (a Temporal client for the ingest function, per-account
 * Gmail access) built on first use: a worker without Google credentials still runs every other
 * workflow (retention, ...).
 */
function syncActivitiesOnFirstUse(ctx: WorkerContext, taskQueue: string): AllSyncActivities {
  let ready: Promise<AllSyncActivities> | undefined;
  const sync = () => {
    ready ??= (async () =>
      createSyncActivities({
        prisma: ctx.prisma,
        client: await ctx.client(),
        accounts: await createMailboxAccounts(ctx, { metered: false }),
        limiter: ctx.quota,
        threadSettings: threadSettingsFromConfig(ctx.cfg),
        timerLabels: { prefixes: timerLabelPrefixesFromConfig(ctx.cfg), time: ctx.cfg },
        learnFromLabels: ctx.cfg.LEARNING,
        syncTaskQueue: taskQueue,
        threadTaskQueue: taskQueue,
        ...(ctx.cfg.GMAIL_PUSH_TOPIC ? { pushTopic: ctx.cfg.GMAIL_PUSH_TOPIC } : {}),
      }))();
    ready.catch(() => (ready = undefined));
    return ready;
  };
  const onFirstUse = <K extends keyof AllSyncActivities>(name: K): AllSyncActivities[K] =>
    (async (input: Parameters<AllSyncActivities[K]>[0]) => {
      const activity = (await sync())[name] as (i: typeof input) => ReturnType<AllSyncActivities[K]>;
      return activity(input);
    }) as AllSyncActivities[K];
  // Every name the worker registers before the dependencies exist; one left out is a type error.
  return {
    loadCursor: onFirstUse('loadCursor'),
    syncHistoryPage: onFirstUse('syncHistoryPage'),
    scanInbox: onFirstUse('scanInbox'),
    notifyActiveAccounts: onFirstUse('notifyActiveAccounts'),
    renewWatches: onFirstUse('renewWatches'),
  };
}
