// The action steps of the thread workflow: the rule's or category's actions judged by the safety
// policy and journaled, then run, opened for approval (with its expiry) or refused; approve, reject
// and undo; sends after their delay; an auto-reply's approval draft. Workflow code.
import { ActivityFailure } from '@temporalio/workflow';
import { SENDING_KINDS, type JournaledAction, type ProposedAction } from '../actions/contracts.js';
import type { PromptMessage, ThreadContent } from './activity-contracts.js';
import { activityErrorText, failureType } from '../temporal/workflow-failures.js';
import { needsTheUser, writeReplyText, type Verdict } from './common-steps.js';
import type { ActionDecisionEvent, ActionDueEvent, AgentProposalEvent, OpenAction } from './contracts.js';
import type { ThreadRun } from './thread-run.js';
import { cancelWake } from './timer-steps.js';

export const labelOf = (a: { kind: string; argument?: string }) => (a.argument ? `${a.kind} ${a.argument}` : a.kind);

/**
 * The actions besides the draft: each is judged by the safety policy and journaled (the activity
 * does both), then runs, waits for approval, or is refused. Mail content never reaches the policy:
 * the actions come from the user's rules and categories, the LLM only picks the category.
 */
export async function carryOutActions(run: ThreadRun, thread: ThreadContent, email: PromptMessage, verdict: Verdict): Promise<void> {
  const specs = verdict.actions.filter((a) => a.kind !== 'draft');
  if (specs.length === 0) return;
  const proposals: (ProposedAction & { result?: { body: string } })[] = [];
  for (const spec of specs) {
    if (spec.kind !== 'auto_reply') {
      proposals.push({ ...spec, reason: verdict.reason });
      continue;
    }
    const written = verdict.draft ?? (await writeReplyText(run, thread, email.sender, verdict.instructions));
    if (written) proposals.push({ ...spec, reason: verdict.reason, result: { body: written.body } });
  }
  await proposeAndStart(run, email, proposals);
}

/**
 * Judges and journals proposed actions and carries out the label changes the policy lets run (one
 * Gmail step), then schedules, opens or records each; returns them as journaled.
 */
export async function proposeAndStart(
  run: ThreadRun,
  email: Pick<PromptMessage, 'messageId' | 'sender' | 'subject' | 'replyHeaders'>,
  proposals: (ProposedAction & { result?: { body: string; mailboxRead?: string[] } })[],
  sendsNeedApproval?: string,
): Promise<JournaledAction[]> {
  const journaled = await run.gmail.proposeAndPerform({
    ...run.ids,
    messageId: email.messageId,
    sender: email.sender,
    // Who a reply goes to, as the one address reading found them: the policy judges each, a send goes to exactly these.
    ...(email.replyHeaders ? { recipients: email.replyHeaders.recipients.map((r) => r.address) } : {}),
    subject: email.subject,
    workflowId: run.workflowId,
    actions: proposals,
    pauseLabel: run.actionSettings.pauseLabel,
    approvalExpiryMs: run.actionSettings.approvalExpiryMs,
    ...(sendsNeedApproval ? { sendsNeedApproval } : {}),
  });
  for (const action of journaled) await startAction(run, action);
  return journaled;
}

/**
 * What a scheduled run's agent proposed for this thread (src/schedules): judged, journaled and
 * carried out, opened for approval or refused like the thread's own actions, so approve, reject,
 * undo and the send's delay are this thread's.
 */
export async function carryOutProposal(run: ThreadRun, event: AgentProposalEvent): Promise<void> {
  run.logDecision({ kind: 'agent', source: 'llm', detail: `${event.by} proposes ${event.actions.map(labelOf).join(', ')}` });
  const { messageId, sender, subject } = event;
  await proposeAndStart(run, { messageId, sender, subject }, event.actions, event.sendsNeedApproval);
}

async function startAction(run: ThreadRun, action: JournaledAction): Promise<void> {
  switch (action.state) {
    case 'refused':
      run.logDecision({ kind: 'action', source: 'system', detail: `refused ${labelOf(action)}: ${action.because.join('; ')}` });
      return;
    case 'done':
      run.logDecision({ kind: 'action', source: 'system', detail: `${labelOf(action)}: done` });
      return;
    case 'failed':
      run.logDecision({ kind: 'action', source: 'system', detail: `${labelOf(action)} failed: ${action.note ?? ''}` });
      return;
    case 'queued':
    case 'approved':
      return runAction(run, action);
    case 'awaiting_approval':
      return awaitApproval(run, action);
    case 'scheduled':
      if (!run.record.openActions.some((a) => a.id === action.id)) {
        run.record.openActions.push({ ...openOf(action), state: 'scheduled', dueAt: Date.parse(action.scheduledFor ?? '') || Date.now() });
      }
      return;
    default:
      return; // settled already (undone, rejected, expired)
  }
}

