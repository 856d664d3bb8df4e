// The three workers (workflow, gmail, llm) as separate OS processes, several of each, kept alive as
// a supervisor would: a process killed on purpose is started again at once, one that died on its
// own (a lost server, say) after a pause. Used by `npm run stack` and the chaos bench.
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
// @temporalio/proto is CommonJS without named-export hints: under ESM only its default export exists.
import proto from '@temporalio/proto';
import type { Env } from '../config/env.js';
import { spawnBoundToUs, type BoundChild } from '../shared/bound-child.js';
import { nodeEntryArgs } from '../shared/node-entry.js';

export type WorkerRole = 'workflow' | 'gmail' | 'llm';
export const WORKER_ROLES: readonly WorkerRole[] = ['workflow', 'gmail', 'llm'];

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** Each role's entry file (relative to the repository). */
export const WORKER_ENTRY: Record<WorkerRole, string> = {
  workflow: 'src/workers/workflow-worker.ts',
  gmail: 'src/workers/gmail-worker.ts',
  llm: 'src/workers/llm-worker.ts',
};
/** The task queue each role polls, from the configuration. */
export function workerTaskQueues(cfg: Pick<Env, 'TEMPORAL_TASK_QUEUE' | 'GMAIL_TASK_QUEUE' | 'LLM_TASK_QUEUE'>): Record<WorkerRole, string> {
  return { workflow: cfg.TEMPORAL_TASK_QUEUE, gmail: cfg.GMAIL_TASK_QUEUE, llm: cfg.LLM_TASK_QUEUE };
}
const DEFAULT_RESPAWN_DELAY_MS = 1_000;
/** Longer than the workers' own shutdownGraceTime, so in-flight activities can finish on SIGTERM. */
const STOP_GRACE_MS = 15_000;

export interface WorkerProcessesOptions {
  /** The workers' whole configuration (merged over this process's environment). */
  env: Record<string, string>;
  /** Processes per role (default 1). */
  perRole?: number | Partial<Record<WorkerRole, number>>;
  /** Each output line of a worker, tagged with its name (e.g. `gmail-2`). */
  output?: (name: string, line: string) => void;
  /** Pause before a worker that exited on its own is started again (default 1 s). */
  respawnDelayMs?: number;
  /**
   * Each process's metrics listeners: process n (0-based over all roles) serves ours on
   * `ours + 2n` and the Temporal SDK's on `sdk + 2n`, so processes on one host never contend for a
   * port. Absent: none (METRICS_PORT and TEMPORAL_METRICS_PORT 0).
   */
  metricsPorts?: { ours: number; sdk: number };
}

export interface WorkerCounts {
  /** SIGKILLs sent, per role. */
  kills: Record<WorkerRole, number>;
  /** Exits nobody asked for (each followed by a new process). */
  unexpectedExits: Record<WorkerRole, number>;
  spawned: number;
}

interface Slot {
  role: WorkerRole;
  index: number;
  child?: BoundChild;
}

export class WorkerProcesses {
  private readonly slots: Slot[] = [];
  private stopping = false;
  readonly counts: WorkerCounts = {
    kills: { workflow: 0, gmail: 0, llm: 0 },
    unexpectedExits: { workflow: 0, gmail: 0, llm: 0 },
    spawned: 0,
  };

  constructor(private readonly opts: WorkerProcessesOptions) {
    for (const role of WORKER_ROLES) {
      const n = typeof opts.perRole === 'number' ? opts.perRole : (opts.perRole?.[role] ?? 1);
      for (let index = 0; index < n; index++) this.slots.push({ role, index });
    }
  }

  /** Starts every process (returns at once; workers poll once connected). */
  startAll(): void {
    for (const slot of this.slots) this.spawn(slot);
  }

  /** How many processes each role has. */
  size(role: WorkerRole): number {
    return this.slots.filter((s) => s.role === role).length;
  }

