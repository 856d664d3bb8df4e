// One workflow per Gmail thread: classify → act (draft, and the rule's or category's actions under
// the safety policy, or hand the thread to an agent) → wait for the user (Rework, Done, Needs
// Response, approve / reject / undo) → notice the reply was sent. The process is threadWorkflow
// below, its steps in process order after it; which event leads to which step in which state is
// transitions.ts; the record and its views are thread-record.ts; the Temporal plumbing of a run
// (signals, query, search attributes, Postgres writes) is thread-run.ts.
import { ActivityFailure, workflowInfo } from '@temporalio/workflow';
import { agentLoop, briefing, type AgentHands } from '../agent/agent-loop.js';
import type { AgentProfile, AgentToolName } from '../agent/contracts.js';
import {
  actionKey,
  SENDING_KINDS,
  type ActionReason,
  type ActionSpec,
  type JournaledAction,
  type ProposedAction,
} from '../actions/contracts.js';
import type { LlmDraft, PromptMessage, ThreadContent } from './activity-contracts.js';
import { failureType, GIVE_UP_TYPES } from './activity-proxies.js';
import type {
  ActionDecisionEvent,
  ActionDueEvent,
  LabelsChangedEvent,
  OpenAction,
  ThreadEvent,
  ThreadStatus,
  ThreadWorkflowInput,
} from './contracts.js';
import { draftEditedByUser, extractReworkInstructions } from './rework.js';
import { ThreadRun } from './thread-run.js';
import { nextStep } from './transitions.js';

export async function threadWorkflow(input: ThreadWorkflowInput): Promise<ThreadStatus> {
  const run = await ThreadRun.open(input); // what continue-as-new carried, or what earlier runs left
  run.show();
  while (!run.closed) {
    const event = await run.nextEvent(); // waits for mail or the user, for days if need be
    if (event === 'idle') break; // nothing for a long while: this run ends, new mail starts another
    if (event === 'continue') return run.continueAsNew(); // history is long: carry on in a fresh run
    await run.handle(async () => {
      await handle(run, event);
      await run.save();
    });
  }
  return run.finish();
}

/** The step the event leads to in the thread's current state (transitions.ts). */
async function handle(run: ThreadRun, event: ThreadEvent): Promise<void> {
  switch (nextStep(run.record, event)) {
    case 'classify':
      return classifyAndAnswer(run);
    case 'draft_on_request':
      return draftOnRequest(run);
    case 'clear_needs_response':
      return clearNeedsResponse(run);
    case 'rework':
      return rework(run);
    case 'refuse_rework':
      return run.decide({ kind: 'label', source: 'user', detail: `Rework ignored in state ${run.record.state}` });
    case 'archive':
      return archive(run);
    case 'check_draft':
      return checkDraft(run, event);
    case 'mark_replied':
      run.decide({ kind: 'sent', source: 'user', detail: `the user replied (${'messageId' in event ? event.messageId : ''})` });
      return run.transition('sent');
    case 'recheck_labels':
      return recheckLabels(run, event as LabelsChangedEvent);
    case 'check_approval_draft':
      return checkApprovalDraft(run);
    case 'decide_action':
      return decideAction(run, event as ActionDecisionEvent);
    case 'action_due':
      return actionDue(run, event as ActionDueEvent);
    case 'ignore':
      return;
  }
}

// ---- the steps ------------------------------------------------------------------------------

