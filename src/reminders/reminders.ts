// What `npm run cli -- reminders ...` (and a change of the account's time zone) does: the row is
// written first (Postgres is the truth the workflow plans from), then the reminder's workflow is
// told with a signal, started if it is not running (signal-with-start), so nothing depends on the
// workflow having been there.
import type { Client } from '@temporalio/client';
import type { SqlExecutor } from '../db/sql-executor.js';
import { reminderChangedSignal, reminderWorkflowId, type ReminderWorkflowInput } from './contracts.js';
import { recurrenceFromSpec, type RecurrenceSpec } from './recurrence.js';
import { insertReminder, loadReminder, restartRemindersFollowingAccountZone, setReminderState, type ReminderRow } from './reminder-store.js';
import { reminderWorkflow } from './reminder-workflow.js';

export interface ReminderDeps {
  db: SqlExecutor;
  client: Client;
  /** The workflow worker's queue (TEMPORAL_TASK_QUEUE) and the Gmail worker's (GMAIL_TASK_QUEUE). */
  taskQueue: string;
  gmailTaskQueue: string;
  catchUpWindowMs: number;
  /** One delivery attempt's limit (GMAIL_ACTIVITY_TIMEOUT); default 2 minutes. */
  deliveryTimeoutMs?: number;
  /** Occurrences per workflow run before continue-as-new (tests make it small). */
  occurrencesPerRun?: number;
  now?: () => Date;
}

export interface AddReminder {
  accountId: string;
  title: string;
  spec: RecurrenceSpec;
  /** The reminder's own zone; unset: it follows the account's (and moves with it). */
  timeZone?: string;
  /** The account's zone now, to anchor the start day when the reminder follows it. */
  accountZone: string;
}

/** Stores the reminder and starts its workflow; throws RecurrenceError for a bad rule or zone. */
export async function addReminder(deps: ReminderDeps, input: AddReminder): Promise<ReminderRow> {
  const now = deps.now?.() ?? new Date();
  const recurrence = recurrenceFromSpec(input.spec, input.timeZone ?? input.accountZone, now);
  const id = await insertReminder(deps.db, { accountId: input.accountId, title: input.title, recurrence, timeZone: input.timeZone ?? null });
  await tellWorkflow(deps, id);
  return (await loadReminder(deps.db, id, input.accountZone))!;
}

/** Pauses, resumes or removes; false when there is no such reminder still running. */
export async function changeReminderState(deps: ReminderDeps, id: string, state: 'active' | 'paused' | 'removed'): Promise<boolean> {
  if (!(await setReminderState(deps.db, id, state))) return false;
  await tellWorkflow(deps, id);
  return true;
}

/** The account's zone changed: the reminders that follow it plan their next occurrence in the new zone. */
export async function moveAccountReminders(deps: ReminderDeps, accountId: string): Promise<number> {
  const ids = await restartRemindersFollowingAccountZone(deps.db, accountId);
  for (const id of ids) await tellWorkflow(deps, id);
  return ids.length;
}

async function tellWorkflow(deps: ReminderDeps, reminderId: string): Promise<void> {
  const input: ReminderWorkflowInput = {
    reminderId,
    gmailTaskQueue: deps.gmailTaskQueue,
    catchUpWindowMs: deps.catchUpWindowMs,
    ...(deps.deliveryTimeoutMs ? { deliveryTimeoutMs: deps.deliveryTimeoutMs } : {}),
    ...(deps.occurrencesPerRun ? { occurrencesPerRun: deps.occurrencesPerRun } : {}),
  };
  await deps.client.workflow.signalWithStart(reminderWorkflow, {
    workflowId: reminderWorkflowId(reminderId),
    taskQueue: deps.taskQueue,
    args: [input],
    signal: reminderChangedSignal,
    signalArgs: [],
  });
}
