// The timer steps of the thread workflow: snooze, remind, send later and the follow-up, each a
// durable timer of the run (its wakes, thread-record.ts) and a row of the action journal
// (scheduled while it waits, done when it fired, undone when cancelled). Workflow code.
import { isCancellation, patched } from '@temporalio/workflow';
import type { ActionReason } from '../actions/contracts.js';
import { activityErrorText } from '../temporal/workflow-failures.js';
import type { TimerRequestEvent, Wake, WakeEvent } from './contracts.js';
import type { ThreadRun } from './thread-run.js';
import { needsTheUser } from './common-steps.js';

/** Runs started before a cancelled follow-up ended the wait kept the thread awaiting an answer; they still do. */
export const FOLLOW_UP_CANCEL_PATCH = 'follow-up-cancel-ends-wait';

const nameOf = (kind: Wake['kind']) => kind.replace('_', ' ');
const when = (at: number) => new Date(at).toISOString();

/** Who asked, as the journal records it: the user, by the CLI or by a Gmail label. */
const reasonOf = (_event: TimerRequestEvent): ActionReason => ({ source: 'user' });

/** Snooze, remind or send later, as the user asked (the CLI, a Gmail label, a signal). */
export async function setTimer(run: ThreadRun, event: TimerRequestEvent): Promise<void> {
  const { request } = event;
  if (request.kind === 'unsnooze' || request.kind === 'cancel') return cancelTimers(run, event);
  if (request.kind === 'send_later') return scheduleSend(run, event, request.at);
  const journaled = await run.store.journalTimer({
    ...run.ids,
    workflowId: run.workflowId,
    requestId: event.requestId,
    kind: request.kind,
    atMs: request.at,
    reason: reasonOf(event),
    ...(event.decidedBy ? { decidedBy: event.decidedBy } : {}),
    ...(request.kind === 'remind' && request.note ? { note: request.note } : {}),
  });
  if (journaled.state !== 'scheduled') return; // this request was set and settled before (a repeat)
  if (request.kind === 'snooze') {
    // One snooze at a time: a new one replaces the one before.
    for (const earlier of run.record.wakes.filter((w) => w.kind === 'snooze' && w.actionId !== journaled.id)) {
      await settleWake(run, run.takeWake(earlier.actionId)!, 'undone', 'replaced by a new snooze');
    }
    const there = await run.gmail.snoozeThread({ ...run.ids, ...(event.label ? { requestLabel: event.label } : {}) });
    if (!there) return settleWake(run, { actionId: journaled.id, kind: 'snooze', at: request.at, by: event.by }, 'undone', 'the thread no longer exists');
  } else if (event.label) {
    await run.gmail.takeLabel({ ...run.ids, label: event.label });
  }
  run.addWake({ actionId: journaled.id, kind: request.kind, at: request.at, by: event.by, ...(journaled.note ? { note: journaled.note } : {}) });
  run.logDecision({ kind: 'timer', source: 'user', detail: `${nameOf(request.kind)} until ${when(request.at)}${event.label ? ` (label ${event.label})` : ''}` });
}

/** Send later: the policy judges the send (the user's own), the thread's draft goes out at the time as it is then. */
async function scheduleSend(run: ThreadRun, event: TimerRequestEvent, at: number): Promise<void> {
  const { action, why } = await run.gmail.proposeSendLater({
    ...run.ids,
    requestId: event.requestId,
    workflowId: run.workflowId,
    atMs: at,
    pauseLabel: run.actionSettings.pauseLabel,
    approvalExpiryMs: run.actionSettings.approvalExpiryMs,
    ...(event.decidedBy ? { decidedBy: event.decidedBy } : {}),
  });
  if (event.label) await run.gmail.takeLabel({ ...run.ids, label: event.label });
  if (!action || action.state !== 'scheduled') {
    run.logDecision({ kind: 'timer', source: 'user', detail: `send later refused: ${why ?? action?.state ?? 'unknown'}` });
    return;
  }
  run.addWake({ actionId: action.id, kind: 'send_later', at, by: event.by });
  run.logDecision({ kind: 'timer', source: 'user', detail: `send later at ${when(at)}: the draft as it is then (undo: npm run cli -- actions undo ${action.id})` });
}