/** New mail: read the thread, classify it (rules, then the LLM), and draft a reply when it needs one. */
async function classifyAndAnswer(run: ThreadRun): Promise<void> {
  const { record } = run;
  const thread = await run.gmail.readThread(run.ids);
  if (!thread) return threadGone(run);
  const email = thread.latestInbound;
  if (!email) return; // the user wrote last: nothing to answer
  if (record.handledMessageIds.includes(email.messageId)) return; // already classified (a redelivery)
  record.handledMessageIds.push(email.messageId);

  // A draft the user has edited is their work: new mail in the thread does not overwrite it (and
  // no reply is written for it). Rework rewrites it on request, with the new mail.
  const mayHaveUserDraft = record.state === 'drafted' && record.draftId !== undefined;
  const keepDraft = mayHaveUserDraft && (await draftIsUsers(run));
  const verdict = await classify(run, thread, email, keepDraft);
  if (!verdict) return; // the LLM step gave up: Action Required
  run.summarize(`${record.category}: ${thread.subject}`);
  if (verdict.route) return handToAgent(run, thread, email, verdict.route);

  // What the rule or the category asks for: a draft (the reply the user sends), and the rest,
  // carried out under the safety policy. An auto-reply replaces the draft.
  const wantsDraft = verdict.actions.some((a) => a.kind === 'draft') && !verdict.actions.some((a) => a.kind === 'auto_reply');
  if (wantsDraft && keepDraft) {
    run.decide({
      kind: 'draft_kept',
      source: 'system',
      detail: `kept the draft you edited; it does not answer message ${email.messageId} yet (add Rework to have it rewritten)`,
    });
    run.transition('drafted');
  } else if (wantsDraft) {
    run.transition('needs_response');
    await draftReply(run, thread, verdict.instructions, undefined, verdict.draft, verdict.reason);
  } else if (record.state !== 'drafted') {
    run.decide({ kind: 'skip', source: 'system', detail: `no reply needed (${record.category})` });
    run.transition('skipped');
  } else {
    run.transition('drafted'); // a new message that needs no answer: the draft stays
  }
  await carryOutActions(run, thread, email, verdict);
}

/** The classification's outcome: what to tell the drafter, and what to do with the thread, on whose word. */
interface Verdict {
  instructions: string[];
  /** The reply, when the LLM wrote it in the classification step. */
  draft?: LlmDraft;
  actions: ActionSpec[];
  reason: ActionReason;
  /** The deciding rule hands the thread to this agent instead. */
  route?: AgentProfile;
}

/**
 * Tier one, the user's rules (Postgres); tier two, the LLM when no rule decides. Sets the record's
 * category; returns the rules' instructions for the prompt and, when the LLM wrote the reply in the
 * same step, the draft. Undefined when the LLM step gave up.
 */
async function classify(
  run: ThreadRun,
  thread: ThreadContent,
  email: PromptMessage,
  keepDraft: boolean,
): Promise<Verdict | undefined> {
  const { record } = run;
  const rules = await run.store.classifyByRules({ accountId: run.accountId, email });
  for (const reason of rules.skipped ?? []) run.decide({ kind: 'rule_skipped', source: 'system', detail: reason });
  if (rules.decided) {
    record.category = rules.category;
    record.confidence = 1;
    run.decide({ kind: 'classify', source: 'rules', ruleId: rules.ruleId, detail: `${rules.category}: ${rules.reason}` });
    return {
      instructions: rules.instructions,
      actions: rules.actions ?? rules.categoryActions[rules.category],
      reason: { source: 'rule', ruleId: rules.ruleId },
      ...(rules.route ? { route: rules.route } : {}),
    };
  }
  const triage = await llmStep(run, 'classification', () =>
    run.llm.triageWithLlm({
      accountId: run.accountId,
      email,
      thread: thread.messages,
      instructions: rules.instructions,
      replyContext: keepDraft ? undefined : thread.replyContext,
      outputAttempts: run.settings.llmAttempts,
    }),
  );
  if (!triage) return undefined;
  const verdict = triage.classification;
  record.category = verdict.category;
  record.confidence = verdict.confidence;
  run.decide({
    kind: 'classify',
    source: 'llm',
    detail: `${verdict.category} (${verdict.confidence.toFixed(2)}): ${verdict.reason}`,
    model: verdict.model,
    tokensIn: verdict.tokensIn,
    tokensOut: verdict.tokensOut,
  });
  return {
    instructions: rules.instructions,
    draft: triage.draft,
    actions: rules.categoryActions[verdict.category],
    reason: { source: 'llm', confidence: verdict.confidence, model: verdict.model },
  };
}

