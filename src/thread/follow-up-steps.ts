// Awaiting reply and the follow-up: when the user sends a message that expects an answer (the
// follow-up rules say so, else the LLM), the thread waits for it N business days (a durable timer, journaled); the answer cancels the wait;
// otherwise the thread gets the Follow Up label, the user is told and, when the account allows it,
// a nudge is drafted (a draft only). An answer that comes while the nudge is written wins: the
// nudge is deleted. Workflow code.
import { isCancellation, patched } from '@temporalio/workflow';
import { actionKey } from '../actions/contracts.js';
import { failureType } from '../temporal/workflow-failures.js';
import { activityErrorText } from '../temporal/workflow-failures.js';
import type { PromptMessage, ThreadContent } from './activity-contracts.js';
import { GIVE_UP_TYPES } from './activity-proxies.js';
import { writeReplyText } from './common-steps.js';
import { DEFAULT_FOLLOW_UP_SETTINGS, type WakeEvent } from './contracts.js';
import type { ThreadRun } from './thread-run.js';
import { notifyTimer, settleWake } from './timer-steps.js';

/** Runs started before the follow-up closed the thread as sent when the user sent; they still do. */
export const FOLLOW_UP_PATCH = 'follow-up-awaits-reply';
/** Runs started before the follow-up rules asked the LLM straight away; they still do. */
export const FOLLOW_UP_RULES_PATCH = 'follow-up-rules-first';

const NUDGE_INSTRUCTION =
  'Write a short, friendly follow-up to the last message in the thread, which the user sent and nobody has answered yet: ' +
  'ask whether the recipients had a chance to look at it. No new requests.';

/** The user sent a message: the thread closes as sent, unless the message expects an answer. */
export async function afterUserSent(run: ThreadRun, sentMessageId: string): Promise<void> {
  if (!patched(FOLLOW_UP_PATCH)) return run.transition('sent');
  const thread = await run.gmail.readThread(run.ids);
  const mine = thread?.messages.filter((m) => m.fromUser) ?? [];
  const sent = mine.find((m) => m.messageId === sentMessageId) ?? mine.at(-1);
  if (!sent) return run.transition('sent');
  const expects = await expectsReply(run, sent);
  if (!expects.yes) return run.transition('sent');
  await awaitReply(run, sent, expects.businessDays);
}

/** The rules' word on it, else the LLM's; a judgement that cannot be had closes the thread as sent. */
async function expectsReply(run: ThreadRun, sent: PromptMessage): Promise<{ yes: boolean; businessDays?: number }> {
  if (patched(FOLLOW_UP_RULES_PATCH)) {
    const rules = await run.store.followUpRules({ accountId: run.accountId, sent });
    for (const reason of rules.skipped ?? []) run.logDecision({ kind: 'rule_skipped', source: 'system', detail: reason });
    if (rules.decided) {
      const days = rules.businessDays ? `, follow up after ${rules.businessDays} business day(s)` : '';
      run.logDecision({
        kind: 'timer',
        source: 'rules',
        ruleId: rules.ruleId,
        detail: `${sent.messageId} ${rules.expectsReply ? 'expects an answer' : 'expects no answer'}${days}: ${rules.reason}`,
      });
      return { yes: rules.expectsReply, ...(rules.businessDays ? { businessDays: rules.businessDays } : {}) };
    }
  }
  return { yes: await llmExpectsReply(run, sent) };
}

/** The LLM's judgement (when no rule decides); one that cannot be had is a no. */
async function llmExpectsReply(run: ThreadRun, sent: PromptMessage): Promise<boolean> {
  try {
    const judged = await run.llm.expectsReply({ accountId: run.accountId, sent, outputAttempts: run.settings.llmAttempts });
    run.logDecision({
      kind: 'timer',
      source: 'llm',
      detail: `${sent.messageId} ${judged.expectsReply ? 'expects an answer' : 'expects no answer'}: ${judged.reason}`,
      model: judged.model,
      tokensIn: judged.tokensIn,
      tokensOut: judged.tokensOut,
    });
    return judged.expectsReply;
  } catch (err) {
    const type = failureType(err);
    if (isCancellation(err) || !type || !GIVE_UP_TYPES.includes(type)) throw err;
    run.logDecision({ kind: 'timer', source: 'system', detail: `no follow-up: could not tell whether ${sent.messageId} expects an answer (${activityErrorText(err)})` });
    return false;
  }
}

/**
 * The thread waits for the answer: a follow-up timer N business days away, in the account's zone.
 * A rule's own `businessDays` wins over the setting and over FOLLOW_UP_AFTER.
 */
