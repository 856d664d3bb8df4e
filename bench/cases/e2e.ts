// End-to-end benchmark: from delivery in the Gmail emulator to the draft in Gmail, through users.watch,
// the OIDC-authenticated push endpoint, the sync workflow (history.list → ingest), the thread workflow,
// the Gmail and LLM workers, with the Anthropic emulator answering after a fixed latency.
// Everything real: its own Temporal dev server, Postgres (BENCH_DATABASE_URL, default the local
// server's durable_inbox_bench), the Gmail emulator in a child process with the legacy quota on.
//   --burst N            emails delivered at once (default 1000)
//   --rate R             steady stream, emails per second (default 2)
//   --steady-seconds S   how long the steady stream lasts (default 60)
//   --accounts A         mailboxes the mail is spread over (default 10: Gmail's quota is per user)
//   --llm-latency MS     Anthropic emulator latency (default 300)
//   --only burst|steady|backfill  these scenarios only (a comma-separated list)
//   --backfill-messages M  the backfill scenario: a steady stream to one account while a backfill of
//                        that account's M-message mailbox runs at the quota ceiling (default 20000)
//   --stack [N]          the production shape instead: the Temporal server on PostgreSQL
//                        (<database>_temporal) and N worker processes of each kind (default 2)
// Latency: delivery call → the thread's draft seen in the emulator (polled every 250 ms).
// Units: Gmail quota units the emulator charged during the scenario, divided by its emails.
import { cpuPerEmailLine, cpuSnapshot, cpuSpent, type CpuSnapshot } from '../proc-cpu.js';
import { randomUUID } from 'node:crypto';
import { positiveFlag } from '../args.js';
import { percentile, startBenchTemporal } from '../bench-kit.js';
import { benchAccountDeps, benchWorkerEnv, startWorkersInProcess } from '../worker-env.js';
import { loadConfig } from '../../src/config/env.js';
import { createPrismaClient } from '../../src/db/client.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { spawnAnthropicEmulator } from '../../emulators/anthropic/index.js';
import { spawnGmailEmulator } from '../../emulators/gmail/index.js';
import { startHttpServer } from '../../src/shared/http-server.js';
import { PUSH_PATH, pushRoute } from '../../src/sync/push-route.js';
import { registerAccount } from '../../src/sync/connect.js';
import { connectClient } from '../../src/temporal/client.js';
import { WorkerProcesses, workerTaskQueues } from '../../src/stack/worker-processes.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { installSdkLogging } from '../../src/workers/sdk-logging.js';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { priorityFor } from '../../src/temporal/priority.js';

const TOPIC = 'projects/durable-inbox-bench/topics/gmail';
const PUSH_EMAIL = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';

const question = (i: number) => ({
  from: `Client ${i} <client${i}@partner.example>`,
  subject: `Question ${i} about the contract`,
  text: `Hi,\n\nCould you send me the signed contract (reference ${i}) by Friday?\n\nThanks`,
});

