// Worker for the Gmail task queue: every Gmail side effect. Its own queue lets operators cap
// Gmail calls (GMAIL_ACTIVITIES_PER_SECOND, all workers of the queue together).
import { Worker } from '@temporalio/worker';
import { GmailAccounts } from '../accounts/gmail-accounts.js';
import { TokenVault } from '../accounts/token-vault.js';
import { createGmailActivities } from '../thread/gmail-activities.js';
import { createBackfillGmailActivities } from '../backfill/gmail-activities.js';
import { prismaExecutor, processQuotaLimiter, type QuotaLimiter } from '../quota/index.js';
import type { GmailCallGate } from '../gmail/gmail-service.js';
import type { Env } from '../config.js';
import { isMainModule } from '../shared/main-module.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import type { WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';

/**
 * Gmail access for activities. With `limiter`, every call is metered by it; the backfill
 * activities meter their batches themselves and take an unmetered one.
 */
export async function createGmailAccounts(ctx: WorkerContext, limiter?: QuotaLimiter): Promise<GmailAccounts> {
  const gateFor = limiter
    ? (accountId: string): GmailCallGate =>
        (method, call) =>
          limiter.run(accountId, method, call)
    : undefined;
  return new GmailAccounts(ctx.prisma, new TokenVault(await resolveTokenKey(ctx.cfg)), gmailOAuthSettings(ctx.cfg), gateFor);
}

export function gmailOAuthSettings(cfg: Env) {
  if (!cfg.GOOGLE_CLIENT_ID || !cfg.GOOGLE_CLIENT_SECRET) {
    throw new Error('GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are needed for Gmail (npm run dev uses the emulator)');
  }
  return {
    clientId: cfg.GOOGLE_CLIENT_ID,
    clientSecret: cfg.GOOGLE_CLIENT_SECRET,
    tokenUrl: cfg.GOOGLE_OAUTH_TOKEN_URL,
    revokeUrl: cfg.GOOGLE_OAUTH_REVOKE_URL,
    rootUrl: cfg.GMAIL_API_ROOT_URL,
  };
}

export async function createGmailWorker(ctx: WorkerContext, taskQueue = ctx.cfg.GMAIL_TASK_QUEUE): Promise<Worker> {
  const limiter = processQuotaLimiter(ctx.prisma);
  const accounts = await createGmailAccounts(ctx);
  // The thread activities' calls draw from the account's shared budget (with sync and backfill).
  const meteredAccounts = await createGmailAccounts(ctx, limiter);
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    activities: {
      ...createGmailActivities(meteredAccounts),
      ...createBackfillGmailActivities({ accounts, limiter, db: prismaExecutor(ctx.prisma) }),
    },
    dataConverter: ctx.dataConverter,
    maxTaskQueueActivitiesPerSecond: ctx.cfg.GMAIL_ACTIVITIES_PER_SECOND,
    maxConcurrentActivityTaskExecutions: 50,
    shutdownGraceTime: '10 seconds',
  });
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('gmail-worker', createGmailWorker);
}
