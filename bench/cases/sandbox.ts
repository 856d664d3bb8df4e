// What a new workflow run costs the workflow worker before its first activation, per bundle: the
// SDK's reusable V8 context evaluates the bundle's modules again for every run it creates (a new
// run, a continue-as-new, a replay after eviction); only the SDK's own entry modules are shared.
// Each bundle is loaded into the SDK's ReusableVMWorkflowCreator (as a Worker does) and N runs are
// created and disposed one after another, on this process's CPU clock; then N runs are kept to read
// the heap each one holds before any activation. No server: this isolates the sandbox's share of
// the figures of `pipeline` and `timers`.
//   --runs N (300)
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { wholeFlag } from '../args.js';
import { bundleWorkflows, workflowsPath } from '../../src/workers/workflow-bundle.js';

interface Creator {
  createWorkflow(options: unknown): Promise<{ dispose(): Promise<void> }>;
  destroy(): Promise<void>;
}
const require = createRequire(import.meta.url);
const { ReusableVMWorkflowCreator } = require('@temporalio/worker/lib/workflow/reusable-vm.js') as {
  ReusableVMWorkflowCreator: { create(bundle: { code: string; filename: string; sourceMap: unknown }, timeoutMs: number, activities: Set<string>, patch: undefined): Promise<Creator> };
};

function createOptions(workflowType: string, i: number) {
  const runId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const now = Date.now();
  return {
    info: {
      workflowId: `sandbox-${i}`,
      runId,
      workflowType,
      searchAttributes: {},
      typedSearchAttributes: undefined,
      taskQueue: 'sandbox',
      namespace: 'default',
      firstExecutionRunId: runId,
      originalExecutionRunId: runId,
      startTime: new Date(now),
      runStartTime: new Date(now),
      taskTimeoutMs: 10_000,
      attempt: 1,
      historyLength: 3,
      historySize: 0,
      continueAsNewSuggested: false,
      targetWorkerDeploymentVersionChanged: false,
      suggestedContinueAsNewReasons: [],
      currentBuildId: '',
      unsafe: { now: () => Date.now(), isReplaying: false, isReplayingHistoryEvents: false, random: Math.random },
      priority: {},
    },
    randomnessSeed: [1, 2, 3, 4, 5, 6, 7, i & 0xff],
    now,
    showStackTraceSources: false,
    failureExceptionTypeNames: [],
  };
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function measure(label: string, code: string, workflowType: string, runs: number): Promise<void> {
  // As the Worker loads a bundle: the code without its inline source map, the map beside it.
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const sourceMap = JSON.parse(Buffer.from(code.slice(code.indexOf('base64,', at) + 7).trimEnd(), 'base64').toString()) as unknown;
  const creator = await ReusableVMWorkflowCreator.create({ code: code.slice(0, at), filename: `/${label.replace(' ', '-')}.js`, sourceMap }, 5000, new Set(), undefined);
  for (let i = 0; i < 20; i++) await (await creator.createWorkflow(createOptions(workflowType, i))).dispose();
  const before = cpuMs();
  for (let i = 0; i < runs; i++) await (await creator.createWorkflow(createOptions(workflowType, 1000 + i))).dispose();
  const perRun = (cpuMs() - before) / runs;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heap0 = getHeapStatistics().used_heap_size;
  const kept = [];
  for (let i = 0; i < runs; i++) kept.push(await creator.createWorkflow(createOptions(workflowType, 100_000 + i)));
  gc?.();
  const heapPerRun = (getHeapStatistics().used_heap_size - heap0) / runs;
  for (const w of kept) await w.dispose();
  await creator.destroy();
  console.log(
    `sandbox ${label}: ${perRun.toFixed(2)} CPU ms per new run (its modules evaluated), ` +
      (gc ? `${(heapPerRun / 1024).toFixed(1)} KiB of heap per run before its first activation` : 'heap per run: run node with --expose-gc'),
  );
}

export async function run(args: string[]): Promise<void> {
  const runs = wholeFlag(args, 'runs', 300);
  const product = (await bundleWorkflows(workflowsPath)).code;
  const floor = (await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('../floor/workflows.ts', import.meta.url)), logger: new DefaultLogger('WARN') })).code;
  const modules = (code: string) => new Set([...code.matchAll(/^\/\*\*\*\/ "\.\/([^"]+)"/gm)].map((m) => m[1]!));
  for (const [label, code] of [['floor bundle', floor], ['our bundle', product]] as const) {
    const mods = modules(code);
    const zod = [...mods].filter((m) => m.includes('node_modules/zod/')).length;
    console.log(`sandbox ${label}: ${mods.size} modules (${zod} of zod), ${(code.length / 2 ** 20).toFixed(1)} MiB with its source map`);
  }
  await measure('floor bundle', floor, 'floorThreadWorkflow', runs);
  await measure('our bundle', product, 'threadWorkflow', runs);
}
