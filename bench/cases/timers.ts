// Thread timers at scale (issue #25): T thread workflows snoozed over A accounts on a real Temporal
// dev server, D of them due at the same instant (the rest tomorrow). Each thread is real: a no-reply
// email delivered into the Gmail emulator, the thread's workflow started by the sync's ingest (a
// built-in rule classifies it, no LLM), then snoozed through the product's own `requestTimer` (the
// CLI's path): the thread is archived in Gmail and waits on its durable timer. At the time the
// thread comes back to the inbox (Gmail) and the journal row turns `done`.
// Prints PostgreSQL bytes and worker memory (this process's RSS: the three workers run in-process)
// per waiting thread, and for the D due ones the lateness of each wake-up (journal done_at against
// the snooze's time: the timer fired, Gmail updated, the row settled) and CPU ms per fired timer.
//   --threads T (10000)  --accounts A (200)  --due D (2000)
// Follow-up timers are the same durable timer (the run's earliest wake); this case snoozes only.
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { wholeFlag } from '../args.js';
import { cpuSnapshot, cpuSpent, cpuPerEmailLine } from '../proc-cpu.js';
import { benchAccountDeps, benchWorkerEnv, startWorkersInProcess } from '../worker-env.js';
import { registerAccount } from '../../src/accounts/connect.js';
import { loadConfig, threadSettingsFromConfig } from '../../src/config.js';
import { createPrismaClient } from '../../src/db/client.js';
import { databaseNameOf } from '../../src/db/connection-url.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { spawnGmailEmulator } from '../../emulators/gmail/index.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { ingestThreadEvent, requestTimer } from '../../src/thread/ingest.js';
import { installSdkLogging } from '../../src/workers/sdk-logging.js';
import { setLogLevel } from '../../src/shared/log.js';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export async function run(args: string[]): Promise<void> {
  const total = wholeFlag(args, 'threads', 10_000);
  const accountsCount = wholeFlag(args, 'accounts', 200);
  const due = Math.min(total, wholeFlag(args, 'due', 2000));
  // Core's "workflow task took over 5 s" warnings come by the hundred on a loaded machine: the figures say it.
  setLogLevel('warn');
  installSdkLogging('error', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });
  console.log(`timers: ${total} snoozed threads over ${accountsCount} accounts, ${due} due at the same instant; dev server (SQLite in memory); load average ${load()}`);

  const temporal = await startDevServer({ port: 0, headless: true });
  const gmail = await spawnGmailEmulator(['--no-quota']);
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench_timers';
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, undefined, { info: () => undefined, warn: console.warn });
  const prisma = createPrismaClient(databaseUrl);
  await prisma.$executeRawUnsafe('TRUNCATE accounts CASCADE');
  const db = prismaExecutor(prisma);
  const keys = fixedTestPayloadKeys();
  const cfg = loadConfig({
    // The Anthropic URL is never called: a built-in rule classifies every email of this case.
    ...benchWorkerEnv({ temporalAddress: temporal.address, databaseUrl, keys, gmail: { ...gmail.details, url: gmail.url }, anthropic: { apiKey: 'bench', url: 'http://127.0.0.1:9' } }),
    LOG_LEVEL: 'error',
  });
  const settings = threadSettingsFromConfig(cfg);
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }), dataConverter: createDataConverter(keys) });
  const workers = await startWorkersInProcess(cfg, databaseUrl);

  try {
    const deps = benchAccountDeps(prisma, cfg, client);
    const tag = randomUUID().slice(0, 6);
    const accounts: { email: string; id: string }[] = [];
    for (let a = 0; a < accountsCount; a++) {
      const email = `timers-${tag}-${a}@example.com`;
      const created = await gmail.control.createAccount({ email });
      accounts.push({ email, id: (await registerAccount(deps, { refresh_token: created.refreshToken })).id });
    }
    const snoozed = async () => (await client.workflow.count(`WorkflowType = "threadWorkflow" AND ExecutionStatus = "Running" AND InboxState = "snoozed"`)).count;
    const databaseBytes = async () => {
      await db.query('CHECKPOINT', []).catch(() => []);
      const [row] = await db.query<{ n: string }>('SELECT pg_database_size($1)::text AS n', [databaseNameOf(databaseUrl)]);
      return Number(row!.n);
    };
    await sleep(2000); // the accounts' sync workflows settle before the baseline
    const bytes0 = await databaseBytes();
    const rss0 = process.memoryUsage().rss;

    /** Threads [from, to): an email, its thread started by ingest, then snoozed until `at(i)`. */
    const snoozeThreads = async (from: number, to: number, at: (i: number) => number) => {
      let next = from;
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (next < to) {
          const i = next++;
          const account = accounts[i % accounts.length]!;
          const m = await gmail.control.deliver(account.email, {
            from: `Shop ${i} <noreply@shop${i % 97}.example>`, to: [account.email], subject: `Your order ${i} has shipped`, text: `Order ${i} is on its way.`,
          });
          const ids = { accountId: account.id, threadId: m.threadId, settings, taskQueue: cfg.TEMPORAL_TASK_QUEUE };
          await ingestThreadEvent(client, { ...ids, event: { type: 'message_added', messageId: m.id, labelIds: m.labelIds } });
          await requestTimer(client, { ...ids, event: { type: 'timer_request', requestId: `bench-${i}`, request: { kind: 'snooze', at: at(i) }, by: 'user' } });
        }
      }));
    };
    const untilSnoozed = async (count: number, deadline: number) => {
      while ((await snoozed()) < count) {
        if (Date.now() > deadline) throw new Error(`only ${await snoozed()} of ${count} threads snoozed in time`);
        await sleep(1000);
      }
    };

    // The threads due tomorrow first; then, at the rate they were made, the due ones, for an instant
    // far enough ahead that all of them wait before it.
    const created = Date.now();
    const tomorrow = Date.now() + 24 * 3600_000;
    await snoozeThreads(due, total, (i) => tomorrow + (i % 3600) * 1000);
    await untilSnoozed(total - due, Date.now() + 60 * 60_000);
    const perThread = (Date.now() - created) / Math.max(1, total - due);
    const dueAt = Math.ceil((Date.now() + due * perThread * 1.5 + 30_000) / 60_000) * 60_000;
    await snoozeThreads(0, due, () => dueAt);
    const createdSeconds = (Date.now() - created) / 1000;
    console.log(`timers: ${total} threads delivered, started and snoozed in ${createdSeconds.toFixed(0)} s (${(total / createdSeconds).toFixed(1)}/s); ${due} due at ${new Date(dueAt).toISOString()}`);
    if (Date.now() > dueAt) console.warn('warning: snoozing took past the due instant; the lateness includes it');

    // Every thread's timer set (visibility shows it snoozed) before the sizes are read, or the due instant.
    while ((await snoozed()) < total && Date.now() < dueAt - 5000) await sleep(1000);
    const waitingNow = await snoozed();
    const bytes1 = await databaseBytes();
    const rss1 = process.memoryUsage().rss;
    console.log(`timers: ${waitingNow} of ${total} threads waiting on a snooze (visibility) ${((dueAt - Date.now()) / 1000).toFixed(0)} s before the due instant`);
    console.log(`timers: PostgreSQL ${databaseNameOf(databaseUrl)} +${mib(bytes1 - bytes0)}: ${((bytes1 - bytes0) / total).toFixed(0)} bytes per waiting thread (threads, journal, decisions, indexes)`);
    console.log(`timers: workers' process RSS ${mib(rss0)} before, ${mib(rss1)} with ${total} waiting: ${((rss1 - rss0) / total / 1024).toFixed(1)} KiB per waiting thread (3 workers and this driver in one process)`);

    if (Date.now() < dueAt) await sleep(dueAt - Date.now() - 2000);
    const cpuBefore = cpuSnapshot();
    const deadline = dueAt + 15 * 60_000;
    let rows: { late_ms: number }[] = [];
    while (Date.now() < deadline) {
      rows = await db.query<{ late_ms: number }>(
        `SELECT (extract(epoch FROM done_at - scheduled_for) * 1000)::float8 AS late_ms FROM actions
          WHERE kind = 'snooze' AND state = 'done' AND scheduled_for = $1`,
        [new Date(dueAt)],
      );
      if (rows.length >= due) break;
      await sleep(500);
    }
    const spent = cpuSpent(cpuBefore, cpuSnapshot());
    const lateness = rows.map((r) => Number(r.late_ms)).sort((a, b) => a - b);
    console.log(`timers: ${rows.length}/${due} due snoozes fired and settled; load average ${load()}`);
    if (lateness.length > 0) {
      console.log(`timers: lateness of the wake-up (journal done after the due time): p50 ${percentile(lateness, 50).toFixed(0)} ms, p95 ${percentile(lateness, 95).toFixed(0)} ms, max ${lateness.at(-1)!.toFixed(0)} ms`);
    }
    console.log(cpuPerEmailLine('timers: per fired timer', spent, rows.length).replace('CPU ms/email', 'CPU ms'));
  } finally {
    await workers.stop();
    await client.connection.close();
    await prisma.$disconnect();
    await gmail.close();
    await temporal.stop();
  }
}