export async function run(args: string[]): Promise<void> {
  const burst = positiveFlag(args, 'burst', 1000);
  const rate = positiveFlag(args, 'rate', 2);
  const steadySeconds = positiveFlag(args, 'steady-seconds', 60);
  const accountsCount = positiveFlag(args, 'accounts', 10);
  const llmLatency = positiveFlag(args, 'llm-latency', 300);
  const backfillMessages = positiveFlag(args, 'backfill-messages', 20_000);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',')) : undefined;

  const stackAt = args.indexOf('--stack');
  const stackWorkers = stackAt < 0 ? 0 : /^\d+$/.test(args[stackAt + 1] ?? '') ? Number(args[stackAt + 1]) : 2;

  installSdkLogging('warn', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench';
  const server = await startBenchTemporal(stackWorkers > 0, databaseUrl);
  console.log(`e2e on ${stackWorkers ? `the Temporal server on PostgreSQL, ${stackWorkers} worker processes of each kind` : 'the Temporal dev server, the workers in this process'}`);
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl);
  const gmail = await spawnGmailEmulator(['--quota', 'legacy']);
  const { details, control } = gmail;
  const anthropic = await spawnAnthropicEmulator(['--latency-ms', String(llmLatency)]); // its own process, like Gmail's

  const keys = fixedTestPayloadKeys();
  const env: Record<string, string> = {
    ...benchWorkerEnv({ temporalAddress: server.address, databaseUrl, keys, gmail: details, anthropic: { apiKey: 'bench-key', url: anthropic.url } }),
    GMAIL_PUSH_TOPIC: TOPIC,
    LOG_LEVEL: 'error',
  };
  const cfg = loadConfig(env);
  const prisma = createPrismaClient(databaseUrl);
  const client = await connectClient(cfg, keys);
  const workers = stackWorkers ? undefined : await startWorkersInProcess(cfg, databaseUrl);
  const processes = stackWorkers ? new WorkerProcesses({ env, perRole: stackWorkers, output: (name, line) => console.error(`[${name}] ${line}`) }) : undefined;
  processes?.startAll();
  await processes?.untilPolling(client, workerTaskQueues(cfg));

  const push = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    routes: {
      [`POST ${PUSH_PATH}`]: (req, res) => handler(req, res),
    },
  });
  const audience = `${push.url}${PUSH_PATH}`;
  const handler = pushRoute({ prisma, sync: { client }, audience, serviceAccountEmail: PUSH_EMAIL, certsUrl: `${details.url}/oauth2/v1/certs` });
  await control.setPush({ topics: { [TOPIC]: { endpoint: audience } } });

  const deps = benchAccountDeps(prisma, cfg, client, TOPIC);
  const tag = randomUUID().slice(0, 6);
  const emails: string[] = [];
  const accountIdOf = new Map<string, string>();
  for (let i = 0; i < accountsCount; i++) {
    const email = `bench-${tag}-${i}@example.com`;
    const created = await control.createAccount({ email, clientId: details.clientId });
    // The backfill scenario's mailbox, filled before the account is connected (old mail, no history).
    if (i === 0 && (!only || only.has('backfill'))) await control.seed(email, { count: backfillMessages, spanDays: 365 });
    accountIdOf.set(email, (await registerAccount(deps, { refresh_token: created.refreshToken })).id);
    emails.push(email);
  }
  /** Wall clock (ms) of each delivery, to compare with the thread workflows' start times. */
  const deliveredWall = new Map<string, number>();

  /** Delivered threads → delivery time; the poller records when each thread's draft appears. */
  const deliveredAt = new Map<string, number>();
  const draftedAt = new Map<string, number>();
  let polling = true;
  const poller = (async () => {
    while (polling) {
      // Only mailboxes with threads still waiting for their draft (polling costs the emulator CPU).
      const waiting = new Set([...deliveredAt.keys()].filter((k) => !draftedAt.has(k)).map((k) => k.split('/')[0]!));
      await Promise.all(
        emails.filter((e) => waiting.has(e)).map(async (email) => {
          const state = await control.getState(email, { messageLimit: 0 });
          const now = performance.now();
          for (const d of state.drafts) {
            const key = `${email}/${d.threadId}`;
            if (deliveredAt.has(key) && !draftedAt.has(key)) draftedAt.set(key, now);
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 250));
    }
  })();

  let seq = 0;
  async function deliverOne(to?: string): Promise<string> {
    const i = seq++;
    const email = to ?? emails[i % emails.length]!;
    const started = performance.now();
    const wall = Date.now();
    const m = await control.deliver(email, { to: [email], ...question(i) });
    const key = `${email}/${m.threadId}`;
    deliveredAt.set(key, started);
    deliveredWall.set(key, wall);
    return key;
  }

  async function unitsSpent(): Promise<number> {
    const m = await control.metrics();
    return Object.values(m.methods).reduce((sum, x) => sum + x.units, 0);
  }

  async function unitsByMethod(): Promise<Record<string, number>> {
    const m = await control.metrics();
    return Object.fromEntries(Object.entries(m.methods).map(([k, v]) => [k, v.units]));
  }

  /** --verbose: where one thread's time went (activity queue wait vs. run time), from its history. */
  async function explain(key: string): Promise<void> {
    const [email, threadId] = key.split('/') as [string, string];
    const history = await client.workflow.getHandle(`thread/${accountIdOf.get(email)}/${threadId}`).fetchHistory();
    const t = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
      Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
    const events = history.events ?? [];
    const t0 = t(events[0]!);
    const scheduled = new Map<number, { type: string; at: number }>();
    const started = new Map<number, number>();
    for (const e of events) {
      const id = Number(e.eventId);
      if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at: t(e) });
      if (e.activityTaskStartedEventAttributes) started.set(Number(e.activityTaskStartedEventAttributes.scheduledEventId), t(e));
      if (e.activityTaskCompletedEventAttributes) {
        const sid = Number(e.activityTaskCompletedEventAttributes.scheduledEventId);
        const s = scheduled.get(sid)!;
        console.error(`  ${s.type}: scheduled +${s.at - t0} ms, waited ${started.get(sid)! - s.at} ms, ran ${t(e) - started.get(sid)!} ms`);
      }
    }
    console.error(`  workflow: ${t(events[events.length - 1]!) - t0} ms from start to last event`);
  }

  async function rejections(): Promise<number> {
    const q = (await control.metrics()).quota;
    return q.rejected429 + q.rejected403 + q.rejectedConcurrent;
  }

  async function waitFor(ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!(await ready())) {
      if (performance.now() > deadline) throw new Error('the backfill stored nothing in time');
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  async function waitDrafted(keys: string[], timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    while (keys.some((k) => !draftedAt.has(k)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return keys.filter((k) => draftedAt.has(k)).length;
  }

  /** Delivery → thread workflow started: the push + sync share of the latency. */
  async function syncLatencies(keys: string[]): Promise<number[]> {
    const out: number[] = [];
    for (const key of keys) {
      const [email, threadId] = key.split('/') as [string, string];
      const d = await client.workflow.getHandle(`thread/${accountIdOf.get(email)}/${threadId}`).describe().catch(() => undefined);
      if (d) out.push(d.startTime.getTime() - deliveredWall.get(key)!);
    }
    return out.sort((a, b) => a - b);
  }

  /** A steady stream (`rate` emails/s for `seconds`), each email to `to` or round the accounts; the keys delivered. */
  async function stream(seconds: number, to?: string): Promise<string[]> {
    const total = Math.round(rate * seconds);
    const t0 = performance.now();
    const keys: string[] = [];
    const sends: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sends.push(deliverOne(to).then((k) => void keys.push(k)));
    }
    await Promise.all(sends);
    return keys;
  }

  async function storedMessages(accountId: string): Promise<number> {
    const [row] = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM messages WHERE account_id = $1`, accountId);
    return Number(row!.n);
  }

  /** `units` undefined: not this scenario's own (a backfill spent most of them). */
  async function report(name: string, keys: string[], units: number | undefined, wallMs: number, cpu0: CpuSnapshot): Promise<void> {
    const cpu = cpuSpent(cpu0, cpuSnapshot());
    const lat = keys.filter((k) => draftedAt.has(k)).map((k) => draftedAt.get(k)! - deliveredAt.get(k)!).sort((a, b) => a - b);
    console.log(`e2e ${name}: ${keys.length} emails delivered, ${lat.length} drafted`);
    console.log(`e2e ${name}: ${((lat.length / wallMs) * 60_000).toFixed(0)} emails/min`);
    console.log(`e2e ${name} latency p50: ${(percentile(lat, 50) / 1000).toFixed(2)} s`);
    console.log(`e2e ${name} latency p95: ${(percentile(lat, 95) / 1000).toFixed(2)} s`);
    if (units !== undefined) console.log(`e2e ${name}: ${(units / Math.max(1, keys.length)).toFixed(1)} Gmail units/email`);
    const sync = await syncLatencies(keys);
    console.log(`e2e ${name} delivery→thread workflow p50: ${(percentile(sync, 50) / 1000).toFixed(2)} s`);
    console.log(`e2e ${name} delivery→thread workflow p95: ${(percentile(sync, 95) / 1000).toFixed(2)} s`);
    console.log(cpuPerEmailLine(`e2e ${name}`, cpu, lat.length) + (units === undefined ? ' (the backfill included)' : ''));
  }

  try {
    if (!only || only.has('burst')) {
      const units0 = await unitsSpent();
      const rejected0 = await rejections();
      const cpu0 = cpuSnapshot();
      const t0 = performance.now();
      const keys: string[] = [];
      const lanes = Array.from({ length: 20 }, async () => {
        while (keys.length < burst) {
          const slot = keys.push('') - 1;
          keys[slot] = await deliverOne();
        }
      });
      await Promise.all(lanes);
      const done = await waitDrafted(keys, 15 * 60_000);
      const last = Math.max(...keys.filter((k) => draftedAt.has(k)).map((k) => draftedAt.get(k)!));
      await report('burst', keys, (await unitsSpent()) - units0, (done > 0 ? last : performance.now()) - t0, cpu0);
      console.log(`e2e burst: ${(await rejections()) - rejected0} Gmail calls refused for quota (429/403)`);
      if (args.includes('--verbose')) {
        console.error(JSON.stringify(await unitsByMethod()));
        await explain(keys[Math.floor(keys.length / 2)]!);
      }
    }
    if (!only || only.has('steady')) {
      const units0 = await unitsSpent();
      const rejected0 = await rejections();
      const cpu0 = cpuSnapshot();
      const t0 = performance.now();
      const keys = await stream(steadySeconds);
      await waitDrafted(keys, 5 * 60_000);
      await report('steady', keys, (await unitsSpent()) - units0, performance.now() - t0, cpu0);
      console.log(`e2e steady: ${(await rejections()) - rejected0} Gmail calls refused for quota (429/403)`);
    }
    if (!only || only.has('backfill')) {
      // Live mail to an account whose whole mailbox is being backfilled at its quota ceiling: the
      // backfill runs behind live mail (task queue priority), so the drafts should not wait for it.
      const email = emails[0]!;
      const accountId = accountIdOf.get(email)!;
      const handle = await client.workflow.start(backfillWorkflow, {
        workflowId: backfillWorkflowId(accountId),
        taskQueue: cfg.TEMPORAL_TASK_QUEUE,
        args: [{ accountId }],
        priority: priorityFor('backfill', accountId),
      });
      await waitFor(async () => (await storedMessages(accountId)) >= 500, 5 * 60_000);
      const units0 = await unitsSpent();
      const rejected0 = await rejections();
      const stored0 = await storedMessages(accountId);
      const cpu0 = cpuSnapshot();
      const t0 = performance.now();
      const keys = await stream(steadySeconds, email);
      await waitDrafted(keys, 5 * 60_000);
      const wallMs = performance.now() - t0;
      const stored = (await storedMessages(accountId)) - stored0;
      const running = (await handle.describe()).status.name === 'RUNNING';
      await report('with backfill', keys, undefined, wallMs, cpu0);
      console.log(`e2e with backfill: ${(await unitsSpent()) - units0} Gmail units spent by mail and backfill together`);
      console.log(`e2e with backfill: backfill stored ${stored} messages meanwhile (${(stored / (wallMs / 1000)).toFixed(1)} messages/s), ${running ? 'still running at the end' : 'FINISHED before the end: seed more (--backfill-messages)'}`);
      console.log(`e2e with backfill: ${(await rejections()) - rejected0} Gmail calls refused for quota (429/403)`);
      await handle.terminate('bench over');
    }
  } finally {
    polling = false;
    await poller;
    await push.close();
    await workers?.stop();
    await processes?.stopAll();
    await client.connection.close();
    await prisma.$disconnect();
    await anthropic.close();
    await gmail.close();
    await server.stop();
  }
}
