// Worker for the LLM task queue (its activities: llm-queue.ts). Its own queue lets
// operators cap LLM calls (LLM_ACTIVITIES_PER_SECOND) apart from Gmail's.
import { Worker } from '@temporalio/worker';
import { createLlmQueueActivities } from './llm-queue.js';
import { isMainModule } from '../shared/main-module.js';
import { ioWorkerInterceptors, type WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';

export async function createLlmWorker(ctx: WorkerContext, taskQueue = ctx.cfg.LLM_TASK_QUEUE): Promise<Worker> {
  return Worker.create({
    connection: ctx.connection,
    namespace: ctx.cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    activities: createLlmQueueActivities(ctx),
    dataConverter: ctx.dataConverter,
    ...ioWorkerInterceptors(ctx),
    maxTaskQueueActivitiesPerSecond: ctx.cfg.LLM_ACTIVITIES_PER_SECOND,
    maxConcurrentActivityTaskExecutions: 100,
    shutdownGraceTime: '10 seconds',
  });
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('llm-worker', createLlmWorker);
}
