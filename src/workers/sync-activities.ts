// The sync and backfill hand-off activities as the main-queue worker registers them. Their
// dependencies (a Temporal client for the ingest function, per-account Gmail access) are built on
// first use, so a worker without Google credentials still runs every other workflow (retention, ...).
import { createBackfillHandoffActivities } from '../backfill/handoff-activities.js';
import type { BackfillHandoffActivities } from '../backfill/activity-contracts.js';
import { threadSettingsFromConfig } from '../config.js';
import type { SyncActivities, SyncFanoutActivities } from '../sync/contracts.js';
import { createSyncActivities } from '../sync/sync-activities.js';
import type { WorkerContext } from './context.js';
import { createGmailAccounts } from './gmail-access.js';

type AllSyncActivities = SyncActivities & SyncFanoutActivities;

/** `taskQueue`: the queue the sync and thread workflows run on (the worker's own). */
export function createSyncWorkerActivities(ctx: WorkerContext, taskQueue: string): AllSyncActivities {
  let ready: Promise<AllSyncActivities> | undefined;
  const init = () => {
    ready ??= (async () =>
      createSyncActivities({
        prisma: ctx.prisma,
        client: await ctx.client(),
        accounts: await createGmailAccounts(ctx, { metered: false }),
        limiter: ctx.quota,
        threadSettings: threadSettingsFromConfig(ctx.cfg),
        syncTaskQueue: taskQueue,
        threadTaskQueue: taskQueue,
        ...(ctx.cfg.GMAIL_PUSH_TOPIC ? { pushTopic: ctx.cfg.GMAIL_PUSH_TOPIC } : {}),
      }))();
    ready.catch(() => (ready = undefined));
    return ready;
  };
  const names: (keyof AllSyncActivities)[] = ['loadCursor', 'syncHistoryPage', 'scanInbox', 'notifyActiveAccounts', 'renewWatches'];
  const lazy = {} as Record<string, (input: never) => Promise<unknown>>;
  for (const name of names) {
    lazy[name] = async (input: never) => {
      const acts = await init();
      return (acts[name] as (i: never) => Promise<unknown>)(input);
    };
  }
  return lazy as unknown as AllSyncActivities;
}

export function createHandoffWorkerActivities(ctx: WorkerContext, taskQueue: string): BackfillHandoffActivities {
  return createBackfillHandoffActivities({
    db: ctx.sql,
    client: () => ctx.client(),
    settings: threadSettingsFromConfig(ctx.cfg),
    taskQueue,
  });
}