/** Unsnooze (the thread comes back now), or cancel timers of a kind (all when none is named). */
async function cancelTimers(run: ThreadRun, event: TimerRequestEvent): Promise<void> {
  const { request } = event;
  const kind = request.kind === 'unsnooze' ? 'snooze' : request.kind === 'cancel' ? request.timer : undefined;
  const which = run.record.wakes.filter((w) => kind === undefined || w.kind === kind);
  // Cancelling the follow-up (pending, or fallen due) is the user saying they no longer wait for an answer.
  const endsWait = request.kind === 'cancel' && (kind === undefined || kind === 'follow_up') && run.record.state === 'awaiting_reply' && patched(FOLLOW_UP_CANCEL_PATCH);
  if (which.length === 0 && !endsWait) {
    run.logDecision({ kind: 'timer', source: 'user', detail: `nothing to ${request.kind === 'unsnooze' ? 'unsnooze' : 'cancel'}` });
    return;
  }
  const fellDue = !which.some((w) => w.kind === 'follow_up');
  const by = event.decidedBy ?? event.by;
  for (const wake of which) await cancelWake(run, wake.actionId, by, event.decidedBy);
  if (endsWait) await stopWaiting(run, by, fellDue);
}

/**
 * The user no longer waits for an answer: the thread closes as sent, as if the message expected
 * none. A follow-up that fell due leaves its Follow Up label, which goes; a nudge draft is the user's to keep.
 */
async function stopWaiting(run: ThreadRun, by: string, fellDue: boolean): Promise<void> {
  if (fellDue) await run.gmail.changeLabels({ ...run.ids, labels: run.settings.labels, add: [], remove: ['followUp'] });
  delete run.record.nudgeDraftId;
  run.logDecision({ kind: 'timer', source: 'user', detail: `no longer awaiting an answer (${by}): closed as sent` });
  run.transition('sent');
}

/** Cancels one timer (a cancel, an unsnooze, `actions undo`): a snooze's thread comes back at once. */
export async function cancelWake(run: ThreadRun, actionId: string, by: string, decidedBy?: string): Promise<void> {
  const wake = run.takeWake(actionId);
  if (!wake) return;
  if (wake.kind === 'snooze') await run.gmail.returnFromSnooze({ ...run.ids, label: run.settings.labels.snoozed });
  await settleWake(run, wake, 'undone', `cancelled (${by})`, decidedBy);
}

/** Snoozed until now, or new mail came: back to the inbox, unread, labelled. */
export async function returnFromSnooze(run: ThreadRun, event: WakeEvent | { actionId: string }, why = 'snooze over'): Promise<void> {
  const wake = run.takeWake(event.actionId);
  if (!wake) return;
  await run.gmail.returnFromSnooze({ ...run.ids, label: run.settings.labels.snoozed });
  await settleWake(run, wake, 'done', why);
}

/** New mail in a snoozed thread brings it back before the time. */
export async function endSnoozeEarly(run: ThreadRun): Promise<void> {
  for (const wake of run.record.wakes.filter((w) => w.kind === 'snooze')) await returnFromSnooze(run, wake, 'new mail in the thread: back early');
}

/** A reminder's time: the user is told; the thread stays where it is. */
export async function remind(run: ThreadRun, event: WakeEvent): Promise<void> {
  const wake = run.takeWake(event.actionId);
  if (!wake) return;
  const notified = await notifyTimer(run, wake.actionId);
  await settleWake(run, wake, 'done', `reminded you${notified}`);
}

/** The send later's time: the thread's draft, as it is now, goes out through the journaled send. */
export async function sendLater(run: ThreadRun, event: WakeEvent): Promise<void> {
  const wake = run.takeWake(event.actionId);
  if (!wake) return;
  const sent = await run.gmail.sendAction({ actionId: wake.actionId, pauseLabel: run.actionSettings.pauseLabel });
  if (sent.sentMessageId) run.record.sentByUs.push(sent.sentMessageId);
  run.logDecision({
    kind: 'timer',
    source: 'system',
    detail: sent.sent ? `send later fired: sent ${sent.sentMessageId}` : `send later fired: nothing sent (${sent.state})`,
  });
  if (sent.state === 'failed' && sent.why) await needsTheUser(run, `send later: ${sent.why}`);
}

/** Tells the user (Discord when configured); a notification that keeps failing is recorded, not fatal. */
export async function notifyTimer(run: ThreadRun, actionId: string): Promise<string> {
  try {
    const notified = await run.notify.notifyTimer({ actionId });
    return notified.notified ? ` on ${notified.channel}` : '';
  } catch (err) {
    if (isCancellation(err)) throw err;
    return ` (could not notify: ${activityErrorText(err)})`;
  }
}

/** Journals the timer's end (fired: done; cancelled: undone) and logs it. */
export async function settleWake(run: ThreadRun, wake: Wake, to: 'done' | 'undone', why: string, decidedBy?: string): Promise<void> {
  await run.store.settleAction({ id: wake.actionId, from: ['scheduled'], to, note: why, ...(decidedBy ? { decidedBy } : {}) });
  run.logDecision({ kind: 'timer', source: wake.by === 'system' ? 'system' : 'user', detail: `${nameOf(wake.kind)} ${to === 'done' ? 'fired' : 'cancelled'}: ${why}` });
}
