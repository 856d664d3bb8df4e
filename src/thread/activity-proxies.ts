// How the thread workflow reaches its activities: task queues, timeouts and retry policies. What
// happens when retries end: Gmail calls on a lost grant wait for the account (src/accounts/
// account-access.ts); LLM errors that retrying cannot fix send the thread to Action Required.
import { ActivityFailure, ApplicationFailure, proxyActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE } from '../shared/task-queues.js';
import type { ThreadSettings } from './contracts.js';

/** Errors after which retrying the step cannot help; the thread goes to Action Required. */
export const GIVE_UP_TYPES = ['LlmOutputInvalidError', 'TokenBudgetExceededError', 'LlmRequestRejectedError', 'LlmAuthError'];

export function failureType(err: unknown): string | undefined {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.type ?? undefined : undefined;
}

export function proxyGmailActivities<T>(settings: ThreadSettings): ActivityInterfaceFor<T> {
  return proxyActivities<T>({
    taskQueue: settings.taskQueues?.gmail ?? GMAIL_TASK_QUEUE,
    startToCloseTimeout: settings.activityTimeouts?.gmailMs ?? '2 minutes',
    retry: {
      initialInterval: '1 second',
      maximumInterval: '5 minutes',
      // A revoked grant fails for good from the activity (nonRetryable) and pauses the thread; a
      // 401 the next attempt's token refresh fixes is retried like any other transient error.
      nonRetryableErrorTypes: ['GmailBadRequestError'],
    },
  });
}

export function proxyLlmActivities<T>(settings: ThreadSettings): ActivityInterfaceFor<T> {
  return proxyActivities<T>({
    taskQueue: settings.taskQueues?.llm ?? LLM_TASK_QUEUE,
    startToCloseTimeout: settings.activityTimeouts?.llmMs ?? '3 minutes',
    retry: {
      initialInterval: '2 seconds',
      maximumInterval: '2 minutes',
      nonRetryableErrorTypes: ['TokenBudgetExceededError', 'LlmRequestRejectedError', 'LlmAuthError'],
    },
  });
}

/** Retries of the Postgres steps (local activities). */
export const STORE_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
} as const;
