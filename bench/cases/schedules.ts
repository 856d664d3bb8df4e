// User schedules at scale (issue #26): S schedules over A accounts on a real Temporal dev server,
// D of them due in the same minute (the rest later in the day). Each due run is the product's whole
// run (claim, facts, the brief agent on the Anthropic emulator, delivery into the Gmail emulator).
// Prints each run's lateness (its start in Postgres against the Schedule's action time), runs per
// minute, and the bytes a schedule costs in PostgreSQL and in the dev server's SQLite.
//   --schedules S (1000)  --accounts A (200)  --due D (200)  --jitter SECONDS (0)  --llm-latency MS (300)
//   --stack [N]   the Temporal server on PostgreSQL and N worker processes of each kind (default 2);
//                 without it the dev server (SQLite in a file) and the workers in this process
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { wholeFlag } from '../args.js';
import { percentile, startBenchTemporal } from '../bench-kit.js';
import { startBenchWorld } from '../bench-world.js';
import { cpuSnapshot, cpuSpent, cpuPerEmailLine } from '../proc-cpu.js';
import { addUserSchedule } from '../../src/schedules/user-schedules.js';
import { WorkerProcesses, workerTaskQueues } from '../../src/stack/worker-processes.js';
import { startDevServer } from '../../src/temporal/dev-server.js';

