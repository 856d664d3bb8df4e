// Prebuilds the workflow bundles into dist/ (used by production workers): workflow-bundle.js, and
// workflow-bundle-traced.js for workers with OTEL_EXPORTER_OTLP_ENDPOINT set.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleWorkflows, prebuiltBundlePath, prebuiltTracedBundlePath, workflowsPath } from '../src/workers/workflow-bundle.js';

for (const [path, tracing] of [
  [prebuiltBundlePath, false],
  [prebuiltTracedBundlePath, true],
] as const) {
  const { code } = await bundleWorkflows(workflowsPath, { tracing });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, code);
  console.log(`wrote ${path} (${(code.length / 1024).toFixed(0)} KiB)`);
}
