// The workflow bundle's entry: every workflow type the workers register.
export { retentionWorkflow } from './retention/retention-workflow.js';
export { backfillWorkflow } from './backfill/backfill-workflow.js';
export { backfillSliceWorkflow } from './backfill/slice-workflow.js';
export { archiverWorkflow } from './backfill/archiver-workflow.js';
export { syncWorkflow } from './sync/sync-workflow.js';
export { syncAllAccountsWorkflow, watchRenewalWorkflow } from './sync/scheduled-workflows.js';
export { threadWorkflow } from './thread/thread-workflow.js';
export { undoActionWorkflow } from './actions/undo-workflow.js';
export {
  newMessageSignal,
  labelsChangedSignal,
  draftGoneSignal,
  sentSeenSignal,
  actionDecisionSignal,
  threadStatusQuery,
} from './thread/signals.js';
export { accountReconnectedSignal } from './accounts/account-access.js';
