// How the thread workflow (every version of it) reaches its Gmail and LLM activities: task queues,
// timeouts, retry policies, and the pause on a revoked Gmail grant.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  log,
  proxyActivities,
  setHandler,
  type ActivityInterfaceFor,
} from '@temporalio/workflow';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE } from '../shared/task-queues.js';
import { accountReconnectedSignal } from './signals.js';
import type { ThreadSettings } from './contracts.js';

const AUTH_FAILURE_TYPES = ['GmailAuthError', 'AccountNotConnectedError'];

/** Errors after which retrying the step cannot help; the thread goes to Action Required. */
export const GIVE_UP_TYPES = ['LlmOutputInvalidError', 'TokenBudgetExceededError', 'LlmRequestRejectedError', 'LlmAuthError'];

export function failureType(err: unknown): string | undefined {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.type ?? undefined : undefined;
}

/**
 * Wraps an activity proxy: on an auth failure, waits (`pause`) and tries the same call again.
 * proxyActivities returns a Proxy without own keys, so this is a Proxy too.
 */
function pauseOnAuthFailure<T extends object>(activities: T, pause: (reason: string) => Promise<void>): T {
  return new Proxy(activities, {
    get(target, name) {
      const fn = Reflect.get(target, name) as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        for (;;) {
          try {
            return await fn(...args);
          } catch (err) {
            const type = failureType(err);
            if (!type || !AUTH_FAILURE_TYPES.includes(type)) throw err;
            await pause(`${String(name)}: ${type}`);
          }
        }
      };
    },
  });
}

/**
 * The Gmail activities. A revoked grant pauses the thread until the account is reconnected (the
 * accountReconnected signal, or a look every reauthRecheckMs); nothing is lost or failed.
 */
export function proxyGmailActivities<T>(settings: ThreadSettings): ActivityInterfaceFor<T> {
  const activities = proxyActivities<T>({
    taskQueue: settings.taskQueues?.gmail ?? GMAIL_TASK_QUEUE,
    startToCloseTimeout: settings.activityTimeouts?.gmailMs ?? '2 minutes',
    retry: {
      initialInterval: '1 second',
      maximumInterval: '5 minutes',
      nonRetryableErrorTypes: ['GmailAuthError', 'AccountNotConnectedError', 'GmailBadRequestError'],
    },
  });
  let reconnected = false;
  setHandler(accountReconnectedSignal, () => {
    reconnected = true;
  });
  return pauseOnAuthFailure(activities, async (reason) => {
    log.warn('Gmail access lost: waiting for the account to be reconnected', { reason });
    reconnected = false;
    await condition(() => reconnected, settings.reauthRecheckMs);
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

/** Retries of the Postgres steps (local activities in v2, activities in v1). */
export const STORE_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
} as const;
