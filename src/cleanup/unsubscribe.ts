// Client code of the unsubscribe: starts (or finds running) the sender's unsubscribe workflow and
// reads what became of it. Asking again while one runs is the same unsubscribe.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ActionReason } from '../actions/contracts.js';
import { canonicalAddress } from '../gmail/addresses.js';
import { DEFAULT_UNSUBSCRIBE_SETTINGS, unsubscribeWorkflowId, type UnsubscribeSettings, type UnsubscribeStatus } from './contracts.js';
import { unsubscribeStatusQuery, unsubscribeWorkflow } from './unsubscribe-workflow.js';

export interface StartUnsubscribe {
  accountId: string;
  sender: string;
  reason: ActionReason;
  taskQueue: string;
  gmailTaskQueue: string;
  settings?: Partial<UnsubscribeSettings>;
}

export async function startUnsubscribe(client: Client, input: StartUnsubscribe): Promise<WorkflowHandle<typeof unsubscribeWorkflow>> {
  const sender = canonicalAddress(input.sender);
  return client.workflow.start(unsubscribeWorkflow, {
    workflowId: unsubscribeWorkflowId(input.accountId, sender),
    taskQueue: input.taskQueue,
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [
      {
        accountId: input.accountId,
        sender,
        reason: input.reason,
        settings: { ...DEFAULT_UNSUBSCRIBE_SETTINGS, ...input.settings },
        gmailTaskQueue: input.gmailTaskQueue,
      },
    ],
  });
}

/** The workflow's status now: its query while it runs, its result once it ended. */
export async function unsubscribeStatus(handle: WorkflowHandle<typeof unsubscribeWorkflow>): Promise<UnsubscribeStatus> {
  const { status } = await handle.describe();
  if (status.name === 'COMPLETED') return handle.result();
  if (status.name !== 'RUNNING') return { state: 'failed', note: `the unsubscribe workflow ${status.name.toLowerCase()}` };
  return handle.query(unsubscribeStatusQuery);
}
