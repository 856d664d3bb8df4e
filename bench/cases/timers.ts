// Thread timers at scale (issue #25): T thread workflows waiting on a timer over A accounts, D of
// them due at the same instant. Each thread is real: an email delivered into the Gmail emulator,
// its workflow started by the sync's ingest. F of them wait on a follow-up: a question (classified
// and drafted by the LLM, the Anthropic emulator), the draft sent by the user as a question of their
// own, judged to expect an answer: the thread waits FOLLOW_UP_BUSINESS_DAYS for it. The rest are
// snoozed through the product's own `requestTimer` (the CLI's path): archived in Gmail, waiting on
// the durable timer; D of those until one instant, the others until tomorrow. At the instant each
// due thread comes back to the inbox (Gmail) and its journal row turns `done`.
// Prints PostgreSQL bytes (ours, and the Temporal server's with --stack) and worker and server memory
// per waiting thread; for the D due ones the lateness of each wake-up (journal done_at against the
// snooze's time: the timer fired, Gmail updated, the row settled) and CPU ms per fired timer.
//   --threads T (10000)  --accounts A (200)  --due D (2000)  --follow-ups F (2000)
//   --stack [N]          the Temporal server on PostgreSQL and N worker processes of each kind
//                        (default 2); without it the dev server and one of each
//   --cache N            the workflow workers' cache (WORKFLOW_CACHE_SIZE; default the product's), the floor's too
//   --floor N (D)        bare timer wake-ups measured first on the same server (bench/floor), with
//                        T - D more bare workflows waiting beside them; 0: none
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { countFlag, wholeFlag } from '../args.js';
import { mib, percentile, rssOf, sleep, startBenchTemporal, temporalServerPids } from '../bench-kit.js';
import { cpuSnapshot, cpuSpent, cpuPerEmailLine } from '../proc-cpu.js';
import { floorLine, ratioLine, runTimerFloor, type FloorRun } from '../floor/floor.js';
import { benchAccountDeps, benchWorkerEnv } from '../worker-env.js';
import { registerAccount } from '../../src/sync/connect.js';
import { loadConfig } from '../../src/config/env.js';
import { threadSettingsFromConfig } from '../../src/config/settings.js';
import { createPrismaClient } from '../../src/db/client.js';
import { databaseNameOf } from '../../src/db/connection-url.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { spawnAnthropicEmulator } from '../../emulators/anthropic/index.js';
import { spawnGmailEmulator } from '../../emulators/gmail/index.js';
import { WorkerProcesses, WORKER_ROLES, workerTaskQueues } from '../../src/stack/worker-processes.js';
import { connectClient } from '../../src/temporal/client.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import type { MailboxEvent } from '../../src/thread/contracts.js';
import { ingestThreadEvent, requestTimer } from '../../src/thread/ingest.js';
import { setLogLevel } from '../../src/shared/log.js';
import { installSdkLogging } from '../../src/workers/sdk-logging.js';
import { workflowCacheOptions } from '../../src/workers/workflow-worker.js';

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** Runs `work(i)` for i in [from, to) with `width` at a time. */
async function inParallel(from: number, to: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = from;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < to) await work(next++);
  }));
}