async function awaitReply(run: ThreadRun, sent: PromptMessage, ruleDays?: number): Promise<void> {
  const sentMessageId = sent.messageId;
  const settings = run.settings.followUp ?? DEFAULT_FOLLOW_UP_SETTINGS;
  const now = Date.now();
  const at =
    settings.afterMs !== undefined && ruleDays === undefined
      ? now + settings.afterMs
      : await run.store.followUpDueAt({ accountId: run.accountId, fromMs: now, businessDays: ruleDays ?? settings.businessDays });
  const journaled = await run.store.journalTimer({
    ...run.ids,
    workflowId: run.workflowId,
    requestId: `follow-up:${sentMessageId}`,
    kind: 'follow_up',
    atMs: at,
    reason: { source: 'system', why: `waiting for an answer to ${sentMessageId}` },
    about: { subject: sent.subject, to: sent.to },
  });
  // One wait at a time: the newest message the user sent is the one waiting for its answer.
  for (const earlier of run.record.wakes.filter((w) => w.kind === 'follow_up' && w.actionId !== journaled.id)) {
    await settleWake(run, run.takeWake(earlier.actionId)!, 'undone', `replaced: you sent ${sentMessageId}`);
  }
  run.addWake({ actionId: journaled.id, kind: 'follow_up', at, by: 'system', note: sentMessageId });
  // Our draft, if it was the message sent, is gone: the thread has none while it waits.
  const { record } = run;
  for (const key of ['draftId', 'draftMessageId', 'draftCreatedAt', 'lastDraftBody', 'draftKey', 'draftRepliesTo'] as const) delete record[key];
  run.logDecision({ kind: 'timer', source: 'system', detail: `awaiting an answer until ${new Date(at).toISOString()}` });
  run.transition('awaiting_reply');
}

/** The answer came: the wait ends, and a nudge left in the thread is deleted. */
export async function endWait(run: ThreadRun): Promise<void> {
  const pending = run.record.wakes.filter((w) => w.kind === 'follow_up');
  for (const wake of pending) await settleWake(run, run.takeWake(wake.actionId)!, 'undone', 'the answer came');
  if (pending.length === 0) {
    // The follow-up had fallen due: its label and any nudge go.
    const nudge = run.record.nudgeDraftId;
    await run.gmail.discardApprovalDraft({ ...run.ids, ...(nudge ? { draftId: nudge } : {}), label: run.settings.labels.followUp });
    if (nudge) run.logDecision({ kind: 'timer', source: 'system', detail: `nudge ${nudge} deleted: the answer came` });
    delete run.record.nudgeDraftId;
  }
  run.transition('pending');
}

/** No answer in time: Follow Up label, the user told, and a nudge drafted when the account allows it. */
export async function followUp(run: ThreadRun, event: WakeEvent): Promise<void> {
  const wake = run.takeWake(event.actionId);
  if (!wake) return;
  // The answer may be in Gmail before its event reached the thread: look first.
  const thread = await run.gmail.readThread(run.ids);
  const last = thread?.messages.at(-1);
  if (!thread || !last?.fromUser) return settleWake(run, wake, 'undone', 'the answer came');
  await run.gmail.changeLabels({ ...run.ids, labels: run.settings.labels, add: ['followUp'], remove: [] });
  const notified = await notifyTimer(run, wake.actionId);
  await settleWake(run, wake, 'done', `no answer to ${wake.note ?? last.messageId}: labelled ${run.settings.labels.followUp}${notified}`);
  if (await run.store.followUpNudgeAllowed({ accountId: run.accountId })) await draftNudge(run, thread, last);
}

/** A nudge in the thread, as a draft with the Follow Up label; nothing sends it but the user. */
async function draftNudge(run: ThreadRun, thread: ThreadContent, last: PromptMessage): Promise<void> {
  const nudge = await writeReplyText(run, thread, last.sender, [NUDGE_INSTRUCTION]);
  if (!nudge) return;
  const ref = await run.gmail.placeDraft({ ...run.ids, body: nudge.body, replyTo: last, labels: run.settings.labels, add: ['followUp'], remove: [] });
  run.record.nudgeDraftId = ref.draftId;
  run.journalLifecycle({
    key: actionKey({ ...run.ids, messageId: last.messageId }, { kind: 'draft', argument: 'nudge' }),
    kind: 'draft',
    argument: 'nudge',
    messageId: last.messageId,
    sender: '',
    reason: { source: 'system', why: 'follow-up: no answer yet' },
    result: { draftId: ref.draftId },
  });
  run.logDecision({ kind: 'draft', source: 'llm', detail: `nudge ${ref.draftId}`, model: nudge.model, tokensIn: nudge.tokensIn, tokensOut: nudge.tokensOut });
}
