export { backfillWorkflow } from './backfill-workflow.js';
export { backfillSliceWorkflow } from './slice-workflow.js';
export { archiverWorkflow } from './archiver-workflow.js';
export { backfillProgressQuery, sliceDoneSignal } from './types.js';
