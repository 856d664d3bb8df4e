// How the thread workflow reaches its activities: task queues, timeouts and retry policies. What
// happens when retries end: Gmail calls on a lost grant wait for the account (src/accounts/
// account-access.ts); LLM calls wait while the account's LLM is paused (llm-pause.ts); LLM errors
// that retrying cannot fix send the thread to Action Required.
import { proxyActivities, type ActivityInterfaceFor, type RetryPolicy } from '@temporalio/workflow';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE } from '../shared/task-queues.js';
import type { ThreadSettings } from './contracts.js';

/**
 * Errors after which retrying the step cannot help; the thread goes to Action Required. Outages, a
 * refused key or credits, an unknown model and a spent budget are not among them: the LLM pauses and
 * the thread waits. A refusal (`the model declined`) and an answer still cut at max_tokens after the
 * larger budget are.
 */
export const GIVE_UP_TYPES = ['LlmOutputInvalidError', 'LlmRequestRejectedError', 'LlmRefusedError', 'LlmOutputTruncatedError'];

const QUEUES = {
  gmail: {
    taskQueue: GMAIL_TASK_QUEUE,
    timeout: '2 minutes',
    // A revoked grant fails for good from the activity (nonRetryable) and pauses the thread; a 401
    // the next attempt's token refresh fixes is retried like any other transient error.
    retry: { initialInterval: '1 second', maximumInterval: '5 minutes', nonRetryableErrorTypes: ['GmailBadRequestError'] },
    heartbeat: '30 seconds',
  },
  llm: {
    taskQueue: LLM_TASK_QUEUE,
    timeout: '3 minutes',
    retry: {
      initialInterval: '2 seconds',
      maximumInterval: '2 minutes',
      nonRetryableErrorTypes: ['LlmRequestRejectedError'],
    },
    heartbeat: '30 seconds',
  },
} satisfies Record<string, { taskQueue: string; timeout: string; retry: RetryPolicy; heartbeat: string }>;

/**
 * How long a step is retried on errors a retry could fix before the thread gives up on it, and how
 * often a thread waiting through an outage of the whole account looks again (src/accounts/stuck-steps.ts).
 */
export const STEP_LIMITS = { giveUpAfterMs: 30 * 60_000, outageRecheckMs: 60_000 };

/** The activities of one task queue, with the settings' queue name and timeouts when they give them. */
export function proxyQueueActivities<T>(queue: keyof typeof QUEUES, settings: ThreadSettings): ActivityInterfaceFor<T> {
  const defaults = QUEUES[queue];
  return proxyActivities<T>({
    taskQueue: settings.taskQueues?.[queue] ?? defaults.taskQueue,
    // Every attempt together: a step stuck on one message's error ends (stuck-steps.ts decides what then).
    scheduleToCloseTimeout: (settings.stepLimits ?? STEP_LIMITS).giveUpAfterMs,
    startToCloseTimeout: settings.activityTimeouts?.[`${queue}Ms`] ?? defaults.timeout,
    // The activities heartbeat while their call runs (src/shared/activity-heartbeat.ts).
    heartbeatTimeout: settings.heartbeatTimeouts?.[`${queue}Ms`] ?? defaults.heartbeat,
    retry: defaults.retry,
  });
}

/** Retries of the Postgres steps (local activities). */
export const STORE_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
} as const;

/**
 * The approval notification (Gmail task queue, where the I/O workers are): a few attempts, then the
 * thread goes on without it; the approval waits on the page, the CLI and in Gmail all the same.
 */
export function proxyNotifyActivities<T>(settings: ThreadSettings): ActivityInterfaceFor<T> {
  return proxyActivities<T>({
    taskQueue: settings.taskQueues?.gmail ?? GMAIL_TASK_QUEUE,
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 8 },
  });
}

/** The one call that asks whether the account's Gmail answers (stuck-steps.ts): once, no retries. */
export function proxyGmailProbe<T>(settings: ThreadSettings): ActivityInterfaceFor<T> {
  return proxyActivities<T>({
    taskQueue: settings.taskQueues?.gmail ?? GMAIL_TASK_QUEUE,
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 1 },
  });
}
