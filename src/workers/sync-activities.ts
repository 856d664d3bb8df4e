// The sync activities as the main-queue worker registers them. Their dependencies (a Temporal
// client for the ingest function, per-account Gmail access) are built on first use, so a worker
// without Google credentials still runs every other workflow (retention, ...).
import type { Client } from '@temporalio/client';
import type { Env } from '../config.js';
import type { PrismaClient } from '../db/client.js';
import { createSyncActivities, type SyncActivityDeps } from '../sync/sync-activities.js';
import { threadSettingsFromConfig } from '../thread/ingest.js';
import { processQuotaLimiter } from '../quota/index.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { createGmailAccounts } from './gmail-worker.js';
import type { WorkerContext } from './context.js';
import type { SyncActivities, SyncFanoutActivities } from '../sync/contracts.js';

type AllSyncActivities = SyncActivities & SyncFanoutActivities;

export interface SyncWorkerOptions {
  /** The queue the sync workflows run on (the worker's own queue). */
  taskQueue: string;
  /** A client to reuse; otherwise one is connected on first use. */
  client?: Client;
}

export function syncActivityDepsFromConfig(
  cfg: Env,
  base: { prisma: PrismaClient; client: Client; accounts: SyncActivityDeps['accounts']; taskQueue: string },
): SyncActivityDeps {
  return {
    prisma: base.prisma,
    client: base.client,
    accounts: base.accounts,
    threadSettings: threadSettingsFromConfig(cfg),
    syncTaskQueue: base.taskQueue,
    threadTaskQueue: base.taskQueue,
    ...(cfg.GMAIL_PUSH_TOPIC ? { pushTopic: cfg.GMAIL_PUSH_TOPIC } : {}),
  };
}

export function createSyncWorkerActivities(ctx: WorkerContext, opts: SyncWorkerOptions): AllSyncActivities {
  let ready: Promise<AllSyncActivities> | undefined;
  const init = () => {
    ready ??= (async () => {
      const client = opts.client ?? (await connectClient(ctx.cfg, await resolvePayloadKeys(ctx.cfg)));
      const accounts = await createGmailAccounts(ctx);
      return createSyncActivities({
        ...syncActivityDepsFromConfig(ctx.cfg, { prisma: ctx.prisma, client, accounts, taskQueue: opts.taskQueue }),
        limiter: processQuotaLimiter(ctx.prisma),
      });
    })();
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