  /** Process ids of a role's running processes. */
  pids(role?: WorkerRole): number[] {
    return this.slots
      .filter((s) => role === undefined || s.role === role)
      .flatMap((s) => (s.child && isRunning(s.child) && s.child.child.pid !== undefined ? [s.child.child.pid] : []));
  }

  private spawn(slot: Slot): void {
    const name = `${slot.role}-${slot.index + 1}`;
    const output = this.opts.output;
    const child = spawnBoundToUs(process.execPath, nodeEntryArgs(WORKER_ENTRY[slot.role]), {
      cwd: repoRoot,
      // Our parent read its configuration in dev mode unless told otherwise; its workers do the same.
      env: { DURABLE_INBOX_MODE: 'dev', ...process.env, ...this.opts.env, ...this.metricsEnv(slot) },
      log: output ? (line) => output(name, line) : undefined,
      stopGraceMs: STOP_GRACE_MS,
    });
    slot.child = child;
    this.counts.spawned++;
    void child.exited.then(() => {
      if (this.stopping || slot.child !== child) return;
      this.counts.unexpectedExits[slot.role]++;
      setTimeout(() => {
        if (!this.stopping && slot.child === child) this.spawn(slot);
      }, this.opts.respawnDelayMs ?? DEFAULT_RESPAWN_DELAY_MS);
    });
  }

  private metricsEnv(slot: Slot): Record<string, string> {
    const ports = this.opts.metricsPorts;
    const n = this.slots.indexOf(slot);
    return ports ? { METRICS_PORT: String(ports.ours + 2 * n), TEMPORAL_METRICS_PORT: String(ports.sdk + 2 * n) } : { METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0' };
  }

  /** Where each process's metrics are scraped (`name: ours, SDK`), when it has listeners. */
  metricsEndpoints(host: string): string[] {
    const ports = this.opts.metricsPorts;
    if (!ports) return [];
    return this.slots.map((s, n) => `${s.role}-${s.index + 1}: http://${host}:${ports.ours + 2 * n}/metrics, SDK http://${host}:${ports.sdk + 2 * n}/metrics`);
  }

  /**
   * Resolves once every running process polls its task queue (the server lists it among the queue's
   * pollers: the SDK's default identity is pid@host); workflow workers bundle the workflows first.
   */
  async untilPolling(client: Client, queues: Record<WorkerRole, string>, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const { TaskQueueType } = proto.temporal.api.enums.v1;
    for (const role of WORKER_ROLES) {
      for (;;) {
        const { pollers } = await client.workflowService.describeTaskQueue({
          namespace: client.options.namespace,
          taskQueue: { name: queues[role] },
          taskQueueType: role === 'workflow' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        });
        const polling = new Set((pollers ?? []).map((p) => Number(p.identity?.split('@')[0])));
        if (this.pids(role).every((pid) => polling.has(pid))) break;
        if (Date.now() > deadline) throw new Error(`${role} workers not all polling ${queues[role]} within ${timeoutMs} ms`);
        await sleep(500);
      }
    }
  }

  /** SIGKILL to one process of `role` (the `index`th, default the first), then a new one in its place. */
  async kill(role: WorkerRole, index = 0): Promise<void> {
    const slot = this.slots.find((s) => s.role === role && s.index === index);
    const child = slot?.child;
    if (!slot || !child) throw new Error(`no ${role} worker #${index + 1}`);
    slot.child = undefined;
    if (isRunning(child)) child.child.kill('SIGKILL');
    await child.exited;
    await child.stop(); // anything it forked goes too
    this.counts.kills[role]++;
    if (!this.stopping) this.spawn(slot);
  }

  /** SIGTERM to every process (a graceful worker shutdown), SIGKILL after a grace period. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.slots.map((s) => s.child?.stop()));
  }
}

function isRunning(child: BoundChild): boolean {
  return child.child.exitCode === null && child.child.signalCode === null;
}
