// The user's decisions about actions, from outside the workflows (the CLI, the approvals page,
// Discord's link): approve and reject go to the thread workflow that waits for them, as a signal;
// undo of a scheduled send too (its workflow holds the timer); undo of a done action runs the undo
// workflow. Each reports what became of the action, read back from the journal.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SqlExecutor } from '../db/sql-executor.js';
import { actionDecisionSignal } from './signals.js';
import { threadWorkflowId, type ThreadSettings } from './contracts.js';
import { requestTimer } from './ingest.js';
import { CLEANUP_KINDS, reversalOf, type ActionDecisionEvent, type ActionState, type Decision, type JournaledAction } from '../actions/contracts.js';
import { listActions, loadAction, type ActionFilter } from '../actions/journal.js';
import { undoActionWorkflow, undoWorkflowId } from '../actions/undo-workflow.js';

export interface DecideDeps {
  client: Client;
  db: SqlExecutor;
  /** The main task queue (the undo workflow's) and the Gmail one (its activity's). */
  taskQueue: string;
  gmailTaskQueue: string;
}

export interface DecisionOutcome {
  /** Whether the decision took effect. */
  ok: boolean;
  /** One line for the user: what happened, or why nothing did. */
  message: string;
  action: JournaledAction | null;
}

const WAITS_FOR: Record<Decision, ActionState[]> = {
  approve: ['awaiting_approval'],
  reject: ['awaiting_approval', 'scheduled'],
  undo: ['scheduled', 'done'],
};

/** The states a decision leads to, once its workflow has acted (approved is a step on the way). */
const SETTLES_IN: Record<Decision, ActionState[]> = {
  approve: ['scheduled', 'done', 'failed'],
  reject: ['rejected', 'undone'],
  undo: ['undone'],
};

export async function decideAction(deps: DecideDeps, actionId: string, decision: Decision, by: string, waitMs = 20_000): Promise<DecisionOutcome> {
  const action = await loadAction(deps.db, actionId);
  if (!action) return { ok: false, message: `no action ${actionId}`, action: null };
  if (!WAITS_FOR[decision].includes(action.state)) {
    const why = decision === 'undo' ? reversalOf(action, action.state) : undefined;
    const reason = why?.kind === 'none' ? why.why : `it is ${action.state}`;
    return { ok: false, message: `cannot ${decision} action ${actionId} (${describe(action)}): ${reason}`, action };
  }

  if (decision === 'undo' && action.state === 'done') {
    const result = await deps.client.workflow.execute(undoActionWorkflow, {
      workflowId: undoWorkflowId(actionId),
      taskQueue: deps.taskQueue,
      args: [{ actionId, by, gmailTaskQueue: deps.gmailTaskQueue }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const after = await loadAction(deps.db, actionId);
    return result.undone
      ? { ok: true, message: `undone: ${describe(action)}`, action: after }
      : { ok: false, message: `cannot undo ${describe(action)}: ${result.why ?? 'unknown'}`, action: after };
  }

  const event: ActionDecisionEvent = { type: 'action_decision', actionId, decision, by };
  try {
    // A clean-up's action waits in the clean-up's workflow; every other in its thread's.
    const waiting = (CLEANUP_KINDS as readonly string[]).includes(action.kind) ? action.workflowId : threadWorkflowId(action.accountId, action.threadId);
    await deps.client.workflow.getHandle(waiting).signal(actionDecisionSignal, event);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return { ok: false, message: `the workflow of action ${actionId} is no longer running: it cannot be ${decision}d`, action };
  }
  const settled = await untilSettled(deps.db, actionId, SETTLES_IN[decision], waitMs);
  if (!settled) return { ok: false, message: `sent ${decision} for ${describe(action)}; its thread has not acted on it yet`, action };
  const ok = SETTLES_IN[decision].includes(settled.state) && settled.state !== 'failed';
  return { ok, message: `${describe(settled)}: ${settled.state}${settled.note ? ` (${settled.note})` : ''}`, action: settled };
}

/** Undoes, newest first, everything the assistant did that can still be taken back. */
export async function undoSince(deps: DecideDeps, filter: Pick<ActionFilter, 'accountId' | 'since'>, by: string): Promise<DecisionOutcome[]> {
  const actions = await listActions(deps.db, { ...filter, states: ['done', 'scheduled'], limit: 1000 });
  const outcomes: DecisionOutcome[] = [];
  for (const action of actions) {
    // What the user asked for is theirs, and the lifecycle's bookkeeping (Outbox off once the draft
    // went out) is not the assistant acting on mail.
    if (action.reason.source === 'user' || action.reason.source === 'system') continue;
    outcomes.push(await decideAction(deps, action.id, 'undo', by));
  }
  return outcomes;
}

/**
 * Cancels a follow-up (the approvals page's list): the thread's cancelTimer signal, as `threads
 * cancel --timer follow_up` sends it, then the journal read back. One still waiting is undone; one
 * that fell due has nothing left to undo, and the thread stops waiting for the answer (closed as sent).
 */
export async function cancelFollowUp(
  deps: DecideDeps & { threadSettings: ThreadSettings },
  actionId: string,
  waitMs = 20_000,
): Promise<DecisionOutcome> {
  const action = await loadAction(deps.db, actionId);
  if (!action || action.kind !== 'follow_up') return { ok: false, message: `no follow-up ${actionId}`, action };
  if (action.state !== 'scheduled' && action.state !== 'done') return { ok: false, message: `cannot cancel ${describe(action)}: it is ${action.state}`, action };
  await requestTimer(deps.client, {
    accountId: action.accountId,
    threadId: action.threadId,
    settings: deps.threadSettings,
    event: { type: 'timer_request', requestId: randomUUID(), request: { kind: 'cancel', timer: 'follow_up' }, by: 'user' },
    taskQueue: deps.taskQueue,
  });
  if (action.state === 'done') {
    const stopped = await untilNotAwaiting(deps.db, action, waitMs);
    return stopped
      ? { ok: true, message: `no longer waiting for an answer on thread ${action.threadId}`, action }
      : { ok: false, message: `asked the thread to stop waiting for an answer; it has not acted on it yet`, action };
  }
  const settled = await untilSettled(deps.db, actionId, ['undone', 'done'], waitMs);
  if (!settled) return { ok: false, message: `asked the thread to cancel ${describe(action)}; it has not acted on it yet`, action };
  return { ok: settled.state === 'undone', message: `${describe(settled)}: ${settled.state}${settled.note ? ` (${settled.note})` : ''}`, action: settled };
}

export function describe(action: Pick<JournaledAction, 'id' | 'kind' | 'argument' | 'threadId'>): string {
  return `${action.kind}${action.argument ? ` ${action.argument}` : ''} on thread ${action.threadId} (${action.id})`;
}

async function untilSettled(db: SqlExecutor, actionId: string, states: ActionState[], waitMs: number): Promise<JournaledAction | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const action = await loadAction(db, actionId);
    if (action && states.includes(action.state)) return action;
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Whether the thread left `awaiting_reply` within `waitMs`. */
async function untilNotAwaiting(db: SqlExecutor, action: Pick<JournaledAction, 'accountId' | 'threadId'>, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const [row] = await db.query<{ state: string }>(`SELECT state FROM threads WHERE account_id = $1 AND gmail_thread_id = $2`, [action.accountId, action.threadId]);
    if (row && row.state !== 'awaiting_reply') return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 150));
  }
}
