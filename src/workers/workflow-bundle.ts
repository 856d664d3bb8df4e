// The workflow bundle, built once. Production images prebuild it (`npm run build:workflows`
// writes dist/workflow-bundle.js); otherwise the first worker in the process bundles it and
// every other worker of the process reuses that bundle.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle, type WorkflowBundleOption } from '@temporalio/worker';
import { failureConverterPath } from '../temporal/data-converter.js';

export const workflowsPath = fileURLToPath(new URL('../workflows.ts', import.meta.url));
export const prebuiltBundlePath = fileURLToPath(new URL('../../dist/workflow-bundle.js', import.meta.url));

/**
 * Bundles workflow code (ours, or a test's) the way every worker runs it: with the failure converter
 * the clients and activities use, so a workflow's own failures are sealed like theirs.
 */
export function bundleWorkflows(entry: string): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: entry, failureConverterPath, logger: new DefaultLogger('WARN') });
}

let bundle: Promise<WorkflowBundleOption> | undefined;

export function getWorkflowBundle(): Promise<WorkflowBundleOption> {
  bundle ??= existsSync(prebuiltBundlePath)
    ? Promise.resolve({ codePath: prebuiltBundlePath })
    : bundleWorkflows(workflowsPath).then(({ code }) => ({ code }));
  return bundle;
}
