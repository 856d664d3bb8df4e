// Worker for the main task queue: every workflow (src/workflows/index.ts) and the activities that
// run beside them (workflow-queue.ts). `npm run dev` runs it in-process.
import { Worker, type WorkerOptions } from '@temporalio/worker';
import type { Env } from '../config/env.js';
import { createWorkflowQueueActivities } from './workflow-queue.js';
import { isMainModule } from '../shared/main-module.js';
import { ioWorkerInterceptors, type WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';
import { getWorkflowBundle } from './workflow-bundle.js';
import { startImapWatch } from '../sync/imap-watch.js';
import { notifySync } from '../sync/notify.js';
import { TokenVault } from '../accounts/token-vault.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import { createLogger } from '../shared/log.js';

const log = createLogger('workflow-worker');

/** The workflow cache, bounded on purpose: a waiting thread lives in Temporal's history, not in this worker's memory. */
export function workflowCacheOptions(cfg: Pick<Env, 'WORKFLOW_CACHE_SIZE'>): Pick<WorkerOptions, 'maxCachedWorkflows' | 'stickyQueueScheduleToStartTimeout'> {
  return { maxCachedWorkflows: cfg.WORKFLOW_CACHE_SIZE, stickyQueueScheduleToStartTimeout: '10 seconds' };
}

export async function createWorkflowWorker(ctx: WorkerContext, taskQueue = ctx.cfg.TEMPORAL_TASK_QUEUE): Promise<Worker> {
  if (ctx.cfg.IMAP_IDLE) await watchImapAccounts(ctx, taskQueue);
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundle: await getWorkflowBundle(),
    activities: createWorkflowQueueActivities(ctx, taskQueue),
    dataConverter: ctx.dataConverter,
    ...workflowCacheOptions(ctx.cfg),
    ...ioWorkerInterceptors(ctx),
    // In-flight activities get this long to finish after SIGINT/SIGTERM before they are cancelled.
    shutdownGraceTime: '10 seconds',
  });
}

/** IMAP's push wakes the syncs, which run on this queue; a worker without the token key has no IMAP accounts to read. */
async function watchImapAccounts(ctx: WorkerContext, taskQueue: string): Promise<void> {
  let key: Buffer;
  try {
    key = await resolveTokenKey(ctx.cfg);
  } catch (err) {
    log.warn(`IMAP accounts are not watched (their sync polls): ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  const watch = startImapWatch({
    prisma: ctx.prisma,
    vault: new TokenVault(key),
    notify: async (accountId) => notifySync({ client: await ctx.client(), taskQueue }, accountId, { source: 'push' }),
  });
  ctx.onClose(() => watch.close());
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('workflow-worker', createWorkflowWorker);
}
