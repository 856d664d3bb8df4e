// The one way mailbox changes reach thread workflows. The sync worker (and the demo, tests and
// backfill hand-off) call it; it starts the thread's workflow or signals the running one.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { priorityFor, type WorkKind } from '../temporal/priority.js';
import { InboxAccountId, InboxState } from '../temporal/search-attributes.js';
import { parseAgentProposal } from './agent-proposals.js';
import { agentProposalSignal, draftGoneSignal, labelsChangedSignal, newMessageSignal, reclassifySignal, sentSeenSignal, TIMER_SIGNALS } from './signals.js';
import { parseTimerRequestEvent } from './timer-requests.js';
import { threadWorkflow } from './thread-workflow.js';
import { opensThread, threadWorkflowId, type AgentProposalEvent, type LabelsChangedEvent, type MailboxEvent, type ThreadSettings, type TimerRequestEvent } from './contracts.js';

export type IngestOutcome = 'started_or_signalled' | 'signalled' | 'ignored_closed';

const signals = {
  message_added: newMessageSignal,
  labels_changed: labelsChangedSignal,
  draft_gone: draftGoneSignal,
  sent_seen: sentSeenSignal,
} as const;

/** Each event type has its own signal (readable in the Web UI); all take the event itself. */
function signalFor(event: MailboxEvent): SignalDefinition<[MailboxEvent]> {
  return signals[event.type] as SignalDefinition<[MailboxEvent]>;
}

export async function ingestThreadEvent(
  client: Client,
  params: {
    accountId: string;
    threadId: string;
    event: MailboxEvent;
    settings: ThreadSettings;
    /** The workflow task queue (cfg.TEMPORAL_TASK_QUEUE). */
    taskQueue?: string;
    /** Whose turn a new thread workflow takes (live mail unless a backfill hands it over). */
    work?: WorkKind;
  },
): Promise<IngestOutcome> {
  const { accountId, threadId, event, settings, taskQueue = WORKFLOW_TASK_QUEUE, work = 'live' } = params;
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
      priority: priorityFor(work, accountId),
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

/**
 * A label change the thread learns from (a move back to the inbox, the user's own labels), for a
 * thread whose workflow has ended: a running workflow is signalled (one started meanwhile), else a
 * learn-only run starts with it, records the corrections and ends (thread-workflow.ts), without
 * classifying or drafting anything again.
 */
export async function learnAfterClose(
  client: Client,
  params: { accountId: string; threadId: string; event: LabelsChangedEvent; settings: ThreadSettings; taskQueue?: string },
): Promise<void> {
  const { accountId, threadId, event, settings, taskQueue = WORKFLOW_TASK_QUEUE } = params;
  await client.workflow.signalWithStart(threadWorkflow, {
    workflowId: threadWorkflowId(accountId, threadId),
    taskQueue,
    args: [{ accountId, threadId, settings, learnOnly: true }],
    signal: labelsChangedSignal,
    signalArgs: [event],
    typedSearchAttributes: [{ key: InboxAccountId, value: accountId }],
    priority: priorityFor('live', accountId),
  });
}

/** Signals the thread's running workflow, or starts a run (from what earlier runs left) with the signal. */
async function signalOrStartThread<E>(
  client: Client,
  params: { accountId: string; threadId: string; settings: ThreadSettings; taskQueue?: string },
  signal: SignalDefinition<[E]>,
  event: E,
): Promise<void> {
  const { accountId, threadId, settings, taskQueue = WORKFLOW_TASK_QUEUE } = params;
  await client.workflow.signalWithStart(threadWorkflow, {
    workflowId: threadWorkflowId(accountId, threadId),
    taskQueue,
    args: [{ accountId, threadId, settings }],
    signal,
    signalArgs: [event],
    typedSearchAttributes: [{ key: InboxAccountId, value: accountId }],
    priority: priorityFor('live', accountId),
  });
}

/**
 * Asks the thread to classify its latest message again (`threads reclassify`): the running workflow
 * is signalled, or a new run starts from what earlier runs left (a skipped thread's run ends after
 * its idle timeout).
 */
export async function requestReclassify(
  client: Client,
  params: { accountId: string; threadId: string; settings: ThreadSettings; requestId: string; taskQueue?: string },
): Promise<void> {
  await signalOrStartThread(client, params, reclassifySignal, { type: 'reclassify', requestId: params.requestId });
}

/**
 * Asks the thread for a timer (`threads snooze|unsnooze|remind|send-later|cancel`, a Gmail label):
 * checked here (timer-requests.ts) and again by the workflow; the running workflow is signalled, or a
 * new run starts from what earlier runs left. A repeated request id is taken once.
 */
export async function requestTimer(
  client: Client,
  params: { accountId: string; threadId: string; settings: ThreadSettings; event: TimerRequestEvent; taskQueue?: string },
): Promise<void> {
  const parsed = parseTimerRequestEvent(params.event);
  if ('error' in parsed) throw new TypeError(`timer request refused: ${parsed.error}`);
  const { event } = parsed;
  await signalOrStartThread(client, params, TIMER_SIGNALS[event.request.kind] as SignalDefinition<[TimerRequestEvent]>, event);
}

/**
 * Hands a scheduled run's proposed actions to the thread (src/schedules): checked here and again by
 * the workflow; the running workflow is signalled, or a new run starts from what earlier runs left.
 * A repeated request id is taken once, and each action's journal key makes it happen once.
 */
export async function requestAgentProposal(
  client: Client,
  params: { accountId: string; threadId: string; settings: ThreadSettings; event: AgentProposalEvent; taskQueue?: string },
): Promise<void> {
  const parsed = parseAgentProposal(params.event);
  if ('error' in parsed) throw new TypeError(`agent proposal refused: ${parsed.error}`);
  const { event } = parsed;
  await signalOrStartThread(client, params, agentProposalSignal, event);
}
