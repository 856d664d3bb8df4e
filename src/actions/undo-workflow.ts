// Undo of a done action, as its own small workflow (id `undo/<action id>`): the action's thread
// workflow may have closed long ago, and one id per action makes a second click the same undo.
import { proxyActivities } from '@temporalio/workflow';
import { GMAIL_TASK_QUEUE } from '../shared/task-queues.js';
import type { ActionGmailActivities } from './activity-contracts.js';

export interface UndoActionInput {
  actionId: string;
  /** Who asked: cli, page, signal. */
  by: string;
  gmailTaskQueue?: string;
}

export function undoWorkflowId(actionId: string): string {
  return `undo/${actionId}`;
}

export async function undoActionWorkflow(input: UndoActionInput): Promise<{ undone: boolean; why?: string }> {
  const { undoAction } = proxyActivities<ActionGmailActivities>({
    taskQueue: input.gmailTaskQueue ?? GMAIL_TASK_QUEUE,
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 20, nonRetryableErrorTypes: ['GmailBadRequestError'] },
  });
  return undoAction({ actionId: input.actionId, by: input.by });
}