/** Needs Response added by the user: draft a reply to this thread, whatever it was classified as. */
async function draftOnRequest(run: ThreadRun): Promise<void> {
  const thread = await run.gmail.readThread(run.ids);
  if (!thread) return threadGone(run);
  run.record.category = 'needs_response';
  run.decide({ kind: 'classify', source: 'user', detail: 'Needs Response label added by the user' });
  run.transition('needs_response');
  return draftReply(run, thread, []);
}

/** Needs Response on a thread that has our draft: the draft answers it, so the label comes off. */
async function clearNeedsResponse(run: ThreadRun): Promise<void> {
  run.decide({ kind: 'label', source: 'user', detail: 'Needs Response: already drafted' });
  await run.gmail.changeLabels({ ...run.ids, labels: run.settings.labels, add: [], remove: ['needsResponse'] });
  journalLabel(run, 'remove_label', run.settings.labels.needsResponse, 'Needs Response on a thread our draft answers');
}

/** Writes the reply (unless `written` already holds it) and puts it in the thread, labelled Outbox. */
async function draftReply(
  run: ThreadRun,
  thread: ThreadContent,
  instructions: string[],
  rework?: { instructions: string; previousDraft: string },
  written?: LlmDraft,
  reason: ActionReason = { source: 'user' },
): Promise<void> {
  const replyTo = thread.latestInbound ?? thread.messages[thread.messages.length - 1];
  if (!replyTo) return;
  const draft = written ?? (await writeReply(run, thread, replyTo.from, instructions, rework));
  if (!draft) return;
  const draftId = await placeReply(run, replyTo, draft.body, reason);
  run.decide({
    kind: rework ? 'rework' : 'draft',
    source: 'llm',
    detail: rework ? `revised with: ${rework.instructions}` : `draft ${draftId}`,
    model: draft.model,
    tokensIn: draft.tokensIn,
    tokensOut: draft.tokensOut,
  });
}

/** Puts the reply in the thread as our draft, labelled Outbox, journaled; the thread is drafted. */
async function placeReply(run: ThreadRun, replyTo: PromptMessage, body: string, reason: ActionReason): Promise<string> {
  const { record } = run;
  const ref = await run.gmail.placeDraft({
    ...run.ids,
    draftId: record.draftId,
    body,
    replyTo,
    labels: run.settings.labels,
    add: ['outbox'],
    remove: ['needsResponse', 'rework', 'actionRequired'],
  });
  record.draftId = ref.draftId;
  record.draftMessageId = ref.messageId;
  record.draftCreatedAt ??= ref.internalDate;
  record.lastDraftBody = body;
  const key = actionKey({ ...run.ids, messageId: replyTo.messageId }, { kind: 'draft' });
  record.draftKey = key;
  run.journalLifecycle({ key, kind: 'draft', messageId: replyTo.messageId, sender: addressOf(replyTo.from), reason, result: { draftId: ref.draftId } });
  run.transition('drafted');
  return ref.draftId;
}

async function writeReply(
  run: ThreadRun,
  thread: ThreadContent,
  sender: string,
  instructions: string[],
  rework?: { instructions: string; previousDraft: string },
): Promise<LlmDraft | undefined> {
  const context = thread.replyContext ?? (await run.gmail.gatherReplyContext({ accountId: run.accountId, sender }));
  return llmStep(run, rework ? 'rework' : 'draft', () =>
    run.llm.writeDraft({
      accountId: run.accountId,
      thread: thread.messages,
      toneExamples: context.toneExamples,
      signature: context.signature,
      instructions,
      reworkInstructions: rework?.instructions,
      previousDraft: rework?.previousDraft,
      outputAttempts: run.settings.llmAttempts,
    }),
  );
}

