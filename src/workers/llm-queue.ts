// The LLM task queue's activities (LLM_TASK_QUEUE, src/workers/llm-worker.ts): classification,
// drafting, the agent's turns, the learning's writing lessons and the backfill's Message Batch through @anthropic-ai/sdk. Workflow code imports the type only.
import { createAgentLlmActivities } from '../agent/llm-activities.js';
import { createBatchLlmActivities } from '../backfill/batch-llm-activities.js';
import type { BackfillBatchLlmActivities } from '../backfill/activity-contracts.js';
import { learningSettingsFromConfig, llmSettingsFromConfig } from '../config/settings.js';
import { createLearningLlmActivities } from '../learning/learning-llm-activities.js';
import { createLlmClient } from '../llm/index.js';
import { RateLimitGate } from '../llm/rate-gate.js';
import { createLlmActivities } from '../thread/llm-activities.js';
import type { WorkerContext } from './context.js';
import { mergeActivities } from './merge-activities.js';
import type { LearningLlmActivities } from '../learning/activity-contracts.js';
import type { ThreadLlmSteps } from '../thread/activity-contracts.js';

/** Every step the workflows call on the LLM queue, by their contracts. */
type LlmQueueSteps = ThreadLlmSteps & LearningLlmActivities & BackfillBatchLlmActivities;

export function createLlmQueueActivities(ctx: WorkerContext) {
  const { cfg } = ctx;
  if (!cfg.ANTHROPIC_API_KEY) throw new Error('ANTHROPIC_API_KEY is needed (npm run dev uses the Anthropic emulator)');
  const rateGate = cfg.LLM_RATE_LIMIT_PACING ? new RateLimitGate() : undefined;
  const deps = { prisma: ctx.prisma, sql: ctx.sql, anthropic: createLlmClient({ apiKey: cfg.ANTHROPIC_API_KEY, baseURL: cfg.ANTHROPIC_BASE_URL, rateGate }), settings: llmSettingsFromConfig(cfg) };
  return mergeActivities(
    createLlmActivities(deps),
    createAgentLlmActivities(deps),
    createLearningLlmActivities({ ...deps, learning: learningSettingsFromConfig(cfg) }),
    createBatchLlmActivities(deps),
  ) satisfies LlmQueueSteps;
}

export type LlmQueueActivities = ReturnType<typeof createLlmQueueActivities>;
