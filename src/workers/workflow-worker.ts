// Worker for the main task queue: every workflow, plus the Postgres activities.
// Run alone with `tsx src/workers/workflow-worker.ts`; `npm run dev` runs it in-process.
import { Worker } from '@temporalio/worker';
import { createRetentionActivities } from '../retention/retention-activities.js';
import { createStoreActivities } from '../thread/store-activities.js';
import { createActionStoreActivities } from '../actions/store-activities.js';
import { createAgentStoreActivities } from '../agent/store-activities.js';
import { createBackfillStoreActivities } from '../backfill/store-activities.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { backfillAlertSettingsFromConfig } from '../config.js';
import { createHandoffWorkerActivities, createSyncWorkerActivities } from './sync-activities.js';
import type { WorkerContext } from './context.js';
import { getWorkflowBundle } from './workflow-bundle.js';
import { runWorkerMain } from './main.js';
import { isMainModule } from '../shared/main-module.js';
import { workerTracingOptions } from '../temporal/tracing.js';

export async function createWorkflowWorker(ctx: WorkerContext, taskQueue = ctx.cfg.TEMPORAL_TASK_QUEUE): Promise<Worker> {
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundle: await getWorkflowBundle(),
    activities: {
      ...createRetentionActivities(ctx.prisma),
      ...createStoreActivities(ctx.prisma),
      ...createActionStoreActivities(prismaExecutor(ctx.prisma)),
      ...createAgentStoreActivities(prismaExecutor(ctx.prisma)),
      ...createBackfillStoreActivities(prismaExecutor(ctx.prisma), backfillAlertSettingsFromConfig(ctx.cfg)),
      ...createHandoffWorkerActivities(ctx, taskQueue),
      ...createSyncWorkerActivities(ctx, taskQueue),
    },
    dataConverter: ctx.dataConverter,
    ...workerTracingOptions(),
    // In-flight activities get this long to finish after SIGINT/SIGTERM before they are cancelled.
    shutdownGraceTime: '10 seconds',
  });
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('workflow-worker', createWorkflowWorker);
}
