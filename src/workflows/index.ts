// The workflow bundle's entry: every workflow type the workers register.
export { retentionWorkflow } from './retention.js';
export { backfillWorkflow, backfillSliceWorkflow, archiverWorkflow } from './backfill/index.js';
export { syncWorkflow } from './sync/sync-workflow.js';
export { syncAllAccountsWorkflow, watchRenewalWorkflow } from './sync/scheduled.js';
export { threadWorkflow } from './thread/thread-workflow.js';
export {
  newMessageSignal,
  labelsChangedSignal,
  draftGoneSignal,
  sentSeenSignal,
  accountReconnectedSignal,
  threadStatusQuery,
} from './thread/signals.js';
