// Worker for the main task queue: every workflow (src/workflows/index.ts) and the activities that
// run beside them (workflow-queue.ts). `npm run dev` runs it in-process.
import { Worker, type WorkerOptions } from '@temporalio/worker';
import type { Env } from '../config/env.js';
import { createWorkflowQueueActivities } from './workflow-queue.js';
import { isMainModule } from '../shared/main-module.js';
import { workerTracingOptions } from '../temporal/tracing.js';
import type { WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';
import { getWorkflowBundle } from './workflow-bundle.js';

/** The workflow cache, bounded on purpose: a waiting thread lives in Temporal's history, not in this worker's memory. */
export function workflowCacheOptions(cfg: Pick<Env, 'WORKFLOW_CACHE_SIZE'>): Pick<WorkerOptions, 'maxCachedWorkflows' | 'stickyQueueScheduleToStartTimeout'> {
  return { maxCachedWorkflows: cfg.WORKFLOW_CACHE_SIZE, stickyQueueScheduleToStartTimeout: '10 seconds' };
}

export async function createWorkflowWorker(ctx: WorkerContext, taskQueue = ctx.cfg.TEMPORAL_TASK_QUEUE): Promise<Worker> {
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundle: await getWorkflowBundle(),
    activities: createWorkflowQueueActivities(ctx, taskQueue),
    dataConverter: ctx.dataConverter,
    ...workflowCacheOptions(ctx.cfg),
    ...workerTracingOptions(),
    // In-flight activities get this long to finish after SIGINT/SIGTERM before they are cancelled.
    shutdownGraceTime: '10 seconds',
  });
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('workflow-worker', createWorkflowWorker);
}
