// Temporal Schedules replace every cron loop. Created at start-up, idempotently: an existing
// schedule gets the current spec and action, and keeps its state (an operator's pause stays).
// Operators manage them with `temporal schedule list|describe|trigger|toggle`.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { untilServerReady, type NotReadyRetry } from '../temporal/not-ready-retry.js';
import { archiverSchedule, type ArchiverScheduleSettings } from '../backfill/archiver-schedule.js';
import type { learningWorkflow } from '../learning/learning-workflow.js';
import type { retentionWorkflow } from '../retention/retention-workflow.js';
import type { syncAllAccountsWorkflow, watchRenewalWorkflow } from '../sync/scheduled-workflows.js';

export interface ScheduleSettings {
  retentionDays: number;
  /** The workflow task queue (cfg.TEMPORAL_TASK_QUEUE); tests use their own, with an id prefix. */
  taskQueue?: string;
  idPrefix?: string;
  /** Every how long retention runs (default one day). */
  retentionEvery?: string;
  /** The archiver (created paused unless ARCHIVER_ENABLED=true); none without it. */
  archiver?: ArchiverScheduleSettings;
  /** Gmail sync schedules (fallback poll, full inbox scan, watch renewal); none without it. */
  sync?: SyncScheduleSettings;
  /** Writing evidence (docs/learning.md) is deleted after this many days by the retention run. */
  evidenceDays?: number;
  /** Corrections of triage (learning_corrections) are deleted after this many days by the retention run. */
  correctionsDays?: number;
  /** Request rows of Message Batches older than this are deleted by the retention run (default BATCH_REQUESTS_DAYS). */
  batchRequestsDays?: number;
  /** The learning schedule (writing lessons from new evidence); none without it. */
  learning?: { every: string; llmTaskQueue: string; gmailTaskQueue?: string };
}

export interface SyncScheduleSettings {
  pollEvery: string;
  fullScanEvery: string;
  fullScanDays: number;
  watchRenewalEvery: string;
  watchRenewWithinMs: number;
  /** Tests: their own queue and ids. */
  taskQueue?: string;
  idPrefix?: string;
}

export const SYNC_POLL_SCHEDULE_ID = 'gmail-sync-fallback';
export const SYNC_FULL_SCAN_SCHEDULE_ID = 'gmail-full-scan';
export const WATCH_RENEWAL_SCHEDULE_ID = 'gmail-watch-renewal';

function syncSchedules(s: SyncScheduleSettings): ScheduleOptions[] {
  const prefix = s.idPrefix ?? '';
  const taskQueue = s.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const pollType: (typeof syncAllAccountsWorkflow)['name'] = 'syncAllAccountsWorkflow';
  const watchType: (typeof watchRenewalWorkflow)['name'] = 'watchRenewalWorkflow';
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' };
  return [
    {
      scheduleId: prefix + SYNC_POLL_SCHEDULE_ID,
      spec: { intervals: [{ every: s.pollEvery }] },
      action: { type: 'startWorkflow', workflowType: pollType, workflowId: prefix + SYNC_POLL_SCHEDULE_ID, taskQueue, args: [{ kind: 'poll' }] },
      policies,
    },
    {
      scheduleId: prefix + SYNC_FULL_SCAN_SCHEDULE_ID,
      spec: { intervals: [{ every: s.fullScanEvery }] },
      action: { type: 'startWorkflow', workflowType: pollType, workflowId: prefix + SYNC_FULL_SCAN_SCHEDULE_ID, taskQueue, args: [{ kind: 'full_scan', days: s.fullScanDays }] },
      policies,
    },
    {
      scheduleId: prefix + WATCH_RENEWAL_SCHEDULE_ID,
      spec: { intervals: [{ every: s.watchRenewalEvery }] },
      action: { type: 'startWorkflow', workflowType: watchType, workflowId: prefix + WATCH_RENEWAL_SCHEDULE_ID, taskQueue, args: [{ renewWithinMs: s.watchRenewWithinMs }] },
      policies: { ...policies, catchupWindow: '1 day' },
    },
  ];
}

export const RETENTION_SCHEDULE_ID = 'retention';
/** A Message Batch ends within 24 h (cancelled at 25 h) and its hand-over deletes its request rows: 3 days leaves a margin. */
export const BATCH_REQUESTS_DAYS = 3;
export const LEARNING_SCHEDULE_ID = 'learning';

function learningSchedule(settings: ScheduleSettings & { learning: { every: string; llmTaskQueue: string; gmailTaskQueue?: string } }): ScheduleOptions {
  const id = (settings.idPrefix ?? '') + LEARNING_SCHEDULE_ID;
  return {
    scheduleId: id,
    spec: { intervals: [{ every: settings.learning.every }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'learningWorkflow' satisfies (typeof learningWorkflow)['name'],
      workflowId: id,
      taskQueue: settings.taskQueue ?? WORKFLOW_TASK_QUEUE,
      args: [{ llmTaskQueue: settings.learning.llmTaskQueue, ...(settings.learning.gmailTaskQueue ? { gmailTaskQueue: settings.learning.gmailTaskQueue } : {}) }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
  };
}

export function scheduleDefinitions(settings: ScheduleSettings): ScheduleOptions[] {
  const retention: ScheduleOptions = {
    scheduleId: (settings.idPrefix ?? '') + RETENTION_SCHEDULE_ID,
    spec: { intervals: [{ every: settings.retentionEvery ?? '1 day' }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'retentionWorkflow' satisfies (typeof retentionWorkflow)['name'],
      workflowId: (settings.idPrefix ?? '') + RETENTION_SCHEDULE_ID,
      taskQueue: settings.taskQueue ?? WORKFLOW_TASK_QUEUE,
      args: [
        {
          retentionDays: settings.retentionDays,
          ...(settings.evidenceDays ? { evidenceDays: settings.evidenceDays } : {}),
          ...(settings.correctionsDays ? { correctionsDays: settings.correctionsDays } : {}),
          batchRequestsDays: settings.batchRequestsDays ?? BATCH_REQUESTS_DAYS,
        },
      ],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
  };
  const sync = settings.sync && {
    ...settings.sync,
    taskQueue: settings.sync.taskQueue ?? settings.taskQueue,
    idPrefix: settings.sync.idPrefix ?? settings.idPrefix,
  };
  const base = sync ? [retention, ...syncSchedules(sync)] : [retention];
  const learning = settings.learning ? [learningSchedule({ ...settings, learning: settings.learning })] : [];
  return settings.archiver ? [...base, ...learning, archiverSchedule(settings.archiver)] : [...base, ...learning];
}

/**
 * Creates every schedule, or updates it to the current spec and action while keeping its state.
 * A server that is still coming up (a restarted dev server) is waited out (untilServerReady).
 */
export async function ensureSchedules(client: Client, settings: ScheduleSettings, opts: NotReadyRetry = {}): Promise<string[]> {
  const deadline = Date.now() + (opts.waitMs ?? 120_000);
  const ids: string[] = [];
  for (const options of scheduleDefinitions(settings)) {
    await untilServerReady(client.connection, `schedule ${options.scheduleId}`, () => ensureSchedule(client, options), {
      ...opts,
      waitMs: Math.max(0, deadline - Date.now()),
    });
    ids.push(options.scheduleId);
  }
  return ids;
}

async function ensureSchedule(client: Client, options: ScheduleOptions): Promise<void> {
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
}
