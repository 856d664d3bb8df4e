// Backfill benchmark: a whole mailbox through the real stack (Temporal dev server, Postgres, the
// Gmail emulator in a child process with its quota on, googleapis, the shared quota limiter) at the
// profile's ceiling. Scenarios (sizes overridable for a quick run):
//   --legacy N   messages under the legacy profile (default 18618: the real mailbox in the seeds)
//   --p2026 N    messages under the 2026 profile (default 1500)
//   --flat N     messages under legacy, to show worker memory stays flat (default 100000)
//   --only a,b   scenarios to run: legacy, 2026, flat (default all three)
//   --span-days N  the mailbox's age (default 365)
// Environment: TEMPORAL_ADDRESS (else a dev server is started), BENCH_DATABASE_URL (default the
// local server's durable_inbox_bench, created and migrated), GMAIL_QUOTA_START_RATE /
// GMAIL_QUOTA_MAX_RATE (limiter start and maximum, units/s).
import { cpuPerEmailLine, cpuSnapshot, cpuSpent } from '../proc-cpu.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { positiveFlag } from '../args.js';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { createBackfillMailActivities } from '../../src/backfill/mail-activities.js';
import { createBackfillStoreActivities } from '../../src/backfill/store-activities.js';
import { loadConfig } from '../../src/config/env.js';
import { quotaOptionsFromConfig } from '../../src/config/settings.js';
import { createPrismaClient } from '../../src/db/client.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { EmulatorControlClient } from '../../emulators/gmail/control-client.js';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { messageCeilingPerSecond, type QuotaProfileName } from '../../src/quota/profiles.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createGmailClient } from '../../src/gmail/client.js';
import { GmailService } from '../../src/gmail/gmail-service.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { bundleWorkflows, workflowsPath } from '../../src/workers/workflow-bundle.js';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface EmulatorDetails {
  url: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  email: string;
  messages: number;
}

async function startEmulator(messages: number, profile: QuotaProfileName, spanDays: number): Promise<{ child: ChildProcess; details: EmulatorDetails }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'emulators/gmail/main.ts', '--port', '0', '--json', '--quota', profile, '--messages', String(messages), '--span-days', String(spanDays)],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { child, details: JSON.parse(line.toString()) as EmulatorDetails };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

interface Scenario {
  name: string;
  profile: QuotaProfileName;
  messages: number;
}

