// Idle cost: N thread workflows open and waiting for the user, spread over M emulated accounts, then
// what they cost at rest and how quickly one more starts and one open one answers a signal.
// Everything real: a Temporal server (the dev server, or with --stack the Temporal server on
// PostgreSQL), the three kinds of worker as their own OS processes, Postgres (BENCH_DATABASE_URL,
// default the local server's durable_inbox_bench), the Gmail emulator in a child process.
//   --threads N    thread workflows brought to the waiting state (default 2000)
//   --accounts M   mailboxes they are spread over (default 20)
//   --samples S    start and signal samples (default 50)
//   --stack        the Temporal server on PostgreSQL (<database>_temporal and its _visibility)
// The waiting state, cheaply: mail from a no-reply sender, which a built-in rule classifies as
// automated (no LLM call, no draft); the workflow then waits for labels (skipped, 3 days' idle timeout).
// Start: signalWithStart → the run's first workflow task completed (its history), and → waiting.
// Signal: a Rework label on a waiting thread → the status query shows the decision it led to.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { positiveFlag } from '../args.js';
import { mib, percentile, rssOf, sleep, startBenchTemporal, temporalServerPids } from '../bench-kit.js';
import { benchAccountDeps, benchWorkerEnv } from '../worker-env.js';
import { registerAccount } from '../../src/sync/connect.js';
import { loadConfig } from '../../src/config/env.js';
import { threadSettingsFromConfig } from '../../src/config/settings.js';
import { createPrismaClient } from '../../src/db/client.js';
import { databaseNameOf } from '../../src/db/connection-url.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { spawnGmailEmulator } from '../../emulators/gmail/index.js';
import { WorkerProcesses, WORKER_ROLES, workerTaskQueues } from '../../src/stack/worker-processes.js';
import { connectClient } from '../../src/temporal/client.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { threadWorkflowId, type LabelsChangedEvent, type ThreadSettings } from '../../src/thread/contracts.js';
import { ingestThreadEvent } from '../../src/thread/ingest.js';
import { labelsChangedSignal, threadStatusQuery } from '../../src/thread/signals.js';
import { installSdkLogging } from '../../src/workers/sdk-logging.js';


