// The lint rule for workflow code (no Node built-ins, no activity implementations) covers the files
// scripts/workflow-bundle-files.js derives from the bundle's entry. This checks that derivation
// against the bundle webpack actually builds, so no bundled file escapes the rule.
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundleFiles, workflowEntry } from '../../scripts/workflow-bundle-files.js';

describe('workflow bundle files', () => {
  it('are exactly the source files webpack puts in the workflow bundle', async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: workflowEntry, logger: new DefaultLogger('WARN') });
    const bundled = new Set([...code.matchAll(/"\.\/(src\/[^"]+\.ts)"/g)].map((m) => m[1]!));
    expect(bundled.size).toBeGreaterThan(5);
    expect(workflowBundleFiles()).toEqual([...bundled].sort());
  });
});