async function runScenario(s: Scenario, env: { client: Client; temporalAddress: string; databaseUrl: string; spanDays: number }): Promise<void> {
  const { child, details } = await startEmulator(s.messages, s.profile, env.spanDays);
  const control = new EmulatorControlClient(details.url);
  const prisma = createPrismaClient(env.databaseUrl);
  const vault = new TokenVault(randomBytes(32));
  const account = await prisma.account.create({
    data: { email: `bench-${randomUUID().slice(0, 8)}@example.com`, encryptedTokens: vault.seal({ refresh_token: details.refreshToken }) },
  });
  const oauth = { clientId: details.clientId, clientSecret: details.clientSecret, tokenUrl: details.tokenUrl, rootUrl: `${details.url}/` };
  const db = prismaExecutor(prisma);
  const limiter = new QuotaLimiter(db, { ...quotaOptionsFromConfig(loadConfig()), profile: s.profile });
  const accounts = new GmailAccounts(prisma, vault, oauth, limiter.gateFor('bulk'));
  const taskQueue = `bench-backfill-${randomUUID().slice(0, 8)}`;
  const connection = await NativeConnection.connect({ address: env.temporalAddress });
  const dataConverter = createDataConverter(fixedTestPayloadKeys());
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await bundleWorkflows(workflowsPath),
    activities: { ...createBackfillStoreActivities({ db }), ...createBackfillMailActivities({ accounts, concurrency: limiter.options.maxConcurrency, db }) },
    dataConverter,
    maxCachedWorkflows: 50,
  });

  const metricsOf = async () => {
    const m = await control.metrics();
    const calls = Object.values(m.methods).reduce((sum, x) => sum + ((x as { calls?: number }).calls ?? 0), 0);
    const rejected = m.quota.rejected429 + m.quota.rejected403 + m.quota.rejectedConcurrent;
    return { calls, rejected };
  };

  const rss: number[] = [];
  let heapPeak = 0;
  let atMinute: { calls: number; rejected: number } | undefined;
  const cpu0 = cpuSnapshot();
  const started = performance.now();
  const sampler = setInterval(() => {
    const mem = process.memoryUsage();
    rss.push(mem.rss);
    heapPeak = Math.max(heapPeak, mem.heapUsed);
    if (!atMinute && performance.now() - started >= 60_000) void metricsOf().then((m) => (atMinute = m));
  }, 1000);

  const result = await worker.runUntil(
    env.client.workflow.execute(backfillWorkflow, {
      workflowId: backfillWorkflowId(account.id),
      taskQueue,
      args: [{ accountId: account.id, taskQueues: { workflows: taskQueue, gmail: taskQueue } }],
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSpent(cpu0, cpuSnapshot());
  clearInterval(sampler);
  const end = await metricsOf();

  // What the mailbox holds (messages.list, no spam or trash), counted after the measurement.
  const { gmail } = createGmailClient({ rootUrl: oauth.rootUrl, clientId: oauth.clientId, clientSecret: oauth.clientSecret, tokenUrl: oauth.tokenUrl, credentials: { refresh_token: details.refreshToken } });
  await control.setQuota({ enabled: false });
  const service = new GmailService(gmail);
  let listable = 0;
  let pageToken: string | undefined;
  do {
    const page = await service.listMessages({ maxResults: 500, ...(pageToken ? { pageToken } : {}) });
    listable += page.messages.length;
    pageToken = page.nextPageToken;
  } while (pageToken);
  const [rows] = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM messages WHERE account_id = $1`, account.id);
  const stored = Number(rows!.n);

  const ceiling = messageCeilingPerSecond(s.profile);
  const rate = stored / seconds;
  const afterMinute = atMinute ? (end.rejected - atMinute.rejected) / Math.max(1, end.calls - atMinute.calls) : 0;
  const tenth = rss[Math.floor(rss.length / 10)] ?? rss[0] ?? 0;
  const p = (label: string, value: string) => console.log(`${s.name} ${label}: ${value}`);
  p('messages', `${s.messages} messages (${listable} listable, ${s.profile} profile)`);
  p('throughput', `${rate.toFixed(1)} messages/s`);
  p('ceiling', `${ceiling} messages/s`);
  p('ceiling share', `${((rate / ceiling) * 100).toFixed(1)}% of ceiling`);
  p('calls throttled', `${((end.rejected / Math.max(1, end.calls)) * 100).toFixed(2)} % of ${end.calls} calls`);
  p('calls throttled after first minute', atMinute ? `${(afterMinute * 100).toFixed(2)} %` : 'n/a (run shorter than a minute)');
  p('total time', `${seconds.toFixed(1)} s`);
  p('rows stored', `${stored} rows`);
  console.log(cpuPerEmailLine(s.name, cpu, stored).replace('CPU ms/email', 'CPU ms/message'));
  p('messages minus bad', `${listable - result.counters.bad} messages (${result.counters.bad} bad)`);
  p('lost', `${listable - result.counters.bad - stored} messages`);
  p('worker rss at 10%', `${mb(tenth)} MB`);
  p('worker rss at end', `${mb(rss.at(-1) ?? 0)} MB`);
  p('worker rss peak', `${mb(Math.max(...rss))} MB`);
  p('worker heap peak', `${mb(heapPeak)} MB`);
  p('limiter rate at end', `${(await limiter.state(account.id))?.rate.toFixed(1)} units/s`);

  await connection.close();
  await prisma.$disconnect();
  child.kill('SIGTERM');
  await once(child, 'exit');
}

export async function run(args: string[]): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
  const onlyIndex = args.indexOf('--only');
  const only = onlyIndex >= 0 ? (args[onlyIndex + 1] ?? '').split(',') : ['legacy', '2026', 'flat'];
  const spanDays = positiveFlag(args, 'span-days', 365);
  const scenarios: Scenario[] = [
    { name: `legacy-${positiveFlag(args, 'legacy', 18_618)}`, profile: 'legacy' as const, messages: positiveFlag(args, 'legacy', 18_618), key: 'legacy' },
    { name: `2026-${positiveFlag(args, 'p2026', 1500)}`, profile: '2026' as const, messages: positiveFlag(args, 'p2026', 1500), key: '2026' },
    { name: `flat-legacy-${positiveFlag(args, 'flat', 100_000)}`, profile: 'legacy' as const, messages: positiveFlag(args, 'flat', 100_000), key: 'flat' },
  ].filter((x) => only.includes(x.key));

  const server = process.env.TEMPORAL_ADDRESS ? undefined : await startDevServer({ port: 17_000 + Math.floor(Math.random() * 2000), headless: true });
  const temporalAddress = process.env.TEMPORAL_ADDRESS ?? server!.address;
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench';
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl);
  const connection = await Connection.connect({ address: temporalAddress });
  const client = new Client({ connection, dataConverter: createDataConverter(fixedTestPayloadKeys()) });
  try {
    for (const s of scenarios) await runScenario(s, { client, temporalAddress, databaseUrl, spanDays });
  } finally {
    await connection.close();
    await server?.stop();
  }
}
