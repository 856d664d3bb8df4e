// Workflows started by the sync Schedules (src/schedules/schedules.ts): each is one activity, so
// the Schedule's run history shows what every tick did.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SyncFanoutActivities } from './contracts.js';

/** The fan-outs run on the workflow's own queue, where the workflow worker registers them with the sync's activities. */
function fanout(): SyncFanoutActivities {
  return proxyActivities<SyncFanoutActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
  });
}

/** Fallback poll (every 15 min) or full inbox scan (hourly): pokes the sync workflow of every active account. */
export async function syncAllAccountsWorkflow(input: { kind: 'poll' | 'full_scan'; days?: number }): Promise<{ accounts: number }> {
  return fanout().notifyActiveAccounts(input);
}

/** Daily: users.watch for every active account before its watch expires. */
export async function watchRenewalWorkflow(input: { renewWithinMs: number }): Promise<{ renewed: number; failed: number; skipped: number }> {
  return fanout().renewWatches(input);
}