/** Rework: rewrite our draft with the instructions the user typed into it; after the limit, Action Required. */
async function rework(run: ThreadRun): Promise<void> {
  const { record, settings } = run;
  if (!record.draftId) return;
  if (record.reworkCount >= settings.maxReworks) return needsTheUser(run, `rework limit reached (${settings.maxReworks})`);
  run.transition('rework_requested');
  const current = await run.gmail.readDraft({ accountId: run.accountId, draftId: record.draftId });
  if (!current) return draftDisappeared(run);
  record.draftMessageId = current.messageId;
  const { instructions } = extractReworkInstructions(current.body, record.lastDraftBody ?? '');
  const thread = await run.gmail.readThread(run.ids);
  if (!thread) return threadGone(run);
  record.reworkCount += 1;
  await draftReply(run, thread, [], {
    instructions: instructions ?? 'Improve the draft.',
    previousDraft: record.lastDraftBody ?? current.body,
  });
}

/** Done: the thread leaves the inbox with our labels off, and the workflow closes. */
async function archive(run: ThreadRun): Promise<void> {
  await run.gmail.changeLabels({
    ...run.ids,
    labels: run.settings.labels,
    add: [],
    remove: ['outbox', 'rework', 'done', 'needsResponse', 'actionRequired'],
    archive: true,
  });
  run.decide({ kind: 'archive', source: 'user', detail: 'Done label: archived' });
  const messageId = run.record.handledMessageIds.at(-1) ?? run.threadId;
  run.journalLifecycle({
    key: actionKey({ ...run.ids, messageId }, { kind: 'archive' }),
    kind: 'archive',
    messageId,
    sender: '',
    reason: { source: 'user' },
    result: {},
  });
  run.transition('archived');
}

/** Our draft may be gone (a deleted draft message, or mail the user sent): read it before deciding. */
async function checkDraft(run: ThreadRun, event: ThreadEvent): Promise<void> {
  const current = await run.gmail.readDraft({ accountId: run.accountId, draftId: run.record.draftId! });
  if (!current) return draftDisappeared(run);
  // Still there: the user edited it (Gmail saved a new message), or replied on their own.
  if (event.type === 'draft_gone') run.record.draftMessageId = current.messageId;
}

/** A gap repair's label request: act only on the request labels still on the thread. */
async function recheckLabels(run: ThreadRun, event: LabelsChangedEvent): Promise<void> {
  const onThread = await run.gmail.threadLabelRoles({ ...run.ids, labels: run.settings.labels });
  if (!onThread) return threadGone(run);
  const stillThere = event.added.filter((role) => onThread.includes(role));
  if (stillThere.length === 0) return;
  return handle(run, { ...event, added: stillThere, reconcile: false });
}

/** Our draft is gone: the user sent it, or threw it away. */
async function draftDisappeared(run: ThreadRun): Promise<void> {
  const sent = await run.gmail.findSentReply({ ...run.ids, afterMs: run.record.draftCreatedAt ?? 0 });
  await run.gmail.changeLabels({ ...run.ids, labels: run.settings.labels, add: [], remove: ['outbox', 'rework'] });
  journalLabel(run, 'remove_label', run.settings.labels.outbox, 'our draft is gone');
  if (sent) {
    const unedited = run.record.lastDraftBody !== undefined && !draftEditedByUser(sent.body, run.record.lastDraftBody);
    if (run.record.draftKey) {
      const messageId = run.record.draftKey.split(':')[2] ?? '';
      // What earned autonomy counts: our drafts to this sender that went out as we wrote them.
      run.journalLifecycle({ key: run.record.draftKey, kind: 'draft', messageId, sender: '', reason: { source: 'user' }, result: { sentUnedited: unedited } });
    }
    run.decide({ kind: 'sent', source: 'user', detail: `sent as ${sent.messageId}${unedited ? ' (unedited)' : ''}` });
    run.transition('sent');
  } else {
    run.decide({ kind: 'discarded', source: 'user', detail: 'draft deleted without sending' });
    run.transition('discarded');
  }
}

function threadGone(run: ThreadRun): void {
  run.decide({ kind: 'discarded', source: 'system', detail: 'thread no longer exists' });
  run.transition('discarded');
}