const openOf = (a: Pick<JournaledAction, 'id' | 'kind' | 'argument'>) => ({ id: a.id, kind: a.kind, ...(a.argument ? { argument: a.argument } : {}) });

/** Runs a queued or approved action: a label change now; a send after its delay (Undo cancels it). */
async function runAction(run: ThreadRun, action: Pick<OpenAction, 'id' | 'kind' | 'argument' | 'draftId'>): Promise<void> {
  if (SENDING_KINDS.includes(action.kind)) {
    const dueAt = Date.now() + run.actionSettings.sendDelayMs;
    await run.store.settleAction({ id: action.id, from: ['queued', 'approved'], to: 'scheduled', scheduledForMs: dueAt });
    run.record.openActions.push({ ...openOf(action), state: 'scheduled', dueAt, ...(action.draftId ? { draftId: action.draftId } : {}) });
    run.logDecision({ kind: 'action', source: 'system', detail: `${labelOf(action)} goes out at ${new Date(dueAt).toISOString()} unless you undo it` });
    return;
  }
  try {
    await run.gmail.performAction({ actionId: action.id });
    run.logDecision({ kind: 'action', source: 'system', detail: `${labelOf(action)}: done` });
  } catch (err) {
    const type = failureType(err);
    if (!type) throw err;
    // Retrying cannot help (the activity journaled it failed, with the reason): the thread goes on.
    run.logDecision({ kind: 'action', source: 'system', detail: `${labelOf(action)} failed: ${activityErrorText(err)}` });
  }
}

/** Waits, durably, for approve or reject until the approval expires; an auto-reply shows as a draft meanwhile. */
async function awaitApproval(run: ThreadRun, action: JournaledAction): Promise<void> {
  if (run.record.openActions.some((a) => a.id === action.id)) return;
  const open: OpenAction = { ...openOf(action), state: 'awaiting_approval', dueAt: Date.parse(action.expiresAt ?? '') || Date.now() };
  if (action.kind === 'auto_reply') {
    const placedAfter = Date.now();
    const draft = await run.gmail.placeApprovalDraft({ actionId: action.id, label: run.actionSettings.awaitingApprovalLabel });
    Object.assign(open, { draftId: draft.draftId, draftMessageId: draft.messageId, draftCreatedAt: placedAfter });
  }
  run.record.openActions.push(open);
  const notified = await notifyApproval(run, action.id);
  run.logDecision({
    kind: 'action',
    source: 'system',
    detail: `${notified}${labelOf(action)} waits for your approval until ${new Date(open.dueAt).toISOString()}: ${action.because.join('; ')}`,
  });
}

/** Asks the user (Discord) when a channel is configured; a notification that keeps failing is recorded, not fatal. */
async function notifyApproval(run: ThreadRun, actionId: string): Promise<string> {
  try {
    const notified = await run.notify.notifyApproval({ actionId });
    return notified.notified ? `asked on ${notified.channel}: ` : '';
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return `could not notify (${failureType(err) ?? 'error'}: ${err.cause?.message ?? ''}); `;
  }
}

function takeOpen(run: ThreadRun, actionId: string): OpenAction | undefined {
  const at = run.record.openActions.findIndex((a) => a.id === actionId);
  return at < 0 ? undefined : run.record.openActions.splice(at, 1)[0];
}

