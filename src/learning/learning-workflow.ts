// The learning Schedule's workflow (LEARNING_EVERY, default hourly; docs/learning.md): for each
// account with writing evidence no derivation has read, one LLM activity proposes the writing
// lessons it teaches. A paused LLM or a spent budget skips the account this tick: its evidence stays
// unread and the next tick tries again. Proposals wait for the user, except a tone or sign-off
// lesson the account lets take hold alone (the LLM activity accepts it); the ones that wait are
// announced on Discord (behind the `writing-lessons-announced` patch), once per lesson. Then (behind
// the `weekly-email` patch) each account with lessons gets the week's "what I learned" e-mail, which
// the Gmail activity inserts once per ISO week however many ticks ask.
import { ApplicationFailure, isCancellation, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { LearningActivities, LearningLlmActivities, LearningWorkflowInput, LearningWorkflowResult, LessonNotifyActivities, WeeklyEmailActivities } from './activity-contracts.js';

function failureReason(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof ApplicationFailure ? err.cause : undefined;
  return cause ? `${cause.type ?? 'error'}: ${cause.message}` : String(err);
}

export async function learningWorkflow(input: LearningWorkflowInput): Promise<LearningWorkflowResult> {
  const store = proxyActivities<LearningActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const llm = proxyActivities<LearningLlmActivities>({
    taskQueue: input.llmTaskQueue,
    startToCloseTimeout: '3 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
  });
  const only = input.accountIds ? { accountIds: input.accountIds } : {};
  const accounts = await store.accountsWithNewEvidence(only);
  const result: LearningWorkflowResult = { accounts: accounts.length, proposed: [], skipped: [] };
  for (const accountId of accounts) {
    try {
      const out = await llm.proposeWritingLessons({ accountId });
      result.proposed.push(...out.changed);
      if (input.gmailTaskQueue && (out.waiting ?? []).length > 0 && patched('writing-lessons-announced')) {
        await announce(input.gmailTaskQueue, accountId, out.waiting ?? [], result);
      }
    } catch (err) {
      if (isCancellation(err)) throw err;
      result.skipped.push({ accountId, reason: failureReason(err) });
    }
  }
  if (input.gmailTaskQueue && patched('weekly-email')) {
    const gmail = proxyActivities<WeeklyEmailActivities>({
      taskQueue: input.gmailTaskQueue,
      startToCloseTimeout: '1 minute',
      retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
    });
    result.weekly = [];
    for (const accountId of await store.accountsWithLessons(only)) {
      try {
        result.weekly.push(await gmail.deliverWeeklyReport({ accountId }));
      } catch (err) {
        if (isCancellation(err)) throw err;
        result.skipped.push({ accountId, reason: `weekly e-mail: ${failureReason(err)}` });
      }
    }
  }
  return result;
}

/** Tells the user (Discord) about each lesson that waits; one that cannot be told still waits in the CLI and on the page. */
async function announce(gmailTaskQueue: string, accountId: string, lessonIds: string[], result: LearningWorkflowResult): Promise<void> {
  const notify = proxyActivities<LessonNotifyActivities>({
    taskQueue: gmailTaskQueue,
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 8 },
  });
  result.announced ??= [];
  for (const lessonId of lessonIds) {
    try {
      if ((await notify.notifyLessonProposed({ lessonId })).notified) result.announced.push(lessonId);
    } catch (err) {
      if (isCancellation(err)) throw err;
      result.skipped.push({ accountId, reason: `lesson ${lessonId} not announced: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
}