/** Whether the user edited our draft; when we cannot tell what we wrote, it is taken to be theirs. */
async function draftIsUsers(run: ThreadRun): Promise<boolean> {
  const current = await run.gmail.readDraft({ accountId: run.accountId, draftId: run.record.draftId! });
  if (!current) return false; // sent or deleted: its own event follows, and a new draft may be written
  run.record.draftMessageId = current.messageId;
  const generated = run.record.lastDraftBody;
  return generated === undefined || draftEditedByUser(current.body, generated);
}

/** Action Required, with the reason in the decision log. */
async function needsTheUser(run: ThreadRun, reason: string): Promise<void> {
  run.decide({ kind: 'action_required', source: 'system', detail: reason });
  await run.gmail.changeLabels({
    ...run.ids,
    labels: run.settings.labels,
    add: ['actionRequired'],
    remove: ['rework', 'needsResponse'],
  });
  journalLabel(run, 'add_label', run.settings.labels.actionRequired, reason);
  run.transition('action_required');
}

/** Journals a label change of the thread's own lifecycle, keyed by the latest message it handled. */
function journalLabel(run: ThreadRun, kind: 'add_label' | 'remove_label', label: string, why: string): void {
  const messageId = run.record.handledMessageIds.at(-1) ?? run.threadId;
  run.journalLifecycle({
    key: actionKey({ ...run.ids, messageId }, { kind, argument: label }),
    kind,
    argument: label,
    messageId,
    sender: '',
    reason: { source: 'system', why },
    result: {},
  });
}

/** Runs an LLM step; when its retries end in an error retrying cannot fix, the thread needs the user. */
async function llmStep<T>(run: ThreadRun, what: string, step: () => Promise<T>): Promise<T | undefined> {
  try {
    return await step();
  } catch (err) {
    const type = failureType(err);
    if (type && GIVE_UP_TYPES.includes(type)) {
      await needsTheUser(run, `${what} failed: ${type}: ${err instanceof ActivityFailure ? err.cause?.message : ''}`);
      return undefined;
    }
    throw err;
  }
}

// ---- actions: carried out under the safety policy, approved, sent after a delay, undone ----------

/** The address in `Name <address>`, lower-cased. */
function addressOf(from: string): string {
  return (/<([^>]+)>/.exec(from)?.[1] ?? from).trim().toLowerCase();
}

const labelOf = (a: { kind: string; argument?: string }) => (a.argument ? `${a.kind} ${a.argument}` : a.kind);

/**
 * The actions besides the draft: each is judged by the safety policy and journaled (the activity
 * does both), then runs, waits for approval, or is refused. Mail content never reaches the policy:
 * the actions come from the user's rules and categories, the LLM only picks the category.
 */
async function carryOutActions(run: ThreadRun, thread: ThreadContent, email: PromptMessage, verdict: Verdict): Promise<void> {
  const specs = verdict.actions.filter((a) => a.kind !== 'draft');
  if (specs.length === 0) return;
  const proposals: (ProposedAction & { result?: { body: string } })[] = [];
  for (const spec of specs) {
    if (spec.kind !== 'auto_reply') {
      proposals.push({ ...spec, reason: verdict.reason });
      continue;
    }
    const written = verdict.draft ?? (await writeReply(run, thread, email.from, verdict.instructions));
    if (written) proposals.push({ ...spec, reason: verdict.reason, result: { body: written.body } });
  }
  await proposeAndStart(run, email, proposals);
}

/** Judges and journals proposed actions, then runs, opens or records each; returns them as journaled. */
async function proposeAndStart(
  run: ThreadRun,
  email: PromptMessage,
  proposals: (ProposedAction & { result?: { body: string } })[],
  sendsNeedApproval?: string,
): Promise<JournaledAction[]> {
  const pausedByLabel = await run.actions.pausedByLabel({ accountId: run.accountId, label: run.actionSettings.pauseLabel });
  const journaled = await run.journal.proposeActions({
    ...run.ids,
    messageId: email.messageId,
    sender: addressOf(email.from),
    workflowId: run.workflowId,
    actions: proposals,
    pausedByLabel,
    approvalExpiryMs: run.actionSettings.approvalExpiryMs,
    ...(sendsNeedApproval ? { sendsNeedApproval } : {}),
  });
  for (const action of journaled) await startAction(run, action);
  return journaled;
}

