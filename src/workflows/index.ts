// The workflow bundle's entry (src/workers/workflow-bundle.ts): every workflow type the workflow worker
// registers, and the signals and queries clients address them with. Each lives in its feature folder.
export { retentionWorkflow } from '../retention/retention-workflow.js';
export { backfillWorkflow } from '../backfill/backfill-workflow.js';
export { backfillSliceWorkflow } from '../backfill/slice-workflow.js';
export { archiverWorkflow } from '../backfill/archiver-workflow.js';
export { syncWorkflow } from '../sync/sync-workflow.js';
export { syncAllAccountsWorkflow, watchRenewalWorkflow } from '../sync/scheduled-workflows.js';
export { threadWorkflow } from '../thread/thread-workflow.js';
export { undoActionWorkflow } from '../actions/undo-workflow.js';
export { reminderWorkflow, reminderChangedSignal } from '../reminders/reminder-workflow.js';
export { scheduledAgentWorkflow } from '../schedules/scheduled-agent-workflow.js';
export { learningWorkflow } from '../learning/learning-workflow.js';
export { unsubscribeWorkflow, unsubscribeStatusQuery } from '../cleanup/unsubscribe-workflow.js';
export { bulkWorkflow, bulkProgressQuery } from '../cleanup/bulk-workflow.js';
export {
  newMessageSignal,
  labelsChangedSignal,
  draftGoneSignal,
  sentSeenSignal,
  actionDecisionSignal,
  threadStatusQuery,
} from '../thread/signals.js';
export { accountReconnectedSignal } from '../accounts/account-access.js';
