// Prebuilds the workflow bundle into dist/workflow-bundle.js (used by production workers).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleWorkflows, prebuiltBundlePath, workflowsPath } from '../src/workers/workflow-bundle.js';

const { code } = await bundleWorkflows(workflowsPath);
mkdirSync(dirname(prebuiltBundlePath), { recursive: true });
writeFileSync(prebuiltBundlePath, code);
console.log(`wrote ${prebuiltBundlePath} (${(code.length / 1024).toFixed(0)} KiB)`);
