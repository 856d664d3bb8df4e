// Retention: the daily clean-up that old cron loops forgot to run. A Schedule starts it;
// operators can also trigger it (`temporal schedule trigger --schedule-id retention`).
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { RetentionActivities } from './retention-activities.js';

const { pruneClosedThreads, pruneDecisionLog } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumAttempts: 10 },
});

export interface RetentionInput {
  /** Closed threads and decision-log entries older than this are deleted. */
  retentionDays: number;
}

export interface RetentionResult {
  cutoff: string;
  threadsDeleted: number;
  decisionsDeleted: number;
}

export async function retentionWorkflow({ retentionDays }: RetentionInput): Promise<RetentionResult> {
  // Workflow time is deterministic: the cutoff is fixed at the moment the run started.
  const cutoff = new Date(workflowInfo().runStartTime.getTime() - retentionDays * 24 * 3600 * 1000).toISOString();
  const decisionsDeleted = await pruneDecisionLog({ before: cutoff });
  const threadsDeleted = await pruneClosedThreads({ closedBefore: cutoff });
  return { cutoff, threadsDeleted, decisionsDeleted };
}