/** Approve, reject or undo, from the CLI, the approvals page, Discord's link or a signal. */
export async function carryOutDecision(run: ThreadRun, event: ActionDecisionEvent): Promise<void> {
  // A timer (snooze, reminder, follow-up, send later): reject or undo cancels it.
  if (event.decision !== 'approve' && run.record.wakes.some((w) => w.actionId === event.actionId)) {
    return cancelWake(run, event.actionId, event.by);
  }
  const open = run.record.openActions.find((a) => a.id === event.actionId);
  if (!open) {
    // Not waiting here: done already (undo takes it back), or decided before (a repeat changes nothing).
    if (event.decision !== 'undo') return;
    const undone = await run.gmail.undoAction({ actionId: event.actionId, by: event.by });
    run.logDecision({ kind: 'action', source: 'user', detail: undone.undone ? `undid ${event.actionId}` : `cannot undo ${event.actionId}: ${undone.why}` });
    return;
  }
  if (event.decision === 'approve') {
    if (open.state !== 'awaiting_approval') return; // scheduled: approved already
    takeOpen(run, open.id);
    const settled = await run.store.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'approved', decidedBy: event.by });
    if (!settled?.moved) return;
    run.logDecision({ kind: 'action', source: 'user', detail: `${labelOf(open)} approved (${event.by})` });
    return runAction(run, open);
  }
  // Reject, or undo during a send's delay: nothing goes out.
  takeOpen(run, open.id);
  const to = open.state === 'awaiting_approval' ? 'rejected' : 'undone';
  await run.store.settleAction({ id: open.id, from: [open.state], to, decidedBy: event.by, note: `${to} (${event.by})` });
  if (open.draftId) await discardApprovalDraft(run, open, true);
  run.logDecision({ kind: 'action', source: 'user', detail: `${labelOf(open)} ${to} (${event.by})` });
}

/** An approval expired (Action Required), or a send's delay is over (it goes out). */
export async function actionDue(run: ThreadRun, event: ActionDueEvent): Promise<void> {
  const open = takeOpen(run, event.actionId);
  if (!open) return;
  if (open.state === 'awaiting_approval') {
    await run.store.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'expired', note: 'no decision before it expired' });
    if (open.draftId) await discardApprovalDraft(run, open, true);
    return needsTheUser(run, `approval of ${labelOf(open)} expired`);
  }
  const sent = await run.gmail.sendAction({ actionId: open.id, pauseLabel: run.actionSettings.pauseLabel });
  if (sent.state === 'awaiting_approval') {
    // The kill switch went on during the delay: it waits for the user now.
    run.record.openActions.push({ ...open, state: 'awaiting_approval', dueAt: Date.now() + run.actionSettings.approvalExpiryMs, draftId: undefined });
    run.logDecision({ kind: 'action', source: 'system', detail: `${labelOf(open)} paused before it went out: waits for your approval` });
    return;
  }
  if (sent.state === 'failed' && sent.why) {
    // Sent or not, nobody can say (SMTP cut off mid-answer): the user decides, never a second send.
    if (open.draftId) await discardApprovalDraft(run, open, false);
    return needsTheUser(run, `${labelOf(open)}: ${sent.why}`);
  }
  if (sent.sentMessageId) run.record.sentByUs.push(sent.sentMessageId);
  if (open.draftId) await discardApprovalDraft(run, open, false);
  run.logDecision({ kind: 'action', source: 'system', detail: sent.sent ? `${labelOf(open)} sent (${sent.sentMessageId})` : `${labelOf(open)} not sent: ${sent.state}` });
  if (sent.sent && open.kind === 'auto_reply' && !run.record.draftId) run.transition('sent');
}

async function discardApprovalDraft(run: ThreadRun, open: OpenAction, deleteDraft: boolean): Promise<void> {
  await run.gmail.discardApprovalDraft({
    ...run.ids,
    ...(deleteDraft && open.draftId ? { draftId: open.draftId } : {}),
    label: run.actionSettings.awaitingApprovalLabel,
  });
}

/** The auto-reply waiting as a draft is gone or sent: sending it in Gmail approves it, deleting it rejects it. */
export async function checkApprovalDraft(run: ThreadRun): Promise<void> {
  const open = run.record.openActions.find((a) => a.state === 'awaiting_approval' && a.draftId);
  if (!open?.draftId) return;
  const current = await run.gmail.readDraft({ accountId: run.accountId, draftId: open.draftId });
  if (current) {
    open.draftMessageId = current.messageId; // edited in Gmail: still waiting
    return;
  }
  takeOpen(run, open.id);
  const sent = await run.gmail.findSentReply({ ...run.ids, afterMs: open.draftCreatedAt ?? 0 });
  await discardApprovalDraft(run, open, false);
  if (sent) {
    run.record.sentByUs.push(sent.messageId);
    await run.store.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'done', decidedBy: 'gmail', result: { sentMessageId: sent.messageId } });
    run.logDecision({ kind: 'sent', source: 'user', detail: `${labelOf(open)} approved by sending it in Gmail (${sent.messageId})` });
    run.transition('sent');
  } else {
    await run.store.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'rejected', decidedBy: 'gmail', note: 'its draft was deleted in Gmail' });
    run.logDecision({ kind: 'action', source: 'user', detail: `${labelOf(open)} rejected by deleting its draft in Gmail` });
  }
}