async function startAction(run: ThreadRun, action: JournaledAction): Promise<void> {
  switch (action.state) {
    case 'refused':
      run.decide({ kind: 'action', source: 'system', detail: `refused ${labelOf(action)}: ${action.because.join('; ')}` });
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
      return; // carried out already (the message was redelivered)
  }
}

const openOf = (a: Pick<JournaledAction, 'id' | 'kind' | 'argument'>) => ({ id: a.id, kind: a.kind, ...(a.argument ? { argument: a.argument } : {}) });

/** Runs a queued or approved action: a label change now; a send after its delay (Undo cancels it). */
async function runAction(run: ThreadRun, action: Pick<OpenAction, 'id' | 'kind' | 'argument' | 'draftId'>): Promise<void> {
  if (SENDING_KINDS.includes(action.kind)) {
    const dueAt = Date.now() + run.actionSettings.sendDelayMs;
    await run.journal.settleAction({ id: action.id, from: ['queued', 'approved'], to: 'scheduled', scheduledForMs: dueAt });
    run.record.openActions.push({ ...openOf(action), state: 'scheduled', dueAt, ...(action.draftId ? { draftId: action.draftId } : {}) });
    run.decide({ kind: 'action', source: 'system', detail: `${labelOf(action)} goes out at ${new Date(dueAt).toISOString()} unless you undo it` });
    return;
  }
  try {
    await run.actions.performAction({ actionId: action.id });
    run.decide({ kind: 'action', source: 'system', detail: `${labelOf(action)}: done` });
  } catch (err) {
    const type = failureType(err);
    if (!type) throw err;
    // Retrying cannot help (the activity journaled it failed, with the reason): the thread goes on.
    run.decide({ kind: 'action', source: 'system', detail: `${labelOf(action)} failed: ${type}: ${err instanceof ActivityFailure ? err.cause?.message : ''}` });
  }
}

/** Waits, durably, for approve or reject until the approval expires; an auto-reply shows as a draft meanwhile. */
async function awaitApproval(run: ThreadRun, action: JournaledAction): Promise<void> {
  if (run.record.openActions.some((a) => a.id === action.id)) return;
  const open: OpenAction = { ...openOf(action), state: 'awaiting_approval', dueAt: Date.parse(action.expiresAt ?? '') || Date.now() };
  if (action.kind === 'auto_reply') {
    const placedAfter = Date.now();
    const draft = await run.actions.placeApprovalDraft({ actionId: action.id, label: run.actionSettings.awaitingApprovalLabel });
    Object.assign(open, { draftId: draft.draftId, draftMessageId: draft.messageId, draftCreatedAt: placedAfter });
  }
  run.record.openActions.push(open);
  const notified = await notifyApproval(run, action.id);
  run.decide({
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
async function decideAction(run: ThreadRun, event: ActionDecisionEvent): Promise<void> {
  const open = run.record.openActions.find((a) => a.id === event.actionId);
  if (!open) {
    // Not waiting here: done already (undo takes it back), or decided before (a repeat changes nothing).
    if (event.decision !== 'undo') return;
    const undone = await run.actions.undoAction({ actionId: event.actionId, by: event.by });
    run.decide({ kind: 'action', source: 'user', detail: undone.undone ? `undid ${event.actionId}` : `cannot undo ${event.actionId}: ${undone.why}` });
    return;
  }
  if (event.decision === 'approve') {
    if (open.state !== 'awaiting_approval') return; // scheduled: approved already
    takeOpen(run, open.id);
    const settled = await run.journal.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'approved', decidedBy: event.by });
    if (!settled?.moved) return;
    run.decide({ kind: 'action', source: 'user', detail: `${labelOf(open)} approved (${event.by})` });
    return runAction(run, open);
  }
  // Reject, or undo during a send's delay: nothing goes out.
  takeOpen(run, open.id);
  const to = open.state === 'awaiting_approval' ? 'rejected' : 'undone';
  await run.journal.settleAction({ id: open.id, from: [open.state], to, decidedBy: event.by, note: `${to} (${event.by})` });
  if (open.draftId) await discardApprovalDraft(run, open, true);
  run.decide({ kind: 'action', source: 'user', detail: `${labelOf(open)} ${to} (${event.by})` });
}

/** An approval expired (Action Required), or a send's delay is over (it goes out). */
async function actionDue(run: ThreadRun, event: ActionDueEvent): Promise<void> {
  const open = takeOpen(run, event.actionId);
  if (!open) return;
  if (open.state === 'awaiting_approval') {
    await run.journal.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'expired', note: 'no decision before it expired' });
    if (open.draftId) await discardApprovalDraft(run, open, true);
    return needsTheUser(run, `approval of ${labelOf(open)} expired`);
  }
  const sent = await run.actions.sendAction({ actionId: open.id, pauseLabel: run.actionSettings.pauseLabel });
  if (sent.state === 'awaiting_approval') {
    // The kill switch went on during the delay: it waits for the user now.
    run.record.openActions.push({ ...open, state: 'awaiting_approval', dueAt: Date.now() + run.actionSettings.approvalExpiryMs, draftId: undefined });
    run.decide({ kind: 'action', source: 'system', detail: `${labelOf(open)} paused before it went out: waits for your approval` });
    return;
  }
  if (sent.sentMessageId) run.record.sentByUs.push(sent.sentMessageId);
  if (open.draftId) await discardApprovalDraft(run, open, false);
  run.decide({ kind: 'action', source: 'system', detail: sent.sent ? `${labelOf(open)} sent (${sent.sentMessageId})` : `${labelOf(open)} not sent: ${sent.state}` });
  if (sent.sent && open.kind === 'auto_reply' && !run.record.draftId) run.transition('sent');
}