const hhmm = (d: Date) => `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;

export async function run(args: string[]): Promise<void> {
  const total = wholeFlag(args, 'schedules', 1000);
  const accountsCount = wholeFlag(args, 'accounts', 200);
  const due = Math.min(total, wholeFlag(args, 'due', 200));
  const jitterIndex = args.indexOf('--jitter');
  const jitterMs = jitterIndex >= 0 ? Number(args[jitterIndex + 1]) * 1000 : 0;
  if (!Number.isInteger(jitterMs) || jitterMs < 0) throw new Error('--jitter expects whole seconds, 0 or more');
  const llmLatency = wholeFlag(args, 'llm-latency', 300);
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const stackAt = args.indexOf('--stack');
  const perRole = stackAt < 0 ? 0 : /^\d+$/.test(args[stackAt + 1] ?? '') ? Number(args[stackAt + 1]) : 2;
  const dir = await mkdtemp(join(tmpdir(), 'bench-schedules-'));
  const dbFile = join(dir, 'temporal.db');
  const world = await startBenchWorld({
    name: 'schedules',
    accounts: accountsCount,
    llmLatencyMs: llmLatency,
    temporal: async (databaseUrl) =>
      perRole
        ? startBenchTemporal(true, databaseUrl, { persistence: 8, visibility: 4 })
        : { ...(await startDevServer({ port: 0, headless: true, dbFile })), databases: [] as string[], what: 'the Temporal dev server (SQLite in a file)' },
    // PostgreSQL here has 100 connections shared with other work: the worker processes keep few.
    env: perRole ? { DATABASE_POOL_SIZE: '4' } : {},
    workers: perRole
      ? async ({ env, cfg, client }) => {
          const processes = new WorkerProcesses({ env, perRole, output: (name, line) => console.error(`[${name}] ${line}`) });
          processes.startAll();
          await processes.untilPolling(client, workerTaskQueues(cfg));
          return { stop: () => processes.stopAll() };
        }
      : undefined,
  });
  const { temporal, accounts, client, db } = world;
  console.log(`schedules on ${temporal.what}, ${perRole ? `${perRole} worker processes of each kind` : 'the workers in this process'}`);
  /** What the Temporal server keeps: the dev server's SQLite file, or the server's PostgreSQL databases. */
  const temporalBytes = async () => {
    if (temporal.databases.length === 0) return (await stat(dbFile)).size;
    let bytes = 0;
    for (const name of temporal.databases) bytes += Number((await db.query<{ n: string }>('SELECT pg_database_size($1)::text AS n', [name]))[0]!.n);
    return bytes;
  };
  const settings = { catchupWindowMs: 3600_000, jitterMs };

  // The schedules due later first; then, at the rate they were made, the due ones, for a minute far
  // enough ahead that all of them exist before it.
  const temporalBefore = await temporalBytes();
  const add = async (from: number, to: number, at: (i: number) => Date) => {
    let next = from;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < to) {
        const i = next++;
        await addUserSchedule(client, db, {
          accountId: accounts[i % accounts.length]!.id, name: `brief ${i}`, profile: 'brief', prompt: 'What needs me today?',
          timing: { at: hhmm(at(i)), days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] }, timeZone: 'UTC', label: 'Brief', discord: false,
        }, settings);
      }
    }));
  };
  const created = Date.now();
  const later = new Date(Math.ceil((Date.now() + 3 * 3600_000) / 60_000) * 60_000);
  await add(due, total, (i) => new Date(later.getTime() + (i % 300) * 60_000));
  const perSchedule = (Date.now() - created) / Math.max(1, total - due);
  const dueAt = new Date(Math.ceil((Date.now() + due * perSchedule * 1.5 + 20_000) / 60_000) * 60_000);
  await add(0, due, () => dueAt);
  console.log(`created ${total} schedules over ${accountsCount} accounts in ${((Date.now() - created) / 1000).toFixed(1)} s; ${due} due at ${dueAt.toISOString()} (jitter ${jitterMs / 1000} s)`);
  if (Date.now() > dueAt.getTime()) console.warn('warning: creating took past the due minute; the lateness includes it');

  const cpuBefore = cpuSnapshot();
  const deadline = dueAt.getTime() + jitterMs + 15 * 60_000;
  let rows: { scheduled_at: Date; started_at: Date; finished_at: Date | null; status: string }[] = [];
  while (Date.now() < deadline) {
    rows = await db.query(`SELECT scheduled_at, started_at, finished_at, status FROM schedule_runs`, []);
    if (rows.length >= due && rows.every((r) => r.finished_at)) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const spent = cpuSpent(cpuBefore, cpuSnapshot());
  const lateness = rows.map((r) => r.started_at.getTime() - r.scheduled_at.getTime()).sort((a, b) => a - b);
  const nominalLateness = rows.map((r) => r.started_at.getTime() - dueAt.getTime()).sort((a, b) => a - b);
  const firstStart = Math.min(...rows.map((r) => r.started_at.getTime()));
  const lastEnd = Math.max(...rows.map((r) => r.finished_at?.getTime() ?? 0));
  console.log(`runs: ${rows.length}/${due} finished (${rows.filter((r) => r.status === 'delivered').length} delivered)`);
  console.log(`lateness of the run's start after its action time: p50 ${percentile(lateness, 50)} ms, p95 ${percentile(lateness, 95)} ms, max ${lateness.at(-1)} ms`);
  console.log(`lateness after the due minute (jitter included): p50 ${percentile(nominalLateness, 50)} ms, p95 ${percentile(nominalLateness, 95)} ms, max ${nominalLateness.at(-1)} ms`);
  console.log(`runs per minute: ${((rows.length / Math.max(1, lastEnd - firstStart)) * 60_000).toFixed(0)} (first start to last finish ${((lastEnd - firstStart) / 1000).toFixed(1)} s)`);
  console.log(cpuPerEmailLine('per run', spent, rows.length).replace('CPU ms/email', 'CPU ms/run'));
  const [size] = await db.query<{ schedules: string; runs: string }>(
    `SELECT pg_total_relation_size('agent_schedules')::text AS schedules, pg_total_relation_size('schedule_runs')::text AS runs`,
    [],
  );
  console.log(`PostgreSQL bytes per schedule: ${(Number(size!.schedules) / total).toFixed(0)} (agent_schedules with indexes); per run: ${(Number(size!.runs) / Math.max(1, rows.length)).toFixed(0)} (schedule_runs)`);
  console.log(`Temporal server bytes per schedule: ${(((await temporalBytes()) - temporalBefore) / total).toFixed(0)} (${temporal.databases.length ? temporal.databases.join(' + ') : 'its SQLite file'} after creating them and running ${rows.length})`);

  await world.close();
  await rm(dir, { recursive: true, force: true });
}
