// The workflow bundles of a test run, built once: ours, and ours with the tracing interceptors, into a
// directory of the run's own. WORKFLOW_BUNDLE_DIR names it to every test process and the worker
// processes they start (src/workers/workflow-bundle.ts), so no worker bundles the workflow code again,
// and no bundle left in dist/ by `npm run build:workflows` stands in for the code under test.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { bundleWorkflows, prebuiltBundlePath, prebuiltTracedBundlePath, workflowsPath } from '../../src/workers/workflow-bundle.js';

export async function buildTestWorkflowBundles(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'durable-inbox-test-bundles-'));
  await Promise.all(
    ([
      [prebuiltBundlePath, false],
      [prebuiltTracedBundlePath, true],
    ] as const).map(async ([path, tracing]) => {
      const { code } = await bundleWorkflows(workflowsPath, { tracing });
      await writeFile(join(dir, basename(path)), code);
    }),
  );
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