async function discardApprovalDraft(run: ThreadRun, open: OpenAction, deleteDraft: boolean): Promise<void> {
  await run.actions.discardApprovalDraft({
    ...run.ids,
    ...(deleteDraft && open.draftId ? { draftId: open.draftId } : {}),
    label: run.actionSettings.awaitingApprovalLabel,
  });
}

/** The auto-reply waiting as a draft is gone or sent: sending it in Gmail approves it, deleting it rejects it. */
async function checkApprovalDraft(run: ThreadRun): Promise<void> {
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
    await run.journal.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'done', decidedBy: 'gmail', result: { sentMessageId: sent.messageId } });
    run.decide({ kind: 'sent', source: 'user', detail: `${labelOf(open)} approved by sending it in Gmail (${sent.messageId})` });
    run.transition('sent');
  } else {
    await run.journal.settleAction({ id: open.id, from: ['awaiting_approval'], to: 'rejected', decidedBy: 'gmail', note: 'its draft was deleted in Gmail' });
    run.decide({ kind: 'action', source: 'user', detail: `${labelOf(open)} rejected by deleting its draft in Gmail` });
  }
}

// ---- the agent route: a routing rule hands the thread to an agent that works with tools ---------

/**
 * Runs the profile's agent on the new mail (src/agent/agent-loop.ts). Its tools act on this thread
 * only, through the same policy, journal and approvals as every other action.
 */
