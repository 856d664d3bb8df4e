// A worker as its own OS process (src/workers/<name>.ts), configured as a harness's workers are:
// for the crash tests, which SIGKILL it where they need it dead and start a new one.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { nodeEntryArgs } from '../../src/shared/node-entry.js';
import type { InboxHarness } from './inbox-harness.js';

export type WorkerName = 'workflow-worker' | 'gmail-worker' | 'llm-worker';

export function spawnWorker(h: Pick<InboxHarness, 'env'>, name: WorkerName): ChildProcess {
  // No metrics endpoints: several workers of several test files share the host.
  const env = { ...process.env, ...h.env, METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0' };
  return spawn(process.execPath, nodeEntryArgs(`src/workers/${name}.ts`), { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** SIGKILL: the process dies where it is, nothing shut down or flushed. Resolves once it is gone. */
export async function killWorker(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = once(worker, 'exit');
  worker.kill('SIGKILL');
  await exited;
}
