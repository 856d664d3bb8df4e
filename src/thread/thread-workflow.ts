// One workflow per Gmail thread: classify → act (draft, and the rule's or category's actions under
// the safety policy, or hand the thread to an agent) → wait for the user (Rework, Done, Needs
// Response, approve / reject / undo) → notice the reply was sent. The process is threadWorkflow
// below, its steps in process order after it; which event leads to which step in which state is
// transitions.ts; the record and its views are thread-record.ts; the Temporal plumbing of a run
// (signals, query, search attributes, Postgres writes) is thread-run.ts.
import { isCancellation, patched } from '@temporalio/workflow';
import { actionKey, type ActionReason } from '../actions/contracts.js';
import { describeFailure } from '../temporal/workflow-failures.js';
import { actionDue, carryOutActions, carryOutProposal, checkApprovalDraft, carryOutDecision } from './action-steps.js';
import type { LlmDraft, PromptMessage, ThreadContent } from './activity-contracts.js';
import { handToAgent } from './agent-steps.js';
import { journalLabel, llmStep, needsTheUser, placeDraftInThread, writeReplyText, type Verdict } from './common-steps.js';
import type { BatchedClassification, LabelsChangedEvent, ThreadEvent, ThreadStatus, ThreadWorkflowInput } from './contracts.js';
import { learnFromCorrections } from './correction-steps.js';
import { draftEditedByUser, extractReworkInstructions } from './rework.js';
import { afterUserSent, endWait, followUp } from './follow-up-steps.js';
import { ThreadRun } from './thread-run.js';
import { endSnoozeEarly, remind, returnFromSnooze, sendLater, setTimer } from './timer-steps.js';
import { nextStep, type Step, type StepInput } from './transitions.js';
import { COLD_EMAIL_RULE_ID } from '../rules/contracts.js';

export async function threadWorkflow(input: ThreadWorkflowInput): Promise<ThreadStatus> {
  const run = await ThreadRun.open(input); // what continue-as-new carried, or what earlier runs left
  if (input.learnOnly && !(await learnOnly(run))) return run.learnedStatus();
  run.show();
  while (!run.closed) {
    const event = await run.nextEvent(); // waits for mail or the user, for days if need be
    if (event === 'idle') break; // nothing for a long while: this run ends, new mail starts another
    if (event === 'continue') return run.continueAsNew(); // history is long: carry on in a fresh run
    await run.busyWith(async () => {
      await takeStep(run, event).catch((err: unknown) => stepFailed(run, event, err));
      await learnFromCorrections(run, event); // the user's label changes as corrections (correction-steps.ts)
      await run.save();
    });
  }
  return run.finish();
}

/**
 * A run started for the user's label changes after the thread's workflow had ended (ingest.ts
 * learnAfterClose): they are learned from as in an ordinary run (correction-steps.ts), written to
 * the thread's log, and the run ends; nothing is classified, drafted or changed in Gmail. Returns
 * true when mail (or Done, Needs Response) came meanwhile: the run carries on as an ordinary one,
 * from what earlier runs left. Runs recorded before this input existed never take this branch.
 */
async function learnOnly(run: ThreadRun): Promise<boolean> {
  for (let changes = run.takeLabelChanges(); changes.length > 0; changes = run.takeLabelChanges()) {
    await run.busyWith(async () => {
      for (const event of changes) await learnFromCorrections(run, event);
      await run.saveDecisions();
    });
  }
  return run.opened;
}

/** The step the event leads to in the thread's current state (transitions.ts). */
async function takeStep(run: ThreadRun, event: ThreadEvent): Promise<void> {
  const next = nextStep(run.record, event);
  // New mail a Message Batch has classified ahead (a backfill's hand-over): the thread takes that verdict.
  if (next.step === 'classify' && event.type === 'message_added' && event.classified) return classifyAndAnswer(run, { batched: event.classified });
  await take(run, next.step, next);
}

