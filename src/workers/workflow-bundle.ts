// The workflow bundle, built once. Production images prebuild it (`npm run build:workflows`
// writes dist/workflow-bundle.js, and dist/workflow-bundle-traced.js with the tracing interceptors);
// otherwise the first worker in the process bundles it and every other worker of the process reuses it.
// WORKFLOW_BUNDLE_DIR names another directory of prebuilt bundles: `npm test` builds them once per
// run (test/setup/workflow-bundles.ts) for its workers and the worker processes they start.
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle, type WorkflowBundleOption } from '@temporalio/worker';
import { failureConverterPath } from '../temporal/data-converter.js';
import { tracingEnabled, workflowTracingModule } from '../temporal/tracing.js';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
export const prebuiltBundlePath = fileURLToPath(new URL('../../dist/workflow-bundle.js', import.meta.url));
export const prebuiltTracedBundlePath = fileURLToPath(new URL('../../dist/workflow-bundle-traced.js', import.meta.url));

/**
 * Bundles workflow code (ours, or a test's) the way every worker runs it: with the failure converter
 * the clients and activities use, so a workflow's own failures are sealed like theirs; with `tracing`,
 * the OpenTelemetry workflow interceptors too (spans per workflow and per scheduled activity, their
 * context in the headers). They change no command, so histories replay with either bundle.
 */
export function bundleWorkflows(entry: string, opts: { tracing?: boolean } = {}): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: entry,
    failureConverterPath,
    ...(opts.tracing ? { workflowInterceptorModules: [workflowTracingModule] } : {}),
    logger: new DefaultLogger('WARN'),
  });
}

const bundles = new Map<boolean, Promise<WorkflowBundleOption>>();

/** Ours, traced when tracing is on in this process. */
export function getWorkflowBundle(): Promise<WorkflowBundleOption> {
  const tracing = tracingEnabled();
  let bundle = bundles.get(tracing);
  if (!bundle) {
    const path = tracing ? prebuiltTracedBundlePath : prebuiltBundlePath;
    const dir = process.env['WORKFLOW_BUNDLE_DIR'];
    const prebuilt = dir ? join(dir, basename(path)) : path;
    bundle = existsSync(prebuilt)
      ? Promise.resolve({ codePath: prebuilt })
      : bundleWorkflows(workflowsPath, { tracing }).then(({ code }) => ({ code }));
    bundles.set(tracing, bundle);
  }
  return bundle;
}
