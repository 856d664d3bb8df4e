// The floor (issue 34): bare Temporal workflows of the thread's shape (bench/floor/workflows.ts) on
// the server a case already runs, with their own worker in this process, their own bundle and task
// queue, the default data converter (no codec) and activities that do no I/O. What it costs is what
// any Temporal workflow of that shape costs here; the cases divide their own figures by it.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { sleep } from '../bench-kit.js';
import { CPU_GROUPS, cpuSnapshot, cpuSpent, type CpuGroup } from '../proc-cpu.js';
import { createFloorActivities } from './activities.js';
import type { floorThreadWorkflow, floorTimerWorkflow } from './workflows.js';

const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));

export interface FloorRun {
  /** Runs (thread floor) or wake-ups (timer floor) measured. */
  units: number;
  cpu: Record<CpuGroup, number>;
  elapsedMs: number;
  eventsPerRun: number;
}

/** Worker options the case's own workflow worker runs with, so the floor's cache matches (default: the SDK's). */
export type FloorWorkerOptions = Pick<WorkerOptions, 'maxCachedWorkflows' | 'stickyQueueScheduleToStartTimeout'>;

let bundle: Promise<{ code: string }> | undefined;

async function startFloor(address: string, workerOptions: FloorWorkerOptions) {
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') }).then(({ code }) => ({ code }));
  const taskQueue = `floor-${randomUUID().slice(0, 8)}`;
  let done = 0;
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await bundle,
    activities: createFloorActivities(() => (done += 1)),
    ...workerOptions,
  });
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address }) });
  const eventsPerRun = async (ids: string[]) => {
    let events = 0;
    for (const id of ids) events += (await client.workflow.getHandle(id).fetchHistory()).events?.length ?? 0;
    return events / Math.max(1, ids.length);
  };
  return {
    taskQueue,
    client,
    done: () => done,
    eventsPerRun,
    async stop() {
      worker.shutdown();
      await running;
      await client.connection.close();
      await connection.close();
    },
  };
}

/** `count` bare thread-shaped runs, `width` signal-with-starts at a time (as the pipeline ingests); CPU from the first start to the last completion. */
export async function runThreadFloor(address: string, count: number, opts: { width?: number; workerOptions?: FloorWorkerOptions } = {}): Promise<FloorRun> {
  const floor = await startFloor(address, opts.workerOptions ?? {});
  const payload = 'p'.repeat(1024);
  const ids = Array.from({ length: count }, (_, i) => `${floor.taskQueue}-thread-${i}`);
  const completed = () => floor.client.workflow.count(`TaskQueue = "${floor.taskQueue}" AND ExecutionStatus = "Completed"`).then((c) => c.count);
  const cpuBefore = cpuSnapshot();
  const start = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.width ?? 32 }, async () => {
      while (next < count) {
        const workflowId = ids[next++]!;
        await floor.client.workflow.signalWithStart<typeof floorThreadWorkflow, [string]>('floorThreadWorkflow', {
          workflowId,
          taskQueue: floor.taskQueue,
          args: [],
          signal: 'floorMessage',
          signalArgs: [payload],
        });
      }
    }),
  );
  const deadline = Date.now() + 10 * 60_000;
  while ((await completed()) < count) {
    if (Date.now() > deadline) throw new Error(`floor: ${count} bare runs did not complete within 10 min`);
    await sleep(250);
  }
  const cpu = cpuSpent(cpuBefore, cpuSnapshot());
  const elapsedMs = Date.now() - start;
  const eventsPerRun = await floor.eventsPerRun(ids.slice(0, 20));
  await floor.stop();
  return { units: count, cpu, elapsedMs, eventsPerRun };
}

/**
 * `count` bare workflows asleep until one instant, then each runs one activity and two local
 * activities and waits again; CPU from just before the instant to the last wake-up's end. `waiting`
 * more sleep until tomorrow beside them (the case's other waiting threads, for the cache).
 */
export async function runTimerFloor(address: string, count: number, opts: { waiting?: number; workerOptions?: FloorWorkerOptions } = {}): Promise<FloorRun> {
  const floor = await startFloor(address, opts.workerOptions ?? {});
  const ids = Array.from({ length: count + (opts.waiting ?? 0) }, (_, i) => `${floor.taskQueue}-timer-${i}`);
  const startAll = async (from: number, to: number, at: number) => {
    let next = from;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < to) {
          const workflowId = ids[next++]!;
          await floor.client.workflow.start<typeof floorTimerWorkflow>('floorTimerWorkflow', { workflowId, taskQueue: floor.taskQueue, args: [at] });
        }
      }),
    );
  };
  await startAll(count, ids.length, Date.now() + 24 * 3600_000);
  const dueAt = Date.now() + 10_000 + count * 10;
  await startAll(0, count, dueAt);
  if (Date.now() > dueAt - 1000) console.warn('floor: starting the timers took past the due instant; the figure includes starts');
  else await sleep(dueAt - 1000 - Date.now());
  const cpuBefore = cpuSnapshot();
  const deadline = Date.now() + 10 * 60_000;
  while (floor.done() < count) {
    if (Date.now() > deadline) throw new Error(`floor: ${count} bare wake-ups did not finish within 10 min`);
    await sleep(100);
  }
  const cpu = cpuSpent(cpuBefore, cpuSnapshot());
  const elapsedMs = Date.now() - dueAt;
  const eventsPerRun = await floor.eventsPerRun(ids.slice(0, 20));
  for (const id of ids) await floor.client.workflow.getHandle(id).terminate('floor done').catch(() => undefined);
  await floor.stop();
  return { units: count, cpu, elapsedMs, eventsPerRun };
}

const total = (cpu: Record<CpuGroup, number>) => CPU_GROUPS.reduce((sum, g) => sum + cpu[g], 0);

/** `<label> floor CPU ms/<unit>: total T (workers W, Temporal server S, PostgreSQL P)` and what a floor run is. */
export function floorLine(label: string, unit: string, floor: FloorRun): string {
  const per = (ms: number) => (ms / Math.max(1, floor.units)).toFixed(1);
  return (
    `${label} floor CPU ms/${unit}: ${per(total(floor.cpu))} (workers ${per(floor.cpu.workers)}, Temporal server ${per(floor.cpu.temporal)}, PostgreSQL ${per(floor.cpu.postgres)}); ` +
    `${floor.units} bare runs, ${floor.eventsPerRun.toFixed(1)} events/run, ${Math.round((floor.units / floor.elapsedMs) * 60_000)}/min`
  );
}

/** `<label> ÷ floor (same run): total R×, workers R×, Temporal server R×`. */
export function ratioLine(label: string, ours: { cpu: Record<CpuGroup, number>; units: number }, floor: FloorRun): string {
  const ratio = (a: number, b: number) => `${(a / ours.units / (b / floor.units)).toFixed(2)}×`;
  return `${label} ÷ floor (same server, same run): CPU ${ratio(total(ours.cpu), total(floor.cpu))}, workers ${ratio(ours.cpu.workers, floor.cpu.workers)}, Temporal server ${ratio(ours.cpu.temporal, floor.cpu.temporal)}`;
}
