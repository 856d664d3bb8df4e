// The archiver's Schedule. Created paused unless ARCHIVER_ENABLED=true: taking mail out of a
// user's inbox is something an operator turns on (`temporal schedule toggle --schedule-id
// archiver --unpause`), after a dry run (`npm run cli -- backfill archive --dry-run`).
// ensureSchedules keeps the state an operator set.
import { ScheduleOverlapPolicy, type ScheduleOptions } from '@temporalio/client';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import type { archiverWorkflow } from './archiver-workflow.js';
import type { ArchiverInput } from './contracts.js';

export const ARCHIVER_SCHEDULE_ID = 'archiver';

export interface ArchiverScheduleSettings {
  every: string;
  trash: boolean;
  enabled: boolean;
  /** Tests: their own queue and ids. */
  taskQueue?: string;
  idPrefix?: string;
}

export function archiverSchedule(settings: ArchiverScheduleSettings): ScheduleOptions {
  const id = (settings.idPrefix ?? '') + ARCHIVER_SCHEDULE_ID;
  const taskQueue = settings.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const input: ArchiverInput = {
    trash: settings.trash,
    ...(settings.taskQueue ? { taskQueues: { workflows: settings.taskQueue, gmail: settings.taskQueue } } : {}),
  };
  return {
    scheduleId: id,
    spec: { intervals: [{ every: settings.every }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'archiverWorkflow' satisfies (typeof archiverWorkflow)['name'],
      workflowId: id,
      taskQueue,
      args: [input],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    state: settings.enabled
      ? {}
      : { paused: true, note: 'Archiving is off until an operator unpauses this schedule (dry run first: npm run cli -- backfill archive --dry-run)' },
  };
}
