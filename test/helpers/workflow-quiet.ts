// Until workflows have nothing under way: no workflow task pending or running (so every signal they
// were sent has been handled, and their local activities are done), no activity pending or retrying,
// and no timer whose time has come but which has not fired yet. What a test waits for before it says
// something happened once, or not at all: from then on only a timer still ahead or a new event can
// move them.
import type { WorkflowHandle } from '@temporalio/client';
import { waitUntil } from './wait-until.js';

const ms = (d: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(d?.seconds ?? 0) * 1000 + Math.floor((d?.nanos ?? 0) / 1e6);

/** When each timer still open in the workflow's history (started, neither fired nor cancelled) fires. */
async function openTimers(handle: WorkflowHandle): Promise<number[]> {
  const open = new Map<string, number>();
  for (const event of (await handle.fetchHistory()).events ?? []) {
    const started = event.timerStartedEventAttributes;
    if (started?.timerId) open.set(started.timerId, ms(event.eventTime) + ms(started.startToFireTimeout));
    const closed = event.timerFiredEventAttributes?.timerId ?? event.timerCanceledEventAttributes?.timerId;
    if (closed) open.delete(closed);
  }
  return [...open.values()];
}

export async function isQuiet(handle: WorkflowHandle): Promise<boolean> {
  const { raw, status } = await handle.describe();
  if (status.name !== 'RUNNING') return true;
  if (raw.pendingWorkflowTask || (raw.pendingActivities ?? []).length > 0) return false;
  const now = Date.now();
  return (await openTimers(handle)).every((at) => at > now);
}

export async function untilQuiet(handles: WorkflowHandle[], opts: { timeoutMs?: number } = {}): Promise<void> {
  await waitUntil(
    `${handles.map((h) => h.workflowId).join(', ')} quiet`,
    async () => (await Promise.all(handles.map(isQuiet))).every(Boolean),
    { timeoutMs: opts.timeoutMs ?? 60_000 },
  );
}