/** Which function takes each step, given the step as it is taken (with its event when it reads one). */
const STEPS: { [S in Step]: (run: ThreadRun, next: StepInput[S]) => Promise<void> | void } = {
  classify: (run) => classifyAndAnswer(run),
  draft_on_request: draftOnRequest,
  clear_needs_response: clearNeedsResponse,
  rework,
  refuse_rework: (run) => run.logDecision({ kind: 'label', source: 'user', detail: `Rework ignored in state ${run.record.state}` }),
  archive,
  check_draft: (run, { event }) => checkDraft(run, event),
  mark_replied: (run, { event }) => markReplied(run, event),
  recheck_labels: (run, { event }) => recheckLabels(run, event),
  check_approval_draft: checkApprovalDraft,
  decide_action: (run, { event }) => carryOutDecision(run, event),
  action_due: (run, { event }) => actionDue(run, event),
  reclassify: (run) => classifyAndAnswer(run, { again: true }),
  set_timer: (run, { event }) => setTimer(run, event),
  cancel_timer: (run, { event }) => setTimer(run, event),
  end_wait_and_classify: async (run) => {
    await endWait(run);
    return classifyAndAnswer(run);
  },
  unsnooze_and_classify: async (run) => {
    await endSnoozeEarly(run);
    if (run.record.state === 'awaiting_reply') await endWait(run);
    return classifyAndAnswer(run);
  },
  follow_up: (run, { event }) => followUp(run, event),
  return_from_snooze: (run, { event }) => returnFromSnooze(run, event),
  remind: (run, { event }) => remind(run, event),
  send_later: (run, { event }) => sendLater(run, event),
  propose_actions: (run, { event }) => carryOutProposal(run, event),
  ignore: () => undefined,
};

/** Takes the step (a generic function: the step's name and its input are checked to belong together). */
async function take<S extends Step>(run: ThreadRun, step: S, next: StepInput[S]): Promise<void> {
  await STEPS[step](run, next);
}

// ---- the steps ------------------------------------------------------------------------------

/**
 * New mail: read the thread, classify it (rules, then the LLM), and draft a reply when it needs one.
 * `again`: the user asked for the latest message to be classified anew (a rule changed); the new
 * verdict is acted on only when its category differs, and every action keeps its idempotency key.
 */
async function classifyAndAnswer(run: ThreadRun, { again = false, batched }: { again?: boolean; batched?: BatchedClassification } = {}): Promise<void> {
  const { record } = run;
  const thread = await run.gmail.readThread({ ...run.ids, withRules: true });
  if (!thread) return threadGone(run);
  const email = thread.latestInbound;
  if (again) {
    const was = record.category ?? 'not classified';
    run.logDecision({ kind: 'reclassify', source: 'user', detail: email ? `classify again (was ${was})` : `nothing to classify again: the last message is yours (${was})` });
    if (!email) return;
  } else {
    if (!email) return; // the user wrote last: nothing to answer
    if (record.handledMessageIds.includes(email.messageId)) return; // already classified (a redelivery)
    record.handledMessageIds.push(email.messageId);
  }
  const previousCategory = record.category;
  // Mail we cannot read is not guessed at: the user gets it, with the reason recorded.
  if (email.unreadable) return needsTheUser(run, `message ${email.messageId} could not be read: ${email.unreadable}`);
  // Broken MIME that mail clients show as text is read as text; the log says so.
  if (email.bodyDefect) run.logDecision({ kind: 'read', source: 'system', detail: `message ${email.messageId}: ${email.bodyDefect}` });

  // A draft the user has edited is their work: new mail in the thread does not overwrite it (and
  // no reply is written for it). Rework rewrites it on request, with the new mail.
  const mayHaveUserDraft = record.state === 'drafted' && record.draftId !== undefined;
  const keepDraft = mayHaveUserDraft && (await draftIsUsers(run));
  const verdict = await classify(run, thread, email, keepDraft, batched?.messageId === email.messageId ? batched : undefined);
  if (!verdict) return; // the LLM step gave up: Action Required
  if (again && record.category === previousCategory) {
    run.logDecision({ kind: 'skip', source: 'system', detail: `still ${record.category}: nothing changes` });
    return;
  }
  run.summarize(`${record.category}: ${thread.subject}`);
  if (verdict.route) return handToAgent(run, thread, email, verdict.route);

  // What the rule or the category asks for: a draft (the reply the user sends), and the rest,
  // carried out under the safety policy. An auto-reply replaces the draft.
  const wantsDraft = verdict.actions.some((a) => a.kind === 'draft') && !verdict.actions.some((a) => a.kind === 'auto_reply');
  if (wantsDraft && keepDraft) {
    run.logDecision({
      kind: 'draft_kept',
      source: 'system',
      detail: `kept the draft you edited; it does not answer message ${email.messageId} yet (add Rework to have it rewritten)`,
    });
    run.transition('drafted');
  } else if (wantsDraft) {
    run.transition('needs_response');
    await draftReply(run, thread, verdict.instructions, undefined, verdict.draft, verdict.reason);
  } else if (record.state !== 'drafted') {
    run.logDecision({ kind: 'skip', source: 'system', detail: `no reply needed (${record.category})` });
    run.transition('skipped');
  } else {
    run.transition('drafted'); // a new message that needs no answer: the draft stays
  }
  await carryOutActions(run, thread, email, verdict);
}

