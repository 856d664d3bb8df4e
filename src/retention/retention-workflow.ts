// Retention: the daily clean-up that old cron loops forgot to run. A Schedule starts it;
// operators can also trigger it (`temporal schedule trigger --schedule-id retention`).
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { RetentionActivities } from './contracts.js';

const { pruneBatchRequests, pruneClosedThreads, pruneDecisionLog, purgeCorrections, purgeWritingEvidence } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumAttempts: 10 },
});

export interface RetentionInput {
  /** Closed threads and decision-log entries older than this are deleted. */
  retentionDays: number;
  /** Writing evidence (our drafts beside what was sent) older than this is deleted; lessons keep their provenance. */
  evidenceDays?: number;
  /** Corrections of triage (learning_corrections) older than this are deleted; lessons keep their provenance. */
  correctionsDays?: number;
  /**
   * The request rows (prompts, verdicts) of Message Batches created longer ago than this are deleted: a
   * batch ends within 24 h and its hand-over follows at once, deleting them; older ones are left by a
   * backfill that stopped before its hand-over.
   */
  batchRequestsDays?: number;
}

export interface RetentionResult {
  cutoff: string;
  threadsDeleted: number;
  decisionsDeleted: number;
  evidenceDeleted?: number;
  correctionsDeleted?: number;
  batchRequestsDeleted?: number;
}

export async function retentionWorkflow({ retentionDays, evidenceDays, correctionsDays, batchRequestsDays }: RetentionInput): Promise<RetentionResult> {
  // Workflow time is deterministic: the cutoff is fixed at the moment the run started.
  const before = (days: number) => new Date(workflowInfo().runStartTime.getTime() - days * 24 * 3600 * 1000).toISOString();
  const cutoff = before(retentionDays);
  const decisionsDeleted = await pruneDecisionLog({ before: cutoff });
  const threadsDeleted = await pruneClosedThreads({ closedBefore: cutoff });
  // Runs started before these inputs existed never pass them: their histories replay unchanged.
  const evidenceDeleted = evidenceDays === undefined ? undefined : await purgeWritingEvidence({ before: before(evidenceDays) });
  const correctionsDeleted = correctionsDays === undefined ? undefined : await purgeCorrections({ before: before(correctionsDays) });
  const batchRequestsDeleted = batchRequestsDays === undefined ? undefined : await pruneBatchRequests({ createdBefore: before(batchRequestsDays) });
  return {
    cutoff,
    threadsDeleted,
    decisionsDeleted,
    ...(evidenceDeleted === undefined ? {} : { evidenceDeleted }),
    ...(correctionsDeleted === undefined ? {} : { correctionsDeleted }),
    ...(batchRequestsDeleted === undefined ? {} : { batchRequestsDeleted }),
  };
}
