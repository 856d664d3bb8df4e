// The learning Schedule's workflow (LEARNING_EVERY, default hourly; docs/learning.md): for each
// account with writing evidence no derivation has read, one LLM activity proposes the writing
// lessons it teaches. A paused LLM or a spent budget skips the account this tick: its evidence stays
// unread and the next tick tries again. Nothing takes hold here: proposals wait for the user.
import { ApplicationFailure, isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { LearningActivities } from './learning-activities.js';
import type { LearningLlmActivities } from './learning-llm-activities.js';

export interface LearningWorkflowInput {
  /** The LLM task queue (LLM_TASK_QUEUE). */
  llmTaskQueue: string;
  /** Only these accounts (`memory learn --account`); absent: every account with new evidence. */
  accountIds?: string[];
}

export interface LearningWorkflowResult {
  accounts: number;
  proposed: string[];
  /** Accounts skipped this tick, with why (LLM paused, budget spent, output that never fit). */
  skipped: { accountId: string; reason: string }[];
}

export async function learningWorkflow(input: LearningWorkflowInput): Promise<LearningWorkflowResult> {
  const store = proxyActivities<LearningActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const llm = proxyActivities<LearningLlmActivities>({
    taskQueue: input.llmTaskQueue,
    startToCloseTimeout: '3 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
  });
  const only = input.accountIds;
  const accounts = (await store.accountsWithNewEvidence({})).filter((id) => !only || only.includes(id));
  const result: LearningWorkflowResult = { accounts: accounts.length, proposed: [], skipped: [] };
  for (const accountId of accounts) {
    try {
      result.proposed.push(...(await llm.proposeWritingLessons({ accountId })).changed);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const cause = err instanceof Error && err.cause instanceof ApplicationFailure ? err.cause : undefined;
      result.skipped.push({ accountId, reason: cause ? `${cause.type ?? 'error'}: ${cause.message}` : String(err) });
    }
  }
  return result;
}
