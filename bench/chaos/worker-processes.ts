// The three workers (workflow, gmail, llm) as separate OS processes, kept alive: a process killed on
// purpose is started again at once, one that died on its own (a lost server, say) after a second.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { WorkerRole } from './timeline.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY: Record<WorkerRole, string> = {
  workflow: 'src/workers/workflow-worker.ts',
  gmail: 'src/workers/gmail-worker.ts',
  llm: 'src/workers/llm-worker.ts',
};
export const WORKER_ROLES: readonly WorkerRole[] = ['workflow', 'gmail', 'llm'];

export interface WorkerCounts {
  /** SIGKILLs sent, per worker. */
  kills: Record<WorkerRole, number>;
  /** Exits nobody asked for (each followed by a new process). */
  unexpectedExits: Record<WorkerRole, number>;
  spawned: number;
}

export class WorkerProcesses {
  private readonly children = new Map<WorkerRole, ChildProcess>();
  private readonly logFd: number;
  private stopping = false;
  readonly counts: WorkerCounts = {
    kills: { workflow: 0, gmail: 0, llm: 0 },
    unexpectedExits: { workflow: 0, gmail: 0, llm: 0 },
    spawned: 0,
  };

  /** `env`: the workers' whole configuration; their output goes to `logFile`. */
  constructor(
    private readonly env: Record<string, string>,
    logFile: string,
  ) {
    this.logFd = openSync(logFile, 'a');
  }

  startAll(): void {
    for (const role of WORKER_ROLES) this.spawn(role);
  }

  private spawn(role: WorkerRole): void {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY[role]], {
      cwd: repoRoot,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', this.logFd, this.logFd],
    });
    this.counts.spawned++;
    this.children.set(role, child);
    child.once('exit', () => {
      if (this.stopping || this.children.get(role) !== child) return;
      this.counts.unexpectedExits[role]++;
      setTimeout(() => {
        if (!this.stopping && this.children.get(role) === child) this.spawn(role);
      }, 1000);
    });
  }

  /** SIGKILL, then a new process in its place (as a supervisor would). */
  async kill(role: WorkerRole): Promise<void> {
    const child = this.children.get(role);
    if (!child) return;
    this.children.delete(role);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    this.counts.kills[role]++;
    if (!this.stopping) this.spawn(role);
  }

  async stopAll(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.children.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    this.children.clear();
    closeSync(this.logFd);
  }
}