export async function run(args: string[]): Promise<void> {
  const threads = positiveFlag(args, 'threads', 2000);
  const accountsCount = positiveFlag(args, 'accounts', 20);
  const samples = positiveFlag(args, 'samples', 50);
  const stack = args.includes('--stack');

  installSdkLogging('warn', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench';
  // PostgreSQL here has 100 connections shared with other work: this case keeps its share small.
  const server = await startBenchTemporal(stack, databaseUrl, { persistence: 8, visibility: 4 });
  console.log(`idle on ${server.what}, one worker process of each kind: ${threads} threads over ${accountsCount} accounts`);
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl);
  const gmail = await spawnGmailEmulator(['--quota', 'legacy']);
  const { details, control } = gmail;

  const keys = fixedTestPayloadKeys();
  const env: Record<string, string> = {
    // The Anthropic URL is never called: a built-in rule classifies every email of this case.
    ...benchWorkerEnv({ temporalAddress: server.address, databaseUrl, keys, gmail: details, anthropic: { apiKey: 'bench-key', url: 'http://127.0.0.1:9' } }),
    LOG_LEVEL: 'error',
    DATABASE_POOL_SIZE: '4',
  };
  const cfg = loadConfig(env);
  const settings: ThreadSettings = threadSettingsFromConfig(cfg);
  const prisma = createPrismaClient(databaseUrl, { poolSize: 2 });
  const client = await connectClient(cfg, keys);
  const processes = new WorkerProcesses({ env, perRole: 1, output: (name, line) => console.error(`[${name}] ${line}`) });
  processes.startAll();
  const sizes = new pg.Client({ connectionString: databaseUrl });
  await sizes.connect();

  const databases = [databaseNameOf(databaseUrl), ...server.databases];
  async function databaseBytes(): Promise<number[]> {
    await sizes.query('CHECKPOINT').catch(() => {}); // table files catch up with the WAL
    const out: number[] = [];
    for (const name of databases) out.push(Number((await sizes.query<{ n: string }>('SELECT pg_database_size($1) AS n', [name])).rows[0]!.n));
    return out;
  }
  async function memory(): Promise<{ server: number; workers: Record<string, number> }> {
    let serverRss = 0;
    for (const pid of await temporalServerPids()) serverRss += await rssOf(pid);
    const workers: Record<string, number> = {};
    for (const role of WORKER_ROLES) workers[role] = (await Promise.all(processes.pids(role).map(rssOf))).reduce((a, b) => a + b, 0);
    return { server: serverRss, workers };
  }

  try {
    await processes.untilPolling(client, workerTaskQueues(cfg));
    const deps = benchAccountDeps(prisma, cfg, client);
    const tag = randomUUID().slice(0, 6);
    const accounts: { email: string; id: string }[] = [];
    for (let i = 0; i < accountsCount; i++) {
      const email = `idle-${tag}-${i}@example.com`;
      const created = await control.createAccount({ email, clientId: details.clientId });
      accounts.push({ email, id: (await registerAccount(deps, { refresh_token: created.refreshToken })).id });
    }

    let seq = 0;
    /** Delivers one no-reply email and starts its thread's workflow; the workflow id and when the call began. */
    async function startOne(): Promise<{ workflowId: string; startedWall: number; startedAt: number }> {
      const i = seq++;
      const account = accounts[i % accounts.length]!;
      const m = await control.deliver(account.email, {
        from: `Shop ${i} <noreply@shop${i % 97}.example>`,
        to: [account.email],
        subject: `Your order ${i} has shipped`,
        text: `Order ${i} is on its way.`,
      });
      const startedWall = Date.now();
      const startedAt = performance.now();
      await ingestThreadEvent(client, {
        accountId: account.id,
        threadId: m.threadId,
        event: { type: 'message_added', messageId: m.id, labelIds: m.labelIds },
        settings,
        taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      });
      return { workflowId: threadWorkflowId(account.id, m.threadId), startedWall, startedAt };
    }
    async function waiting(): Promise<number> {
      return (await client.workflow.count(`WorkflowType = "threadWorkflow" AND ExecutionStatus = "Running" AND InboxState = "skipped"`)).count;
    }

    await sleep(2000); // the accounts' sync workflows settle before the baseline
    const bytes0 = await databaseBytes();
    const mem0 = await memory();
    const waiting0 = await waiting();

    const units = async () => Object.values((await control.metrics()).methods).reduce((sum, x) => sum + x.units, 0);
    const units0 = await units();
    const t0 = performance.now();
    const open: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (seq < threads) open.push((await startOne()).workflowId);
      }),
    );
    const deadline = performance.now() + 30 * 60_000;
    let settled = 0;
    while ((settled = (await waiting()) - waiting0) < threads) {
      if (performance.now() > deadline) throw new Error(`only ${settled} of ${threads} threads reached the waiting state in 30 min`);
      await sleep(1000);
    }
    const fillSeconds = (performance.now() - t0) / 1000;
    console.log(`idle: ${threads} threads waiting after ${fillSeconds.toFixed(0)} s (${(threads / fillSeconds).toFixed(1)} threads/s to start and classify)`);
    console.log(`idle: ${(((await units()) - units0) / threads).toFixed(1)} Gmail units per thread brought to the waiting state`);

    await sleep(5000); // the last saves and visibility writes land
    const bytes1 = await databaseBytes();
    const mem1 = await memory();
    databases.forEach((name, i) => {
      const delta = bytes1[i]! - bytes0[i]!;
      console.log(`idle: PostgreSQL ${name}: ${mib(bytes1[i]!)} (+${mib(delta)}), ${(delta / threads / 1024).toFixed(1)} KiB per open workflow`);
    });
    const total = bytes1.reduce((a, b) => a + b, 0) - bytes0.reduce((a, b) => a + b, 0);
    console.log(`idle: PostgreSQL bytes per open workflow, all databases: ${(total / threads / 1024).toFixed(1)} KiB`);
    console.log(`idle: Temporal server RSS: ${mib(mem0.server)} before, ${mib(mem1.server)} with ${threads} open`);
    for (const role of WORKER_ROLES) console.log(`idle: ${role} worker RSS: ${mib(mem0.workers[role]!)} before, ${mib(mem1.workers[role]!)} with ${threads} open`);

    // One more thread, one at a time: start → first workflow task completed, and → waiting.
    const toFirstTask: number[] = [];
    const toWaiting: number[] = [];
    for (let i = 0; i < samples; i++) {
      const s = await startOne();
      const handle = client.workflow.getHandle(s.workflowId);
      for (;;) {
        const status = await handle.query(threadStatusQuery).catch(() => undefined);
        if (status?.state === 'skipped' && status.pendingEvents === 0) break;
        await sleep(10);
      }
      toWaiting.push(performance.now() - s.startedAt);
      const events = (await handle.fetchHistory()).events ?? [];
      const completed = events.find((e) => e.workflowTaskCompletedEventAttributes);
      const at = completed?.eventTime;
      if (at) toFirstTask.push(Number(at.seconds ?? 0) * 1000 + Math.round((at.nanos ?? 0) / 1e6) - s.startedWall);
    }
    toFirstTask.sort((a, b) => a - b);
    toWaiting.sort((a, b) => a - b);
    console.log(`idle: start → first workflow task completed p50: ${percentile(toFirstTask, 50).toFixed(0)} ms`);
    console.log(`idle: start → first workflow task completed p95: ${percentile(toFirstTask, 95).toFixed(0)} ms`);
    console.log(`idle: start → waiting for the user p50: ${percentile(toWaiting, 50).toFixed(0)} ms`);
    console.log(`idle: start → waiting for the user p95: ${percentile(toWaiting, 95).toFixed(0)} ms`);

    // A signal to an open thread, one at a time: Rework on a skipped thread is refused and recorded.
    const toHandled: number[] = [];
    for (let i = 0; i < samples; i++) {
      const handle = client.workflow.getHandle(open[Math.floor((i * open.length) / samples)]!);
      const before = (await handle.query(threadStatusQuery)).decisions.length;
      const event: LabelsChangedEvent = { type: 'labels_changed', messageId: 'idle-bench', changeId: `idle-${i}`, added: ['rework'], removed: [] };
      const t = performance.now();
      await handle.signal(labelsChangedSignal, event);
      while ((await handle.query(threadStatusQuery)).decisions.length === before) await sleep(5);
      toHandled.push(performance.now() - t);
    }
    toHandled.sort((a, b) => a - b);
    console.log(`idle: signal → handled (status query) p50: ${percentile(toHandled, 50).toFixed(0)} ms`);
    console.log(`idle: signal → handled (status query) p95: ${percentile(toHandled, 95).toFixed(0)} ms`);
  } finally {
    await processes.stopAll();
    await sizes.end();
    await client.connection.close();
    await prisma.$disconnect();
    await gmail.close();
    await server.stop();
  }
}