async function handToAgent(run: ThreadRun, thread: ThreadContent, email: PromptMessage, profile: AgentProfile): Promise<void> {
  const runKey = `${workflowInfo().runId}:${email.messageId}`;
  const reasonAt = (step: number): ActionReason => ({ source: 'agent', profile: profile.name, step });
  run.decide({ kind: 'agent', source: 'system', detail: `handed to agent ${profile.name} (${profile.tools.join(', ')}; at most ${profile.maxSteps} steps)` });
  let tokensIn = 0;
  let tokensOut = 0;

  async function act(spec: ActionSpec & { body?: string }, step: number): Promise<string> {
    const { body, ...action } = spec;
    const approval = profile.sendsNeedApproval ? `agent ${profile.name}'s sends need your approval` : undefined;
    const [journaled] = await proposeAndStart(run, email, [{ ...action, reason: reasonAt(step), ...(body ? { result: { body } } : {}) }], approval);
    const now = journaled ? ((await run.journal.readAction({ id: journaled.id })) ?? journaled) : undefined;
    if (!now) return 'nothing was done';
    switch (now.state) {
      case 'done':
        return `${labelOf(now)}: done`;
      case 'scheduled':
        return `${labelOf(now)}: goes out at ${now.scheduledFor ?? 'soon'} unless the user undoes it`;
      case 'awaiting_approval':
        return `${labelOf(now)}: waits for the user's approval (${now.because.join('; ')})`;
      case 'refused':
        return `${labelOf(now)}: refused by the safety policy (${now.because.join('; ')})`;
      default:
        return `${labelOf(now)}: ${now.state}${now.note ? ` (${now.note})` : ''}`;
    }
  }

  const hands: AgentHands = {
    async turn(messages) {
      const turn = await run.agentLlm.agentTurn({ accountId: run.accountId, profile, messages });
      tokensIn += turn.tokensIn;
      tokensOut += turn.tokensOut;
      return turn;
    },
    async tool(call, step) {
      const input = call.input as Record<string, unknown>;
      switch (call.name as AgentToolName) {
        case 'read_thread':
          return thread.messages.map((m) => `From: ${m.from}\nDate: ${m.date}\nSubject: ${m.subject}\n\n${m.body}`).join('\n\n---\n\n');
        case 'search_mailbox': {
          const hits = await run.agentGmail.searchMailbox({ accountId: run.accountId, query: String(input.query), maxResults: Number(input.max_results ?? 5) });
          return hits.length === 0 ? 'no messages match' : hits.map((h) => `${h.date} | ${h.from} | ${h.subject} | ${h.snippet}`).join('\n');
        }
        case 'sender_history':
          return run.agentStore.senderHistory({ accountId: run.accountId, sender: addressOf(email.from) });
        case 'write_draft': {
          const draftId = await placeReply(run, email, String(input.body), reasonAt(step));
          return `draft ${draftId} is in the thread for the user to review`;
        }
        case 'send_reply':
          return act({ kind: 'auto_reply', body: String(input.body) }, step);
        case 'add_label':
        case 'remove_label':
          return act({ kind: call.name as 'add_label' | 'remove_label', argument: String(input.label) }, step);
        case 'archive':
          return act({ kind: 'archive' }, step);
        case 'escalate':
          return 'the user will take it from here';
      }
    },
    recordSteps: (steps) => run.agentStore.recordAgentSteps({ ...run.ids, runKey, profile: profile.name, steps }),
  };

  let outcome;
  try {
    outcome = await agentLoop(profile, briefing(email, run.threadId), hands);
  } catch (err) {
    const type = failureType(err);
    if (!type || !GIVE_UP_TYPES.includes(type)) throw err;
    return needsTheUser(run, `agent ${profile.name} stopped: ${type}: ${err instanceof ActivityFailure ? err.cause?.message : ''}`);
  }
  const usage = { model: profile.model, tokensIn, tokensOut };
  switch (outcome.kind) {
    case 'escalated':
      run.decide({ kind: 'agent', source: 'llm', detail: `agent ${profile.name} escalated: ${outcome.reason}`, ...usage });
      return needsTheUser(run, `agent ${profile.name}: ${outcome.reason}`);
    case 'step_limit':
      run.decide({ kind: 'agent', source: 'llm', detail: `agent ${profile.name} reached its step limit (${outcome.steps})`, ...usage });
      return needsTheUser(run, `agent ${profile.name} reached its step limit (${outcome.steps}) without finishing`);
    case 'ended':
      run.decide({ kind: 'agent', source: 'llm', detail: `agent ${profile.name} finished: ${outcome.text.slice(0, 300)}`, ...usage });
      if (run.record.state === 'pending') run.transition('skipped');
  }
}
