// Worker for the LLM task queue (its activities: llm-queue.ts). Its own queue lets
// operators cap LLM calls (LLM_ACTIVITIES_PER_SECOND) apart from Gmail's.
import { Worker } from '@temporalio/worker';
import { createLlmClient } from '../llm/index.js';
import { missingModelLine, modelsNotFound } from '../llm/model-check.js';
import { createLogger } from '../shared/log.js';
import { createLlmQueueActivities } from './llm-queue.js';
import { isMainModule } from '../shared/main-module.js';
import { ioWorkerInterceptors, type WorkerContext } from './context.js';
import { runWorkerMain } from './main.js';

/**
 * Says at start-up, one line per model, when ANTHROPIC_MODEL(_<ROLE>) or an agent profile's model does not
 * exist; the calls then pause the account's LLM with reason `model` (src/llm/breaker.ts).
 */
export async function reportMissingModels(ctx: WorkerContext): Promise<string[]> {
  const { cfg } = ctx;
  if (!cfg.ANTHROPIC_API_KEY) return [];
  const client = createLlmClient({ apiKey: cfg.ANTHROPIC_API_KEY, baseURL: cfg.ANTHROPIC_BASE_URL, timeoutMs: 10_000 });
  const profiles = await ctx.prisma.agentProfile.findMany({ where: { model: { not: null } }, select: { name: true, model: true } });
  const settingOf = new Map<string, string>();
  const roles: [string, string | undefined][] = [
    ['ANTHROPIC_MODEL', cfg.ANTHROPIC_MODEL],
    ['ANTHROPIC_MODEL_CLASSIFY', cfg.ANTHROPIC_MODEL_CLASSIFY],
    ['ANTHROPIC_MODEL_EXPECTS_REPLY', cfg.ANTHROPIC_MODEL_EXPECTS_REPLY],
    ['ANTHROPIC_MODEL_DRAFT', cfg.ANTHROPIC_MODEL_DRAFT],
    ['ANTHROPIC_MODEL_AGENT', cfg.ANTHROPIC_MODEL_AGENT],
    ['ANTHROPIC_MODEL_LEARN', cfg.ANTHROPIC_MODEL_LEARN],
  ];
  for (const [setting, model] of roles) if (model && !settingOf.has(model)) settingOf.set(model, setting);
  for (const p of profiles) if (p.model && !settingOf.has(p.model)) settingOf.set(p.model, `agent profile ${p.name}`);
  const lines = (await modelsNotFound(client, [...settingOf.keys()])).map((m) => missingModelLine(m, settingOf.get(m)!));
  const log = createLogger('llm-worker');
  for (const line of lines) log.error(line);
  return lines;
}

export async function createLlmWorker(ctx: WorkerContext, taskQueue = ctx.cfg.LLM_TASK_QUEUE): Promise<Worker> {
  await reportMissingModels(ctx);
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
