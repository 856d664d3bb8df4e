// The workflow bundle's entry: every workflow type the workers register.
export { retentionWorkflow } from './retention.js';
