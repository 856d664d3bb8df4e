// Client code of the bulk actions: start one (or its dry run), read its progress, undo it batch by
// batch (each batch's journal entry, newest first, through the actions' undo).
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { SqlExecutor } from '../db/sql-executor.js';
import { searchableLabelName } from '../gmail/label-search.js';
import { decideAction, type DecideDeps, type DecisionOutcome } from '../thread/decide.js';
import { bulkWorkflowId, MAX_BULK_BATCH, type BulkOperation, type BulkProgress, type BulkSelection } from './contracts.js';
import { bulkProgressQuery, bulkWorkflow } from './bulk-workflow.js';

export interface StartBulk {
  accountId: string;
  selection: BulkSelection;
  operation: BulkOperation;
  /** The label's name (operation label). */
  label?: string;
  dryRun: boolean;
  batchSize?: number;
  taskQueue: string;
  gmailTaskQueue: string;
  /** How soon a worker that died mid-batch is noticed (the Gmail activities' heartbeat timeout); default 20 s. */
  heartbeatTimeoutMs?: number;
}

export async function startBulk(client: Client, input: StartBulk): Promise<WorkflowHandle<typeof bulkWorkflow>> {
  const batchSize = input.batchSize ?? MAX_BULK_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BULK_BATCH) throw new Error(`batch size: 1 to ${MAX_BULK_BATCH}`);
  if ((input.operation === 'label') !== (input.label !== undefined)) throw new Error('a label is given with the operation label, and only then');
  if (input.label !== undefined && !searchableLabelName(input.label)) throw new Error(`${JSON.stringify(input.label)} cannot be a bulk label: a name of letters, digits, blanks and - _ . /, not a system label`);
  return client.workflow.start(bulkWorkflow, {
    workflowId: bulkWorkflowId(input.accountId, randomUUID()),
    taskQueue: input.taskQueue,
    args: [{ accountId: input.accountId, selection: input.selection, operation: input.operation, ...(input.label !== undefined ? { label: input.label.trim() } : {}), dryRun: input.dryRun, batchSize, gmailTaskQueue: input.gmailTaskQueue, ...(input.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: input.heartbeatTimeoutMs } : {}) }],
  });
}

/** Its progress: the query while it runs, the result once it ended. */
export async function bulkProgress(handle: WorkflowHandle<typeof bulkWorkflow>): Promise<BulkProgress> {
  const { status } = await handle.describe();
  if (status.name === 'COMPLETED') return handle.result();
  return handle.query(bulkProgressQuery);
}

/** Undoes every done batch of a bulk workflow (all its runs), newest first: exactly the ids each moved. */
export async function undoBulk(deps: DecideDeps & { db: SqlExecutor }, workflowId: string, by: string): Promise<DecisionOutcome[]> {
  const rows = await deps.db.query<{ id: string }>(`SELECT id FROM actions WHERE workflow_id = $1 AND gmail_thread_id = 'bulk' AND state = 'done' ORDER BY created_at DESC, id DESC`, [workflowId]);
  const outcomes: DecisionOutcome[] = [];
  for (const row of rows) outcomes.push(await decideAction(deps, row.id, 'undo', by));
  return outcomes;
}
