// The one way mailbox changes reach thread workflows. The sync worker (and the demo, tests and
// backfill hand-off) call it; it starts the thread's workflow or signals the running one.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { Env } from '../config.js';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { InboxAccountId, InboxState } from '../temporal/search-attributes.js';
import { draftGoneSignal, labelsChangedSignal, newMessageSignal, sentSeenSignal } from './signals.js';
import { threadWorkflow } from './thread-workflow.js';
import { opensThread, threadWorkflowId, type ThreadEvent, type ThreadSettings } from './contracts.js';

export type IngestOutcome = 'started_or_signalled' | 'signalled' | 'ignored_closed';

export function threadSettingsFromConfig(cfg: Env): ThreadSettings {
  return {
    labels: {
      outbox: cfg.LABEL_OUTBOX,
      rework: cfg.LABEL_REWORK,
      done: cfg.LABEL_DONE,
      needsResponse: cfg.LABEL_NEEDS_RESPONSE,
      actionRequired: cfg.LABEL_ACTION_REQUIRED,
    },
    maxReworks: cfg.MAX_REWORKS,
    idleTimeoutMs: 30 * 24 * 3600 * 1000,
    skippedIdleTimeoutMs: 3 * 24 * 3600 * 1000,
    llmAttempts: 3,
    reauthRecheckMs: 6 * 3600 * 1000,
    taskQueues: { gmail: cfg.GMAIL_TASK_QUEUE, llm: cfg.LLM_TASK_QUEUE },
  };
}

const signals = {
  message_added: newMessageSignal,
  labels_changed: labelsChangedSignal,
  draft_gone: draftGoneSignal,
  sent_seen: sentSeenSignal,
} as const;

/** Each event type has its own signal (readable in the Web UI); all take the event itself. */
function signalFor(event: ThreadEvent): SignalDefinition<[ThreadEvent]> {
  return signals[event.type] as SignalDefinition<[ThreadEvent]>;
}

export async function ingestThreadEvent(
  client: Client,
  params: {
    accountId: string;
    threadId: string;
    event: ThreadEvent;
    settings: ThreadSettings;
    /** The workflow task queue (cfg.TEMPORAL_TASK_QUEUE). */
    taskQueue?: string;
  },
): Promise<IngestOutcome> {
  const { accountId, threadId, event, settings, taskQueue = WORKFLOW_TASK_QUEUE } = params;
  const workflowId = threadWorkflowId(accountId, threadId);
  const signal = signalFor(event);
  if (opensThread(event)) {
    await client.workflow.signalWithStart(threadWorkflow, {
      workflowId,
      taskQueue,
      args: [{ accountId, threadId, settings }],
      signal,
      signalArgs: [event],
      typedSearchAttributes: [
        { key: InboxAccountId, value: accountId },
        { key: InboxState, value: 'pending' },
      ],
    });
    return 'started_or_signalled';
  }
  try {
    await client.workflow.getHandle(workflowId).signal(signal, event);
    return 'signalled';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'ignored_closed';
    throw err;
  }
}