/**
 * Tier one, the user's rules (read with the thread); tier two, the LLM when no rule decides: its
 * verdict decided ahead in a Message Batch (`batched`, about this very message), else a call now.
 * Sets the record's category; returns the rules' instructions for the prompt and, when the LLM wrote
 * the reply in the same step, the draft. Undefined when the LLM step gave up.
 */
async function classify(
  run: ThreadRun,
  thread: ThreadContent,
  email: PromptMessage,
  keepDraft: boolean,
  batched?: BatchedClassification,
): Promise<Verdict | undefined> {
  const { record } = run;
  const rules = thread.rules!; // readThread withRules gives them whenever there is an inbound email
  for (const reason of rules.skipped ?? []) run.logDecision({ kind: 'rule_skipped', source: 'system', detail: reason });
  if (rules.coldEmail?.gate === 'ask') run.logDecision({ kind: 'classify', source: 'rules', ruleId: COLD_EMAIL_RULE_ID, detail: `cold-email check: ${rules.coldEmail.reason}; the model decides` });
  if (rules.decided) {
    record.category = rules.category;
    record.confidence = 1;
    run.logDecision({ kind: 'classify', source: 'rules', ruleId: rules.ruleId, detail: `${rules.category}: ${rules.reason}` });
    return {
      instructions: rules.instructions,
      actions: rules.actions ?? rules.categoryActions[rules.category],
      reason: { source: 'rule', ruleId: rules.ruleId },
      ...(rules.route ? { route: rules.route } : {}),
    };
  }
  // Only events of a backfill's batched hand-over carry a verdict; the marker keeps their histories apart.
  const fromBatch = batched && patched(BATCHED_CLASSIFICATION_PATCH) ? batched : undefined;
  const triage = fromBatch ? { classification: fromBatch, draft: undefined } : await llmStep(run, 'classification', () =>
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
  run.logDecision({
    kind: 'classify',
    source: 'llm',
    detail: `${verdict.category} (${verdict.confidence.toFixed(2)}): ${verdict.reason}${fromBatch ? ` (Message Batch ${fromBatch.batchId})` : ''}`,
    model: verdict.model,
    tokensIn: verdict.tokensIn,
    tokensOut: verdict.tokensOut,
    ...(fromBatch ? { batch: fromBatch.batchId } : {}),
  });
  const gate = rules.coldEmail;
  // The cold-email gate holds no allowlisted sender, nor one the user has had a thread with, whatever
  // the model says. Only verdicts read with the gate carry `coldEmail`; the marker keeps them apart.
  if (gate?.gate === 'exempt' && verdict.category === 'cold_outreach' && patched(COLD_EMAIL_PATCH)) {
    record.category = 'fyi';
    run.logDecision({ kind: 'classify', source: 'rules', ruleId: COLD_EMAIL_RULE_ID, detail: `fyi: not cold outreach, ${gate.reason}` });
  }
  return {
    instructions: rules.instructions,
    draft: triage.draft,
    actions: rules.categoryActions[record.category],
    reason: { source: 'llm', confidence: verdict.confidence, model: verdict.model },
  };
}

/** Needs Response added by the user: draft a reply to this thread, whatever it was classified as. */
async function draftOnRequest(run: ThreadRun): Promise<void> {
  const thread = await run.gmail.readThread(run.ids);
  if (!thread) return threadGone(run);
  run.record.category = 'needs_response';
  run.logDecision({ kind: 'classify', source: 'user', detail: 'Needs Response label added by the user' });
  run.transition('needs_response');
  return draftReply(run, thread, []);
}

/** Needs Response on a thread that has our draft: the draft answers it, so the label comes off. */
async function clearNeedsResponse(run: ThreadRun): Promise<void> {
  run.logDecision({ kind: 'label', source: 'user', detail: 'Needs Response: already drafted' });
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
  // A bare `From: foo`, or no From at all: a reply would have nobody to go to.
  if (replyTo.replyHeaders?.recipients.length === 0) return needsTheUser(run, `no reply drafted: message ${replyTo.messageId} has no address to reply to`);
  const draft = written ?? (await writeReplyText(run, thread, replyTo.sender, instructions, rework));
  if (!draft) return;
  const draftId = await placeDraftInThread(run, replyTo, draft.body, reason);
  run.logDecision({
    kind: rework ? 'rework' : 'draft',
    source: 'llm',
    detail: rework ? `revised with: ${rework.instructions}` : `draft ${draftId}`,
    model: draft.model,
    tokensIn: draft.tokensIn,
    tokensOut: draft.tokensOut,
    ...(draft.lessons ? { lessons: draft.lessons } : {}),
  });
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
  if (instructions) await keepWritingEvidence(run, 'rework', `rework:${record.reworkCount}`, record.lastDraftBody ?? current.body, instructions);
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
  run.logDecision({ kind: 'archive', source: 'user', detail: 'Done label: archived' });
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

/** The user answered without our draft: the thread is closed as sent, or waits for the answer (follow-up-steps.ts). */
async function markReplied(run: ThreadRun, event: { messageId: string }): Promise<void> {
  run.logDecision({ kind: 'sent', source: 'user', detail: `the user replied (${event.messageId})` });
  return afterUserSent(run, event.messageId);
}

/** A gap repair's label request: act only on the request labels still on the thread. */
async function recheckLabels(run: ThreadRun, event: LabelsChangedEvent): Promise<void> {
  const onThread = await run.gmail.threadLabelRoles({ ...run.ids, labels: run.settings.labels });
  if (!onThread) return threadGone(run);
  const stillThere = event.added.filter((role) => onThread.includes(role));
  if (stillThere.length === 0) return;
  return takeStep(run, { ...event, added: stillThere, reconcile: false });
}

/** Our draft is gone: the user sent it, or threw it away. */
async function draftDisappeared(run: ThreadRun): Promise<void> {
  const sent = await run.gmail.findSentReply({ ...run.ids, afterMs: run.record.draftCreatedAt ?? 0 });
  await run.gmail.changeLabels({ ...run.ids, labels: run.settings.labels, add: [], remove: ['outbox', 'rework'] });
  journalLabel(run, 'remove_label', run.settings.labels.outbox, 'our draft is gone');
  if (sent) {
    const unedited = run.record.lastDraftBody !== undefined && !draftEditedByUser(sent.body, run.record.lastDraftBody);
    if (run.record.draftKey) {
      const messageId = run.record.draftRepliesTo ?? '';
      // What earned autonomy counts: our drafts to this sender that went out as we wrote them.
      run.journalLifecycle({ key: run.record.draftKey, kind: 'draft', messageId, sender: '', reason: { source: 'user' }, result: { sentUnedited: unedited } });
    }
    if (run.record.lastDraftBody !== undefined) await keepWritingEvidence(run, 'sent', `sent:${sent.messageId}`, run.record.lastDraftBody, sent.body);
    run.logDecision({ kind: 'sent', source: 'user', detail: `sent as ${sent.messageId}${unedited ? ' (unedited)' : ''}` });
    await afterUserSent(run, sent.messageId);
  } else {
    run.logDecision({ kind: 'discarded', source: 'user', detail: 'draft deleted without sending' });
    run.transition('discarded');
  }
}

/**
 * What writing lessons learn from (docs/learning.md): our draft beside what the user sent, or the
 * rework instructions they typed. Runs before this change never recorded it (the patch).
 */
async function keepWritingEvidence(run: ThreadRun, source: 'sent' | 'rework', what: string, draft: string, final: string): Promise<void> {
  const draftKey = run.record.draftKey;
  if (!draftKey || !patched(WRITING_EVIDENCE_PATCH)) return;
  await run.store.recordWritingEvidence({ ...run.ids, source, draftKey, key: `${draftKey}:${what}`, draft, final });
}

const WRITING_EVIDENCE_PATCH = 'writing-evidence';
const COLD_EMAIL_PATCH = 'cold-email-gate';
const BATCHED_CLASSIFICATION_PATCH = 'batched-classification';

/**
 * A step failed for good: an error no retry fixes (from Gmail, the LLM, parsing or our own code),
 * or retries that ran out on this thread's own mail. The thread does not fail: it ends in Action
 * Required with the reason, and the message is taken as handled, so the inbox scan and the
 * fallback sync do not hand it over again; new mail or the user moves the thread on.
 */
async function stepFailed(run: ThreadRun, event: ThreadEvent, err: unknown): Promise<void> {
  if (isCancellation(err)) throw err;
  if (event.type === 'message_added' && !run.record.handledMessageIds.includes(event.messageId)) {
    run.record.handledMessageIds.push(event.messageId);
  }
  await needsTheUser(run, describeFailure(err));
}

function threadGone(run: ThreadRun): void {
  run.logDecision({ kind: 'discarded', source: 'system', detail: 'thread no longer exists' });
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