export async function run(args: string[]): Promise<void> {
  const total = wholeFlag(args, 'threads', 10_000);
  const accountsCount = wholeFlag(args, 'accounts', 200);
  const due = Math.min(total, wholeFlag(args, 'due', 2000));
  const followUps = Math.min(total - due, countFlag(args, 'follow-ups', 2000));
  const stackAt = args.indexOf('--stack');
  const perRole = stackAt < 0 ? 1 : /^\d+$/.test(args[stackAt + 1] ?? '') ? Number(args[stackAt + 1]) : 2;
  const floorWakes = countFlag(args, 'floor', due);
  setLogLevel('warn');
  installSdkLogging('error', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });

  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench_timers';
  // PostgreSQL here has 100 connections shared with other work: this case keeps its share small.
  const server = await startBenchTemporal(stackAt >= 0, databaseUrl, { persistence: 8, visibility: 4 });
  console.log(
    `timers: ${total} threads over ${accountsCount} accounts (${followUps} awaiting a reply, ${total - followUps} snoozed, ${due} of those due at one instant); ` +
      `${server.what}, ${perRole} worker process(es) of each kind; load average ${load()}`,
  );
  const gmail = await spawnGmailEmulator(['--no-quota']);
  const anthropic = await spawnAnthropicEmulator(['--latency-ms', '0']);
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, undefined, { info: () => undefined, warn: console.warn });
  const prisma = createPrismaClient(databaseUrl, { poolSize: 4 });
  await prisma.$executeRawUnsafe('TRUNCATE accounts CASCADE');
  const keys = fixedTestPayloadKeys();
  const env: Record<string, string> = {
    ...benchWorkerEnv({ temporalAddress: server.address, databaseUrl, keys, gmail: { ...gmail.details, url: gmail.url }, anthropic: { apiKey: 'bench', url: anthropic.url } }),
    LOG_LEVEL: 'error',
    DATABASE_POOL_SIZE: '4',
    ...(args.includes('--cache') ? { WORKFLOW_CACHE_SIZE: String(countFlag(args, 'cache', 0)) } : {}),
  };
  const cfg = loadConfig(env);
  const settings = threadSettingsFromConfig(cfg);
  const client = await connectClient(cfg, keys);
  // The floor first, alone on the server (the emulators idle), its worker's cache the product's.
  let floor: FloorRun | undefined;
  if (floorWakes > 0) {
    floor = await runTimerFloor(server.address, floorWakes, { waiting: total - due, workerOptions: workflowCacheOptions(cfg) });
    console.log(floorLine('timers: per wake-up', 'wake-up', floor));
  }
  const processes = new WorkerProcesses({ env, perRole, output: (name, line) => console.error(`[${name}] ${line}`) });
  processes.startAll();
  const sizes = new pg.Client({ connectionString: databaseUrl });
  await sizes.connect();
  const databases = [databaseNameOf(databaseUrl), ...server.databases];
  const databaseBytes = async () => {
    await sizes.query('CHECKPOINT').catch(() => {}); // table files catch up with the WAL
    let bytes = 0;
    for (const name of databases) bytes += Number((await sizes.query<{ n: string }>('SELECT pg_database_size($1) AS n', [name])).rows[0]!.n);
    return bytes;
  };
  const memory = async () => {
    let serverRss = 0;
    for (const pid of await temporalServerPids()) serverRss += await rssOf(pid);
    const workers = Object.fromEntries(await Promise.all(WORKER_ROLES.map(async (role) => [role, (await Promise.all(processes.pids(role).map(rssOf))).reduce((a, b) => a + b, 0)] as const)));
    return { server: serverRss, workers };
  };
  const inState = async (state: string) => (await client.workflow.count(`WorkflowType = "threadWorkflow" AND ExecutionStatus = "Running" AND InboxState = "${state}"`)).count;
  const until = async (what: string, ready: () => Promise<boolean>, minutes: number) => {
    const deadline = Date.now() + minutes * 60_000;
    while (!(await ready())) {
      if (Date.now() > deadline) throw new Error(`timers: ${what} did not happen within ${minutes} min`);
      await sleep(1000);
    }
  };

  try {
    await processes.untilPolling(client, workerTaskQueues(cfg));
    const deps = benchAccountDeps(prisma, cfg, client);
    const tag = randomUUID().slice(0, 6);
    const accounts: { email: string; id: string }[] = [];
    for (let a = 0; a < accountsCount; a++) {
      const email = `timers-${tag}-${a}@example.com`;
      const created = await gmail.control.createAccount({ email });
      accounts.push({ email, id: (await registerAccount(deps, { refresh_token: created.refreshToken })).id });
    }
    const ingest = (account: { id: string }, threadId: string, event: MailboxEvent) =>
      ingestThreadEvent(client, { accountId: account.id, threadId, settings, taskQueue: cfg.TEMPORAL_TASK_QUEUE, event });

    await sleep(2000); // the accounts' sync workflows settle before the baseline
    const bytes0 = await databaseBytes();
    const mem0 = await memory();
    const created = Date.now();

    // Follow-ups: a question in, our draft, the user sends it as a question of their own.
    await inParallel(0, followUps, 16, async (i) => {
      const account = accounts[i % accounts.length]!;
      const m = await gmail.control.deliver(account.email, {
        from: `Client ${i} <client${i}@partner${i % 89}.example>`, to: [account.email], subject: `Contract ${i}`, text: `Hi,\n\nCould you send me the signed contract ${i} by Friday?\n\nThanks`,
      });
      await ingest(account, m.threadId, { type: 'message_added', messageId: m.id, labelIds: m.labelIds });
    });
    // The user sends each draft as it appears (a visibility count can run ahead of the drafts).
    const sendDrafts = () => inParallel(0, accounts.length, 16, async (a) => {
      const account = accounts[a]!;
      for (const draft of (await gmail.control.getState(account.email, { messageLimit: 0 })).drafts) {
        await gmail.control.editDraft(account.email, draft.id, { text: 'Here it is. Could you confirm you received it?' });
        const sent = await gmail.control.sendDraft(account.email, draft.id);
        await ingest(account, draft.threadId, { type: 'draft_gone', messageId: draft.messageId ?? '' });
        await ingest(account, draft.threadId, { type: 'message_added', messageId: sent.id, labelIds: sent.labelIds });
      }
    });
    await until(`${followUps} threads awaiting a reply`, async () => {
      await sendDrafts();
      return (await inState('awaiting_reply')) >= followUps;
    }, 60);

    // Snoozes: the ones due tomorrow first; then, at the rate they were made, the due ones, for an
    // instant far enough ahead that all of them wait before it.
    const snooze = (at: (i: number) => number) => async (i: number) => {
      const account = accounts[i % accounts.length]!;
      const m = await gmail.control.deliver(account.email, {
        from: `Shop ${i} <noreply@shop${i % 97}.example>`, to: [account.email], subject: `Your order ${i} has shipped`, text: `Order ${i} is on its way.`,
      });
      await ingest(account, m.threadId, { type: 'message_added', messageId: m.id, labelIds: m.labelIds });
      await requestTimer(client, {
        accountId: account.id, threadId: m.threadId, settings, taskQueue: cfg.TEMPORAL_TASK_QUEUE,
        event: { type: 'timer_request', requestId: `bench-${i}`, request: { kind: 'snooze', at: at(i) }, by: 'user' },
      });
    };
    const snoozesStarted = Date.now();
    const tomorrow = Date.now() + 24 * 3600_000;
    await inParallel(followUps + due, total, 16, snooze((i) => tomorrow + (i % 3600) * 1000));
    await until(`${total - followUps - due} snoozes`, async () => (await inState('snoozed')) >= total - followUps - due, 60);
    const perThread = (Date.now() - snoozesStarted) / Math.max(1, total - followUps - due);
    const dueAt = Math.ceil((Date.now() + due * perThread * 1.5 + 30_000) / 60_000) * 60_000;
    await inParallel(followUps, followUps + due, 16, snooze(() => dueAt));
    const createdSeconds = (Date.now() - created) / 1000;
    console.log(`timers: ${total} threads delivered, started and set waiting in ${createdSeconds.toFixed(0)} s (${(total / createdSeconds).toFixed(1)}/s); ${due} due at ${new Date(dueAt).toISOString()}`);
    if (Date.now() > dueAt) console.warn('warning: snoozing took past the due instant; the lateness includes it');

    // Every thread's timer set (visibility shows it) before the sizes are read, or the due instant.
    const waiting = async () => (await inState('snoozed')) + (await inState('awaiting_reply'));
    while ((await waiting()) < total && Date.now() < dueAt - 5000) await sleep(1000);
    const waitingNow = await waiting();
    const bytes1 = await databaseBytes();
    const mem1 = await memory();
    console.log(`timers: ${waitingNow} of ${total} threads waiting (visibility) ${((dueAt - Date.now()) / 1000).toFixed(0)} s before the due instant`);
    console.log(`timers: PostgreSQL ${databases.join(' + ')} +${mib(bytes1 - bytes0)}: ${((bytes1 - bytes0) / total).toFixed(0)} bytes per waiting thread`);
    for (const role of WORKER_ROLES) {
      const delta = mem1.workers[role]! - mem0.workers[role]!;
      console.log(`timers: ${role} worker RSS ${mib(mem0.workers[role]!)} before, ${mib(mem1.workers[role]!)} with ${total} waiting: ${(delta / total / 1024).toFixed(1)} KiB per waiting thread`);
    }
    console.log(`timers: Temporal server RSS ${mib(mem0.server)} before, ${mib(mem1.server)} with ${total} waiting: ${((mem1.server - mem0.server) / total / 1024).toFixed(1)} KiB per waiting thread`);

    if (Date.now() < dueAt) await sleep(dueAt - Date.now() - 2000);
    const cpuBefore = cpuSnapshot();
    const deadline = dueAt + 15 * 60_000;
    let rows: { late_ms: number }[] = [];
    while (Date.now() < deadline) {
      ({ rows } = await sizes.query<{ late_ms: number }>(
        `SELECT (extract(epoch FROM done_at - scheduled_for) * 1000)::float8 AS late_ms FROM actions
          WHERE kind = 'snooze' AND state = 'done' AND scheduled_for = $1`,
        [new Date(dueAt)],
      ));
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
    if (floor) console.log(ratioLine('timers: CPU per wake-up', { cpu: spent, units: rows.length }, floor));
  } finally {
    await processes.stopAll();
    await sizes.end();
    await client.connection.close();
    await prisma.$disconnect();
    await anthropic.close();
    await gmail.close();
    await server.stop();
  }
}
