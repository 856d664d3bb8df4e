// Worker for the LLM task queue: classification, drafting and the agent's turns through @anthropic-ai/sdk.
// Its own queue lets operators cap LLM calls (LLM_ACTIVITIES_PER_SECOND) apart from Gmail's.
import { Worker } from '@temporalio/worker';
import { createAgentLlmActivities } from '../agent/llm-activities.js';
import { createLlmActivities } from '../thread/llm-activities.js';
import { createLlmClient } from '../llm/index.js';
import { llmSettingsFromConfig } from '../config.js';
import { isMainModule } from '../shared/main-module.js';
import { ioWorkerInterceptors, type WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';

export async function createLlmWorker(ctx: WorkerContext, taskQueue = ctx.cfg.LLM_TASK_QUEUE): Promise<Worker> {
  const { cfg } = ctx;
  if (!cfg.ANTHROPIC_API_KEY) throw new Error('ANTHROPIC_API_KEY is needed (npm run dev uses the Anthropic emulator)');
  const anthropic = createLlmClient({ apiKey: cfg.ANTHROPIC_API_KEY, baseURL: cfg.ANTHROPIC_BASE_URL });
  const settings = llmSettingsFromConfig(cfg);
  return Worker.create({
    connection: ctx.connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    activities: {
      ...createLlmActivities({ prisma: ctx.prisma, sql: ctx.sql, anthropic, settings }),
      ...createAgentLlmActivities({ prisma: ctx.prisma, sql: ctx.sql, anthropic, settings }),
    },
    dataConverter: ctx.dataConverter,
    ...ioWorkerInterceptors(ctx),
    maxTaskQueueActivitiesPerSecond: cfg.LLM_ACTIVITIES_PER_SECOND,
    maxConcurrentActivityTaskExecutions: 100,
    shutdownGraceTime: '10 seconds',
  });
}

if (isMainModule(import.meta.url)) {
  await runWorkerMain('llm-worker', createLlmWorker);
}
