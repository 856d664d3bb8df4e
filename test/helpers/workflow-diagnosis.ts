// What a slow test's workflows were doing: for a failure message, each workflow's status, its
// pending activities (attempt, state, last failure) and its pending workflow task, and the last
// events of its history with their times.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

function eventName(type: number | null | undefined): string {
  return (EventType[type ?? 0] ?? String(type)).replace(/^EVENT_TYPE_/, '');
}

function time(t: { seconds?: unknown; nanos?: number | null } | null | undefined): string {
  if (!t?.seconds) return '-';
  return new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString().slice(11, 23);
}

/**
 * One paragraph per workflow id; never throws (a diagnosis must not hide the failure it explains).
 * Raw service calls: the payloads are encrypted, and nothing here needs them decoded.
 */
export async function diagnoseWorkflows(
  connection: Connection,
  workflowIds: string[],
  lastEvents = 20,
  namespace = 'default',
): Promise<string> {
  const service = connection.workflowService;
  const parts: string[] = [`(now ${new Date().toISOString().slice(11, 23)})`];
  for (const workflowId of workflowIds) {
    try {
      const raw = await service.describeWorkflowExecution({ namespace, execution: { workflowId } });
      const info = raw.workflowExecutionInfo;
      const status = temporal.api.enums.v1.WorkflowExecutionStatus[info?.status ?? 0];
      const lines = [`${workflowId} run ${info?.execution?.runId}: ${status}`];
      for (const a of raw.pendingActivities ?? []) {
        lines.push(
          `  pending activity ${a.activityType?.name} attempt ${a.attempt} state ${a.state} scheduled ${time(a.lastAttemptCompleteTime ?? a.scheduledTime)} started ${time(a.lastStartedTime)}` +
            (a.lastFailure?.message ? ` last failure: ${a.lastFailure.message}` : ''),
        );
      }
      const wft = raw.pendingWorkflowTask;
      if (wft)
        lines.push(
          `  pending workflow task state ${wft.state} scheduled ${time(wft.scheduledTime)} attempt ${wft.attempt}`,
        );
      const events: temporal.api.history.v1.IHistoryEvent[] = [];
      let nextPageToken: Uint8Array | undefined;
      do {
        const page = await service.getWorkflowExecutionHistory({ namespace, execution: { workflowId }, nextPageToken });
        events.push(...(page.history?.events ?? []));
        nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
      } while (nextPageToken);
      const saved = keepFailedHistory(workflowId, info?.execution?.runId, events);
      if (saved) lines.push(`  a workflow task failed: the whole history is in ${saved} (replay it with test/fixtures' keys)`);
      for (const e of events.slice(-lastEvents)) {
        const signal = e.workflowExecutionSignaledEventAttributes?.signalName;
        const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
        const failure =
          e.activityTaskFailedEventAttributes?.failure?.message ??
          e.workflowTaskFailedEventAttributes?.failure?.message;
        const detail = [signal, activity, failure].filter(Boolean).join(' ');
        lines.push(
          `  ${String(e.eventId).padStart(4)} ${time(e.eventTime)} ${eventName(e.eventType)}${detail ? ` ${detail}` : ''}`,
        );
      }
      parts.push(lines.join('\n'));
    } catch (err) {
      parts.push(`${workflowId}: could not describe (${(err as Error).message})`);
    }
  }
  return parts.join('\n');
}

/** Where a history with a failed workflow task goes, to be replayed where the failure can be read (CI keeps .cache). */
const FAILED_HISTORIES = join(process.cwd(), '.cache', 'failed-histories');

function keepFailedHistory(workflowId: string, runId: string | null | undefined, events: temporal.api.history.v1.IHistoryEvent[]): string | undefined {
  if (!events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)) return undefined;
  mkdirSync(FAILED_HISTORIES, { recursive: true });
  const file = join(FAILED_HISTORIES, `${workflowId.replace(/[^\w.-]+/g, '_')}-${runId ?? 'run'}.json`);
  writeFileSync(file, historyToJSON(temporal.api.history.v1.History.create({ events })));
  return file;
}
