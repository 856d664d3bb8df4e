// The workflow bundle, built once. Production images prebuild it (`npm run build:workflows`
// writes dist/workflow-bundle.js); otherwise the first worker in the process bundles it and
// every other worker of the process reuses that bundle.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleOption } from '@temporalio/worker';

export const workflowsPath = fileURLToPath(new URL('../workflows.ts', import.meta.url));
export const prebuiltBundlePath = fileURLToPath(new URL('../../dist/workflow-bundle.js', import.meta.url));

let bundle: Promise<WorkflowBundleOption> | undefined;

export function getWorkflowBundle(): Promise<WorkflowBundleOption> {
  bundle ??= existsSync(prebuiltBundlePath)
    ? Promise.resolve({ codePath: prebuiltBundlePath })
    : bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') }).then(({ code }) => ({ code }));
  return bundle;
}
