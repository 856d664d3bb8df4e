// Temporal Schedules replace every cron loop. Created at start-up, idempotently: an existing
// schedule gets the current spec and action, and keeps its state (an operator's pause stays).
// Operators manage them with `temporal schedule list|describe|trigger|toggle`.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import type { retentionWorkflow } from '../workflows/retention.js';

export interface ScheduleSettings {
  retentionDays: number;
  /** Every how long retention runs (default one day). */
  retentionEvery?: string;
}

export const RETENTION_SCHEDULE_ID = 'retention';

export function scheduleDefinitions(settings: ScheduleSettings): ScheduleOptions[] {
  const retention: ScheduleOptions = {
    scheduleId: RETENTION_SCHEDULE_ID,
    spec: { intervals: [{ every: settings.retentionEvery ?? '1 day' }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'retentionWorkflow' satisfies (typeof retentionWorkflow)['name'],
      workflowId: 'retention',
      taskQueue: WORKFLOW_TASK_QUEUE,
      args: [{ retentionDays: settings.retentionDays }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
  };
  return [retention];
}

export async function ensureSchedules(client: Client, settings: ScheduleSettings): Promise<string[]> {
  const ids: string[] = [];
  for (const options of scheduleDefinitions(settings)) {
    try {
      await client.schedule.create(options);
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(options.scheduleId).update((previous) => ({
        spec: options.spec,
        action: options.action as typeof previous.action,
        policies: options.policies,
        state: previous.state, // keeps `paused` and the operator's note
      }));
    }
    ids.push(options.scheduleId);
  }
  return ids;
}
