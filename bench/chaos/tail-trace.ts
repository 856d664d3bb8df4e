// What a thread that has not settled waits on, in a line: its workflow's status, the pending activity
// (type, attempt, its last failure, when the next attempt is due) or, with none pending, that it
// waits for a timer, signal or workflow task. For the chaos run's tail (docs/performance.md).
import type { Client } from '@temporalio/client';

const seconds = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  t?.seconds == null ? undefined : Number(t.seconds) + (t.nanos ?? 0) / 1e9;

export async function describeWait(client: Client, workflowId: string): Promise<string> {
  let d;
  try {
    d = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    return `no thread workflow (${(err as Error).name}): the sync has not handed the mail over`;
  }
  if (d.status.name !== 'RUNNING') return `workflow ${d.status.name}`;
  const raw = d.raw;
  const pending = raw.pendingActivities ?? [];
  if (pending.length === 0) {
    const task = raw.pendingWorkflowTask ? `a workflow task (${raw.pendingWorkflowTask.state ?? '?'})` : 'a timer, a signal or a child';
    return `no activity pending: waits for ${task}`;
  }
  const now = Date.now() / 1000;
  return pending
    .map((a) => {
      const next = seconds(a.nextAttemptScheduleTime ?? a.scheduledTime);
      const due = next !== undefined && next > now ? `, next attempt in ${Math.round(next - now)} s` : '';
      const failure = a.lastFailure?.message ? `, last failure: ${a.lastFailure.message.slice(0, 80)}` : '';
      const state = a.state === 1 ? 'scheduled' : a.state === 2 ? 'started' : a.state === 3 ? 'cancel requested' : String(a.state);
      return `${a.activityType?.name} ${state} attempt ${a.attempt}${due}${failure}`;
    })
    .join(' + ');
}
