// The archiver: takes backfilled mail out of the inbox, never ahead of the backfill. For each
// account it pages through messages that are stored in Postgres, still in INBOX and strictly
// before the account's watermark (re-read for every batch), and removes INBOX with one
// batchModify per ≤ 1000 ids (or moves them to Trash when configured). A dry run changes nothing
// and returns what it would do. Run by the `archiver` Schedule and on demand.
import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { ACCOUNT_UNUSABLE_TYPES } from '../accounts/account-access.js';
import type { BackfillMailActivities, BackfillStoreActivities } from './activity-contracts.js';
import { GMAIL_TASK_QUEUE, WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { ARCHIVER_DEFAULTS, type ArchiverAccountResult, type ArchiverInput, type ArchiverResult } from './contracts.js';

export async function archiverWorkflow(input: ArchiverInput = {}): Promise<ArchiverResult> {
  const gmail = proxyActivities<BackfillMailActivities>({
    taskQueue: input.taskQueues?.gmail ?? GMAIL_TASK_QUEUE,
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10, nonRetryableErrorTypes: ACCOUNT_UNUSABLE_TYPES },
  });
  const store = proxyActivities<BackfillStoreActivities>({
    taskQueue: input.taskQueues?.workflows ?? WORKFLOW_TASK_QUEUE,
    startToCloseTimeout: '1 minute',
  });
  const dryRun = input.dryRun ?? ARCHIVER_DEFAULTS.dryRun;
  const trash = input.trash ?? ARCHIVER_DEFAULTS.trash;
  const batchSize = Math.min(ARCHIVER_DEFAULTS.maxBatchSize, Math.max(1, input.batchSize ?? ARCHIVER_DEFAULTS.batchSize));
  const listLimit = input.listLimit ?? ARCHIVER_DEFAULTS.listLimit;
  const accountIds = input.accountIds ?? (await store.archiverAccounts());

  const results: ArchiverAccountResult[] = [...(input.carried?.results ?? [])];
  let afterId = input.carried?.afterId ?? '';
  for (let i = input.carried?.accountIndex ?? 0; i < accountIds.length; i++) {
    const accountId = accountIds[i]!;
    let result = results.find((r) => r.accountId === accountId);
    if (!result) {
      result = { accountId, archived: 0, watermark: null, ...(dryRun ? { wouldArchive: [] } : {}) };
      results.push(result);
    }
    for (;;) {
      const batch = await gmail.archiveBatch({ accountId, afterId, limit: batchSize, dryRun, trash });
      result.watermark = batch.watermark;
      result.archived += batch.ids.length;
      if (dryRun && result.wouldArchive && result.wouldArchive.length < listLimit) {
        result.wouldArchive.push(...batch.ids.slice(0, listLimit - result.wouldArchive.length));
      }
      if (batch.ids.length < batchSize) break;
      afterId = batch.ids[batch.ids.length - 1]!;
      if (workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof archiverWorkflow>({ ...input, accountIds, carried: { accountIndex: i, afterId, results } });
      }
    }
    afterId = '';
  }
  return { dryRun, trash, accounts: results };
}
