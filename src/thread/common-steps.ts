// The steps every route through a thread uses: the classification's outcome, writing the reply and
// putting it in the thread as our draft, Action Required, the lifecycle's journaled label changes,
// and an LLM step that gives up into Action Required. Workflow code.
import { isCancellation } from '@temporalio/workflow';
import type { AgentProfile } from '../agent/contracts.js';
import { actionKey, type ActionReason, type ActionSpec } from '../actions/contracts.js';
import type { LlmDraft, PromptMessage, ThreadContent } from './activity-contracts.js';
import { activityErrorText, describeFailure, failureType } from '../temporal/workflow-failures.js';
import { GIVE_UP_TYPES } from './activity-proxies.js';
import type { ThreadRun } from './thread-run.js';

/** The classification's outcome: what to tell the drafter, and what to do with the thread, on whose word. */
export interface Verdict {
  instructions: string[];
  /** The reply, when the LLM wrote it in the classification step. */
  draft?: LlmDraft;
  actions: ActionSpec[];
  reason: ActionReason;
  /** The deciding rule hands the thread to this agent instead. */
  route?: AgentProfile;
}

/** Puts the reply in the thread as our draft, labelled Outbox, journaled; the thread is drafted. */
export async function placeDraftInThread(run: ThreadRun, replyTo: PromptMessage, body: string, reason: ActionReason): Promise<string> {
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
  record.draftRepliesTo = replyTo.messageId;
  const recipients = replyTo.replyHeaders?.recipients.map((r) => r.address);
  run.journalLifecycle({ key, kind: 'draft', messageId: replyTo.messageId, sender: replyTo.sender, ...(recipients ? { recipients } : {}), reason, result: { draftId: ref.draftId } });
  run.transition('drafted');
  return ref.draftId;
}

export async function writeReplyText(
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

/**
 * Action Required, with the reason in the decision log and the journal. The state holds even when
 * the label cannot be put on the thread (Gmail refuses that too): the reason then says so.
 */
export async function needsTheUser(run: ThreadRun, reason: string): Promise<void> {
  run.logDecision({ kind: 'action_required', source: 'system', detail: reason });
  try {
    await run.gmail.changeLabels({
      ...run.ids,
      labels: run.settings.labels,
      add: ['actionRequired'],
      remove: ['rework', 'needsResponse'],
    });
    journalLabel(run, 'add_label', run.settings.labels.actionRequired, reason);
  } catch (err) {
    if (isCancellation(err)) throw err;
    run.logDecision({ kind: 'action_required', source: 'system', detail: `the ${run.settings.labels.actionRequired} label could not be set: ${describeFailure(err)}` });
  }
  run.transition('action_required');
}

/** Journals a label change of the thread's own lifecycle, keyed by the latest message it handled. */
export function journalLabel(run: ThreadRun, kind: 'add_label' | 'remove_label', label: string, why: string): void {
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
export async function llmStep<T>(run: ThreadRun, what: string, step: () => Promise<T>): Promise<T | undefined> {
  try {
    return await step();
  } catch (err) {
    const type = failureType(err);
    if (type && GIVE_UP_TYPES.includes(type)) {
      await needsTheUser(run, `${what} failed: ${activityErrorText(err)}`);
      return undefined;
    }
    throw err;
  }
}
