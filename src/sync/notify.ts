// Hands a notification to an account's sync workflow, starting it when it is not running
// (signal-with-start by workflow id: one sync workflow per account, whoever asks first).
import type { Client } from '@temporalio/client';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { priorityFor } from '../temporal/priority.js';
import { InboxAccountId } from '../temporal/search-attributes.js';
import { accountReconnectedSignal } from '../accounts/account-access.js';
import { syncFullScanSignal, syncNotifySignal, syncWorkflow } from './sync-workflow.js';
import { syncWorkflowId, type FullScanRequest, type SyncNotification, type SyncSettings } from './contracts.js';

export interface SyncTarget {
  client: Client;
  /** Task queue of the sync workflows (the main queue outside tests). */
  taskQueue?: string;
  settings?: Partial<SyncSettings>;
}

function startOptions(target: SyncTarget, accountId: string) {
  return {
    workflowId: syncWorkflowId(accountId),
    taskQueue: target.taskQueue ?? WORKFLOW_TASK_QUEUE,
    args: [{ accountId, ...(target.settings ? { settings: target.settings } : {}) }] as Parameters<typeof syncWorkflow>,
    typedSearchAttributes: [{ key: InboxAccountId, value: accountId }],
    priority: priorityFor('live', accountId),
  };
}

export async function notifySync(target: SyncTarget, accountId: string, notification: SyncNotification): Promise<void> {
  await target.client.workflow.signalWithStart(syncWorkflow, {
    ...startOptions(target, accountId),
    signal: syncNotifySignal,
    signalArgs: [notification],
  });
}

export async function requestFullScan(target: SyncTarget, accountId: string, request: FullScanRequest): Promise<void> {
  await target.client.workflow.signalWithStart(syncWorkflow, {
    ...startOptions(target, accountId),
    signal: syncFullScanSignal,
    signalArgs: [request],
  });
}

export async function notifyReconnected(target: SyncTarget, accountId: string): Promise<void> {
  await target.client.workflow.signalWithStart(syncWorkflow, {
    ...startOptions(target, accountId),
    signal: accountReconnectedSignal,
    signalArgs: [],
  });
}
