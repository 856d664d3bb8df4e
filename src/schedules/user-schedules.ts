// A user's schedules as Temporal Schedules (`schedule-<id>`), operated by our CLI and by
// `temporal schedule list|describe|trigger|toggle` alike: the state (paused, its note, next and
// recent runs, skipped and missed counts) is read from the Schedule every time, never copied.
// Every policy is set on purpose (docs/time.md, "Schedules and reminders").
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import type { SqlExecutor } from '../db/sql-executor.js';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { accountTimeZone } from '../accounts/time-settings.js';
import { scheduleSpecOf } from './calendar-spec.js';
import { scheduleIdOf, type AgentScheduleRow, type ScheduledRunInput, type SchedulePolicies } from './contracts.js';
import type { scheduledAgentWorkflow } from './scheduled-agent-workflow.js';
import { deleteAgentSchedule, insertAgentSchedule, listAgentSchedules } from './schedule-store.js';

export interface UserScheduleSettings extends SchedulePolicies {
  /** Tests and benches: their own task queues (the run's workflow, Gmail and LLM queues). */
  taskQueues?: ScheduledRunInput['taskQueues'];
  activityTimeouts?: ScheduledRunInput['activityTimeouts'];
  /** The zone of an account that names none (DEFAULT_TIME_ZONE; default UTC). */
  defaultZone?: string;
}

export async function zoneOf(db: SqlExecutor, row: AgentScheduleRow, defaultZone?: string): Promise<string> {
  return row.timeZone ?? (await accountTimeZone(db, row.accountId, defaultZone));
}

/** The Temporal Schedule of a row, in `zone`. */
export function scheduleOptionsOf(row: AgentScheduleRow, zone: string, settings: UserScheduleSettings, from?: Date): ScheduleOptions {
  const id = scheduleIdOf(row.id);
  const input: ScheduledRunInput = {
    scheduleId: row.id,
    ...(settings.taskQueues ? { taskQueues: settings.taskQueues } : {}),
    ...(settings.activityTimeouts ? { activityTimeouts: settings.activityTimeouts } : {}),
  };
  return {
    scheduleId: id,
    spec: scheduleSpecOf(row.timing, { zone, jitterMs: settings.jitterMs, ...(from ? { from } : {}) }),
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledAgentWorkflow' satisfies (typeof scheduledAgentWorkflow)['name'],
      // Temporal appends each run's action time: schedule-<id>-2026-11-26T06:30:00Z.
      workflowId: id,
      taskQueue: settings.taskQueues?.workflow ?? WORKFLOW_TASK_QUEUE,
      args: [input],
    },
    policies: {
      // A run still going when the next is due: the next is skipped (counted by the Schedule, shown by `schedules show`).
      overlap: ScheduleOverlapPolicy.SKIP,
      // Missed while the cluster was down: runs once when it is back within the window, never after.
      catchupWindow: settings.catchupWindowMs,
      // A failed run (it never fails: it reports) must not stop the next day's.
      pauseOnFailure: false,
    },
  };
}

/** Writes the row, then its Schedule; the row goes again if Temporal refuses the Schedule. */
export async function addUserSchedule(
  client: Client,
  db: SqlExecutor,
  def: Omit<AgentScheduleRow, 'id' | 'deliveryThreadId'>,
  settings: UserScheduleSettings,
): Promise<AgentScheduleRow> {
  const row = await insertAgentSchedule(db, def);
  try {
    await client.schedule.create({ ...scheduleOptionsOf(row, await zoneOf(db, row, settings.defaultZone), settings), state: { note: `${row.name} (${row.profile}) of account ${row.accountId}` } });
  } catch (err) {
    await deleteAgentSchedule(db, row.id);
    throw err;
  }
  return row;
}

/** The Schedule's spec and action again (a new zone, new settings); its state (a pause, its note) stays. */
export async function updateUserSchedule(client: Client, db: SqlExecutor, row: AgentScheduleRow, settings: UserScheduleSettings, zone?: string): Promise<void> {
  const options = scheduleOptionsOf(row, zone ?? (await zoneOf(db, row, settings.defaultZone)), settings);
  await client.schedule.getHandle(options.scheduleId).update((previous) => ({
    ...previous,
    spec: options.spec,
    action: options.action as typeof previous.action,
    policies: options.policies,
  }));
}

/**
 * The account moved to another time zone: every schedule of it that follows the account's zone (no
 * zone of its own) moves with it, its local times kept. Returns the schedules moved.
 */
export async function moveAccountSchedules(client: Client, db: SqlExecutor, accountId: string, zone: string, settings: UserScheduleSettings): Promise<AgentScheduleRow[]> {
  const moved = (await listAgentSchedules(db, accountId)).filter((s) => s.timeZone === null);
  for (const row of moved) await updateUserSchedule(client, db, row, settings, zone);
  return moved;
}

export async function removeUserSchedule(client: Client, db: SqlExecutor, row: AgentScheduleRow): Promise<void> {
  try {
    await client.schedule.getHandle(scheduleIdOf(row.id)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
  await deleteAgentSchedule(db, row.id);
}

export interface UserScheduleState {
  paused: boolean;
  note: string;
  zone: string;
  nextRuns: Date[];
  recentRuns: { scheduledAt: Date; takenAt: Date; workflowId: string }[];
  /** Runs the Schedule skipped because the previous one was still going (overlap SKIP). */
  skippedOverlap: number;
  /** Runs missed while the cluster was down for longer than the catch-up window. */
  missedCatchup: number;
  catchupWindowMs: number;
  jitterMs: number;
}

/** What the Schedule says now, whoever changed it (our CLI or `temporal schedule toggle`); null without one. */
export async function userScheduleState(client: Client, row: AgentScheduleRow): Promise<UserScheduleState | null> {
  let d: ScheduleDescription;
  try {
    d = await client.schedule.getHandle(scheduleIdOf(row.id)).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
  return {
    paused: d.state.paused,
    note: d.state.note ?? '',
    zone: d.spec.timezone ?? 'UTC',
    nextRuns: d.info.nextActionTimes,
    recentRuns: d.info.recentActions.map((a) => ({ scheduledAt: a.scheduledAt, takenAt: a.takenAt, workflowId: a.action.workflow.workflowId })),
    skippedOverlap: d.info.numActionsSkippedOverlap,
    missedCatchup: d.info.numActionsMissedCatchupWindow,
    catchupWindowMs: d.policies.catchupWindow,
    jitterMs: d.spec.jitter ?? 0,
  };
}
