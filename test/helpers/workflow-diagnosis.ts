// What a slow test's workflows were doing: for a failure message, each workflow's status, its
// pending activities (attempt, state, last failure) and its pending workflow task, and the last
// events of its history with their times.
import { Client, type Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

function eventName(type: number | null | undefined): string {
  return (EventType[type ?? 0] ?? String(type)).replace(/^EVENT_TYPE_/, '');
}

function time(t: { seconds?: unknown; nanos?: number | null } | null | undefined): string {
  if (!t?.seconds) return '-';
  return new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString().slice(11, 23);
}

/** One paragraph per workflow id; never throws (a diagnosis must not hide the failure it explains). */
export async function diagnoseWorkflows(connection: Connection, workflowIds: string[], lastEvents = 20): Promise<string> {
  const client = new Client({ connection });
  const parts: string[] = [`(now ${new Date().toISOString().slice(11, 23)})`];
  for (const workflowId of workflowIds) {
    try {
      const handle = client.workflow.getHandle(workflowId);
      const { raw, status, runId } = await handle.describe();
      const lines = [`${workflowId} run ${runId}: ${status.name}`];
      for (const a of raw.pendingActivities ?? []) {
        lines.push(
          `  pending activity ${a.activityType?.name} attempt ${a.attempt} state ${a.state} scheduled ${time(a.lastAttemptCompleteTime ?? a.scheduledTime)} started ${time(a.lastStartedTime)}` +
            (a.lastFailure?.message ? ` last failure: ${a.lastFailure.message}` : ''),
        );
      }
      const wft = raw.pendingWorkflowTask;
      if (wft) lines.push(`  pending workflow task state ${wft.state} scheduled ${time(wft.scheduledTime)} attempt ${wft.attempt}`);
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      for (const e of events.slice(-lastEvents)) {
        const signal = e.workflowExecutionSignaledEventAttributes?.signalName;
        const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
        const failure = e.activityTaskFailedEventAttributes?.failure?.message ?? e.workflowTaskFailedEventAttributes?.failure?.message;
        const detail = [signal, activity, failure].filter(Boolean).join(' ');
        lines.push(`  ${String(e.eventId).padStart(4)} ${time(e.eventTime)} ${eventName(e.eventType)}${detail ? ` ${detail}` : ''}`);
      }
      parts.push(lines.join('\n'));
    } catch (err) {
      parts.push(`${workflowId}: could not describe (${(err as Error).message})`);
    }
  }
  return parts.join('\n');
}
