// Worker for the Gmail task queue (its activities: gmail-queue.ts). Its own queue
// lets operators cap Gmail calls (GMAIL_ACTIVITIES_PER_SECOND, all workers of the queue together).
import { Worker } from '@temporalio/worker';
import { createGmailQueueActivities } from './gmail-queue.js';
import { isMainModule } from '../shared/main-module.js';
import { ioWorkerInterceptors, type WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';

export async function createGmailWorker(ctx: WorkerContext, taskQueue = ctx.cfg.GMAIL_TASK_QUEUE): Promise<Worker> {
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    activities: await createGmailQueueActivities(ctx),
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
