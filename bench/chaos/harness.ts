// The chaos run (issue 14): a burst of mail through the whole path — delivery in the Gmail emulator,
// push to our endpoint, the sync workflow, the thread workflows, the three workers as separate OS
// processes, drafts, actions and sends in Gmail — while faults strike at seeded moments: workers
// SIGKILLed and started again, the Temporal dev server restarted on its SQLite file, a Gmail 429
// storm, push notifications dropped and duplicated, an LLM 529 outage, and poison mail. It then
// counts, from the emulators' state, what settled, what was lost and what was done twice.
// Shared by `npm run bench -- chaos` and test/chaos/chaos.test.ts.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { benchAccountDeps, benchWorkerEnv } from '../worker-env.js';
import { registerAccount } from '../../src/sync/connect.js';
import { ACTION_MARKER_HEADER } from '../../src/actions/contracts.js';
import { updateSafetySettings } from '../../src/actions/journal.js';
import { loadConfig } from '../../src/config/env.js';
import { createPrismaClient } from '../../src/db/client.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { spawnAnthropicEmulator } from '../../emulators/anthropic/index.js';
import { breakMime } from '../../emulators/gmail/faults.js';
import { spawnGmailEmulator, type IncomingMessage } from '../../emulators/gmail/index.js';
import { Random } from '../../emulators/gmail/random.js';
import { startHttpServer } from '../../src/shared/http-server.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { ensureSchedules } from '../../src/schedules/schedules.js';
import { freePort } from '../../src/shared/free-port.js';
import { setLogLevel } from '../../src/shared/log.js';
import { PUSH_PATH, pushRoute } from '../../src/sync/push-route.js';
import { connectClient } from '../../src/temporal/client.js';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { chaosTimeline, lastFaultEnd, type FaultSpec, type TimedFault } from './timeline.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';
import { describeWait } from './tail-trace.js';
import { WorkerProcesses, workerTaskQueues, type WorkerRole } from '../../src/stack/worker-processes.js';

const TOPIC = 'projects/durable-inbox-chaos/topics/gmail';
const PUSH_EMAIL = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';
const FORWARD_DOMAIN = 'forward.chaos.example';
const FORWARD_TO = 'assistant@me.example';
/**
 * Gmail's legacy per-user budget (units per minute), and what is left of it during the 429 storm: a
 * unit a second with a 4-unit burst, so every read and write (5 units and more) is refused until it
 * ends, however slowly a loaded machine gets its threads to Gmail (at 300 a minute a slow run met none).
 */
const USER_UNITS_PER_MINUTE = 15_000;
const STORM_UNITS_PER_MINUTE = 60;

/** `poison`: content whose model answer fails validation every time; `unreadable`: broken MIME. */
export type MailKind = 'reply' | 'newsletter' | 'forward' | 'poison' | 'unreadable';

export interface ChaosOptions {
  emails: number;
  accounts: number;
  seed: number;
  /** Faults strike within this long after the burst starts. */
  windowMs: number;
  faults: FaultSpec[];
  /** Push misbehaviour for the whole window. */
  pushDropRate: number;
  pushDuplicateRate: number;
  /** Poison mail among the emails: half content that makes the model's answer invalid every time, half broken MIME. */
  poison: number;
  /** Every n-th email is a newsletter (archived by the default actions), every n-th + 1 a mail our rule forwards. */
  bulkEvery: number;
  llmLatencyMs: number;
  /** PostgreSQL database for the run; emptied first. */
  databaseUrl: string;
  /** How long after the last fault every email gets to settle before it counts as lost. */
  settleDeadlineMs: number;
  /** The threads' activity timeouts: how long a killed worker's task waits before it is retried. */
  activityTimeoutSeconds: { gmail: number; llm: number };
  /** The fallback poll's interval (catches mailboxes whose last push was dropped). */
  pollEvery: string;
  /** The LLM breaker's probe backoff (LLM_BREAKER_PROBE_MIN/MAX); the product's defaults when absent. */
  llmBreakerProbeSeconds?: { min: number; max: number };
  /** Progress lines (stderr in the bench). */
  log?: (line: string) => void;
}

/** Short form for CI: 60 emails, a kill of the Gmail and the LLM worker, short storms. */
export function shortChaosOptions(databaseUrl: string, seed = 1): ChaosOptions {
  return {
    emails: 60,
    accounts: 5,
    seed,
    // Short enough that both storms start within the first seconds of the burst, while mail is in flight.
    windowMs: 12_000,
    faults: [
      { kind: 'kill-worker', worker: 'gmail', count: 1 },
      { kind: 'kill-worker', worker: 'llm', count: 1 },
      { kind: 'gmail-429-storm', count: 1, durationMs: 8_000 },
      { kind: 'llm-529-outage', count: 1, durationMs: 10_000 },
    ],
    pushDropRate: 0.3,
    pushDuplicateRate: 0.3,
    poison: 2,
    bulkEvery: 10,
    llmLatencyMs: 100,
    databaseUrl,
    settleDeadlineMs: 60_000,
    activityTimeoutSeconds: { gmail: 15, llm: 20 },
    pollEvery: '10 seconds',
    // The short outage ends within seconds: probe the model again soon after, not after the default 30 s.
    llmBreakerProbeSeconds: { min: 3, max: 15 },
  };
}

/** The issue's form (at least 500 emails): 2,000 emails, every worker killed several times, a server restart, 60 s of 429s, 2 min of 529s. */
export function fullChaosOptions(databaseUrl: string, seed = 1): ChaosOptions {
  return {
    // 500 emails settle in about a minute on 2 cores, before most of a 4-minute fault window has
    // passed: 2,000 keep mail in flight while every fault strikes.
    emails: 2_000,
    accounts: 10,
    seed,
    windowMs: 240_000,
    faults: [
      { kind: 'kill-worker', worker: 'workflow', count: 3 },
      { kind: 'kill-worker', worker: 'gmail', count: 3 },
      { kind: 'kill-worker', worker: 'llm', count: 3 },
      { kind: 'restart-temporal', count: 1 },
      { kind: 'gmail-429-storm', count: 1, durationMs: 60_000 },
      { kind: 'llm-529-outage', count: 1, durationMs: 120_000 },
    ],
    pushDropRate: 0.3,
    pushDuplicateRate: 0.3,
    poison: 10,
    bulkEvery: 10,
    llmLatencyMs: 300,
    databaseUrl,
    settleDeadlineMs: 10 * 60_000,
    activityTimeoutSeconds: { gmail: 30, llm: 45 },
    pollEvery: '20 seconds',
  };
}

export interface ChaosReport {
  delivered: number;
  settled: number;
  /** Delivered and not settled by the deadline. */
  lost: number;
  unsettled: Array<{ email: string; threadId: string; kind: MailKind }>;
  /** Threads with more than one draft in Gmail (each extra draft counts). */
  duplicateDrafts: number;
  drafts: number;
  /** Sent messages beyond the first per action id (X-Durable-Inbox-Action), from Gmail's state. */
  duplicateSends: number;
  sends: number;
  /** From the end of the last fault (or of the push misbehaviour's window) to the last email settled; 0 when everything settled before. */
  lastFaultToSettledMs: number;
  byKind: Record<MailKind, { delivered: number; settled: number }>;
  faults: {
    timeline: TimedFault[];
    workerKills: Record<WorkerRole, number>;
    workerUnexpectedExits: Record<WorkerRole, number>;
    temporalRestarts: number;
    temporalDowntimeMs: number[];
    /** How long the storm lasted: its planned time, longer when nothing had hit it yet. */
    gmail429StormMs: number;
    gmail429s: number;
    pushesSent: number;
    pushesDropped: number;
    pushesDuplicated: number;
    llmOutageMs: number;
    llm529s: number;
    poisonIsolated: number;
  };
  wallMs: number;
}

interface Delivered {
  key: string;
  email: string;
  accountId: string;
  threadId: string;
  kind: MailKind;
}

/** Which kind the i-th email is: poison at seeded positions, then newsletters and forwards at a fixed spacing. */
export function mailPlan(opts: Pick<ChaosOptions, 'emails' | 'poison' | 'bulkEvery' | 'seed'>): MailKind[] {
  const kinds: MailKind[] = Array.from({ length: opts.emails }, (_, i) =>
    i % opts.bulkEvery === opts.bulkEvery - 1 ? 'newsletter' : i % opts.bulkEvery === 0 && i > 0 ? 'forward' : 'reply',
  );
  const random = new Random(opts.seed ^ 0x5eed);
  let placed = 0;
  while (placed < Math.min(opts.poison, opts.emails)) {
    const i = random.int(0, opts.emails - 1);
    if (kinds[i] !== 'poison' && kinds[i] !== 'unreadable') {
      kinds[i] = placed % 2 === 0 ? 'poison' : 'unreadable';
      placed++;
    }
  }
  return kinds;
}

function mailOf(kind: MailKind, i: number, to: string): IncomingMessage {
  switch (kind) {
    case 'reply':
      return { from: `Client ${i} <client${i}@partner.example>`, subject: `Question ${i} about the contract`, text: `Hi,\n\nCould you send me the signed contract (reference ${i}) by Friday?\n\nThanks` };
    case 'newsletter':
      return { from: `Weekly <news@letters.example>`, subject: `This week, issue ${i}`, text: 'The week in review.', headers: { 'List-Unsubscribe': '<mailto:unsubscribe@letters.example>' } };
    case 'forward':
      return { from: `Ray ${i} <ray${i}@${FORWARD_DOMAIN}>`, subject: `Invoice ${i}`, text: 'Please keep a copy of this invoice.' };
    case 'poison':
      // The model's answer to this mail fails validation on every attempt.
      return { from: `Client ${i} <client${i}@partner.example>`, subject: `Question ${i}`, text: `Could you confirm the order ${i}? [emulator:invalid-output]` };
    case 'unreadable': {
      const from = `Client ${i} <client${i}@partner.example>`;
      const raw = breakMime(Buffer.from(`From: ${from}\r\nTo: ${to}\r\nSubject: Order ${i}\r\n\r\nCould you confirm the order ${i}?`));
      return { from, raw: raw.toString('base64url') };
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? (() => {});
  const started = performance.now();
  const scratch = await mkdtemp(join(tmpdir(), 'durable-inbox-chaos-'));
  const cleanup: Array<() => Promise<unknown>> = [() => rm(scratch, { recursive: true, force: true })];
  try {
    const timeline = chaosTimeline(opts.seed, opts.windowMs, opts.faults, 8_000);
    const faultsEndMs = Math.max(lastFaultEnd(timeline), opts.windowMs);

    // Temporal on a fixed port and a SQLite file, so a restart comes back with every workflow.
    const port = await freePort();
    const dbFile = join(scratch, 'temporal.db');
    let server: DevServer = await startDevServer({ port, headless: true, dbFile });
    cleanup.unshift(() => server.stop());

    await ensureDatabase(opts.databaseUrl);
    await applyMigrations(opts.databaseUrl, undefined, { info: () => undefined, warn: (m) => log(m) });
    const prisma = createPrismaClient(opts.databaseUrl);
    cleanup.unshift(() => prisma.$disconnect());
    await prisma.$executeRawUnsafe('TRUNCATE accounts, rules CASCADE');

    const gmail = await spawnGmailEmulator(['--quota', 'legacy', '--seed', String(opts.seed)]);
    cleanup.unshift(() => gmail.close());
    await gmail.control.setQuota({ userUnitsPerMinute: USER_UNITS_PER_MINUTE });
    const anthropic = await spawnAnthropicEmulator(['--latency-ms', String(opts.llmLatencyMs), '--seed', String(opts.seed)]);
    cleanup.unshift(() => anthropic.close());
    const configureLlm = async (patch: unknown) => {
      const res = await fetch(`${anthropic.url}/__emulator/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
      if (!res.ok) throw new Error(`anthropic emulator config: HTTP ${res.status}`);
    };

    const keys = fixedTestPayloadKeys();
    const env: Record<string, string> = {
      ...benchWorkerEnv({
        temporalAddress: server.address,
        databaseUrl: opts.databaseUrl,
        keys,
        gmail: { ...gmail.details, url: gmail.url },
        anthropic: { apiKey: 'chaos-key', url: anthropic.url },
      }),
      GMAIL_PUSH_TOPIC: TOPIC,
      GMAIL_ACTIVITY_TIMEOUT: `${opts.activityTimeoutSeconds.gmail}s`,
      LLM_ACTIVITY_TIMEOUT: `${opts.activityTimeoutSeconds.llm}s`,
      SEND_DELAY: '1s',
      // Three worker processes beside the CI suite's other files, on one PostgreSQL: small pools.
      DATABASE_POOL_SIZE: '4',
      ...(opts.llmBreakerProbeSeconds
        ? { LLM_BREAKER_PROBE_MIN: `${opts.llmBreakerProbeSeconds.min}s`, LLM_BREAKER_PROBE_MAX: `${opts.llmBreakerProbeSeconds.max}s` }
        : {}),
      LOG_LEVEL: 'warn',
    };
    const cfg = loadConfig(env);
    setLogLevel(cfg.LOG_LEVEL);
    const client: Client = await connectClient(cfg, keys);
    cleanup.unshift(() => client.connection.close());

    // The forward rule and the policy that lets it send: the path where a duplicate would be a second email.
    await prisma.rule.create({
      data: { scope: 'domain', scopeRef: FORWARD_DOMAIN, kind: 'deterministic', action: 'fyi', actions: [{ kind: 'forward', argument: FORWARD_TO }] },
    });
    await updateSafetySettings(prismaExecutor(prisma), '', { forwardTo: [FORWARD_TO], allowances: [{ kind: 'forward', scope: 'global' }], sendsPerHour: 100_000 });

    const workerLog = createWriteStream(join(scratch, 'workers.log'), { flags: 'a' });
    const workers = new WorkerProcesses({ env, output: (name, line) => workerLog.write(`[${name}] ${line}\n`) });
    cleanup.unshift(async () => {
      await workers.stopAll();
      workerLog.end();
    });
    workers.startAll();
    log(`chaos: workers' output in ${join(scratch, 'workers.log')} (removed at the end)`);

    const push = await startHttpServer({ host: '127.0.0.1', port: 0, routes: { [`POST ${PUSH_PATH}`]: (req, res) => handler(req, res) } });
    cleanup.unshift(() => push.close());
    const audience = `${push.url}${PUSH_PATH}`;
    const handler = pushRoute({ prisma, sync: { client }, audience, serviceAccountEmail: PUSH_EMAIL, certsUrl: `${gmail.url}/oauth2/v1/certs` });
    await gmail.control.setPush({ topics: { [TOPIC]: { endpoint: audience } }, seed: opts.seed });
    await ensureSchedules(client, {
      retentionDays: 30,
      sync: { pollEvery: opts.pollEvery, fullScanEvery: '1 day', fullScanDays: 1, watchRenewalEvery: '1 day', watchRenewWithinMs: 3600_000 },
    });

    const deps = benchAccountDeps(prisma, cfg, client, TOPIC);
    const tag = randomUUID().slice(0, 6);
    const accounts: Array<{ email: string; id: string }> = [];
    for (let a = 0; a < opts.accounts; a++) {
      const email = `chaos-${tag}-${a}@example.com`;
      const created = await gmail.control.createAccount({ email, clientId: gmail.details.clientId });
      accounts.push({ email, id: (await registerAccount(deps, { refresh_token: created.refreshToken })).id });
    }

    await workers.untilPolling(client, workerTaskQueues(cfg), 180_000);
    log(`chaos: workers polling after ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const metrics0 = await gmail.control.metrics();
    const llm0 = await anthropic.metrics();

    // The burst and the faults start together.
    await gmail.control.setPush({ dropRate: opts.pushDropRate, duplicateRate: opts.pushDuplicateRate });
    const t0 = performance.now();
    const at = (ms: number) => sleep(Math.max(0, t0 + ms - performance.now()));
    const kinds = mailPlan(opts);
    const delivered: Delivered[] = [];
    let next = 0;
    const delivering = Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < kinds.length) {
          const i = next++;
          const account = accounts[i % accounts.length]!;
          const kind = kinds[i]!;
          const m = await gmail.control.deliver(account.email, { to: [account.email], ...mailOf(kind, i, account.email) });
          delivered.push({ key: `${account.email}/${m.threadId}`, email: account.email, accountId: account.id, threadId: m.threadId, kind });
        }
      }),
    );

    const downtimes: number[] = [];
    const stormMs: Partial<Record<'gmail-429-storm' | 'llm-529-outage', number>> = {};
    /**
     * A storm lasts its planned time and, when nothing hit it yet (no call came while it lasted: the
     * workers were starting, say, or a loaded machine had not got that far), on until something does,
     * at most six times as long.
     */
    const endStorm = async (fault: TimedFault, before: number, served: () => Promise<number>, end: () => Promise<unknown>) => {
      await at(fault.atMs + fault.durationMs);
      while ((await served()) === before && performance.now() - t0 < fault.atMs + 6 * fault.durationMs) await sleep(250);
      await end();
      stormMs[fault.kind as keyof typeof stormMs] = performance.now() - t0 - fault.atMs;
    };
    const gmail429s = async () => (await gmail.control.metrics()).quota.rejected429;
    const llm529s = async () => (await anthropic.metrics()).byStatus['529'] ?? 0;
    let faultsOverMs = faultsEndMs;
    const injecting = (async () => {
      const storms: Promise<void>[] = [];
      for (const fault of timeline) {
        await at(fault.atMs);
        log(`chaos: +${(fault.atMs / 1000).toFixed(1)} s ${fault.kind}${fault.worker ? ` ${fault.worker}` : ''}${fault.durationMs ? ` for ${fault.durationMs / 1000} s` : ''}`);
        switch (fault.kind) {
          case 'kill-worker':
            await workers.kill(fault.worker!);
            break;
          case 'restart-temporal': {
            const down = performance.now();
            await server.stop();
            server = await startDevServer({ port, headless: true, dbFile });
            downtimes.push(performance.now() - down);
            break;
          }
          case 'gmail-429-storm': {
            const before = await gmail429s();
            await gmail.control.setQuota({ userUnitsPerMinute: STORM_UNITS_PER_MINUTE });
            storms.push(endStorm(fault, before, gmail429s, () => gmail.control.setQuota({ userUnitsPerMinute: USER_UNITS_PER_MINUTE })));
            break;
          }
          case 'llm-529-outage': {
            const before = await llm529s();
            await configureLlm({ errorRates: { overloaded: 1 } });
            storms.push(endStorm(fault, before, llm529s, () => configureLlm({ errorRates: { overloaded: 0 } })));
            break;
          }
        }
      }
      await Promise.all([...storms, at(faultsEndMs)]);
      await gmail.control.setPush({ dropRate: 0, duplicateRate: 0 });
      faultsOverMs = performance.now() - t0;
      log(`chaos: +${(faultsOverMs / 1000).toFixed(1)} s faults over`);
    })();

    // Settled: a draft in Gmail (replies), the archive done (newsletters), the forward sent (forwards),
    // Action Required with its reason recorded (poison, unreadable).
    const settledAt = new Map<string, number>();
    const checkSettled = async () => {
      const done = await prisma.$queryRawUnsafe<Array<{ account_id: string; gmail_thread_id: string; kind: string }>>(
        `SELECT account_id, gmail_thread_id, kind FROM actions WHERE state = 'done' AND kind IN ('archive', 'forward')`,
      );
      const isolated = await prisma.$queryRawUnsafe<Array<{ account_id: string; gmail_thread_id: string }>>(
        `SELECT t.account_id, t.gmail_thread_id FROM threads t
          WHERE t.state = 'action_required' AND EXISTS (SELECT 1 FROM decisions d WHERE d.thread_id = t.id AND d.kind = 'action_required')`,
      );
      const doneKeys = new Set(done.map((r) => `${r.account_id}/${r.gmail_thread_id}/${r.kind}`));
      const isolatedKeys = new Set(isolated.map((r) => `${r.account_id}/${r.gmail_thread_id}`));
      const waitingReplies = new Set(delivered.filter((d) => d.kind === 'reply' && !settledAt.has(d.key)).map((d) => d.email));
      const drafted = new Set<string>();
      await Promise.all(
        accounts.filter((a) => waitingReplies.has(a.email)).map(async (a) => {
          for (const d of (await gmail.control.getState(a.email, { messageLimit: 0 })).drafts) drafted.add(`${a.email}/${d.threadId}`);
        }),
      );
      const now = performance.now();
      for (const d of delivered) {
        if (settledAt.has(d.key)) continue;
        const ok =
          d.kind === 'reply' ? drafted.has(d.key)
          : d.kind === 'newsletter' ? doneKeys.has(`${d.accountId}/${d.threadId}/archive`)
          : d.kind === 'forward' ? doneKeys.has(`${d.accountId}/${d.threadId}/forward`)
          : isolatedKeys.has(`${d.accountId}/${d.threadId}`);
        if (ok) settledAt.set(d.key, now);
      }
    };

    await delivering;
    log(`chaos: ${delivered.length} emails delivered in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    let faultsOver = false;
    void injecting.then(() => (faultsOver = true));
    let lastProgress = 0;
    let lastTrace = 0;
    for (;;) {
      await checkSettled().catch((err: unknown) => log(`chaos: settle check failed: ${(err as Error).message}`));
      const elapsed = performance.now() - t0;
      if (elapsed - lastProgress >= 15_000) {
        lastProgress = elapsed;
        log(`chaos: +${(elapsed / 1000).toFixed(0)} s ${settledAt.size}/${delivered.length} settled`);
      }
      if (faultsOver && settledAt.size === delivered.length) break;
      if (faultsOver && elapsed > faultsOverMs + opts.settleDeadlineMs) break;
      // What holds the tail: 30 s after the last fault, then every minute, what each thread still unsettled waits on.
      if (faultsOver && elapsed > faultsOverMs + 30_000 && elapsed - lastTrace >= 60_000) {
        lastTrace = elapsed;
        const open = delivered.filter((d) => !settledAt.has(d.key));
        const waits = await Promise.all(open.slice(0, 40).map((d) => describeWait(client, threadWorkflowId(d.accountId, d.threadId))));
        // Grouped by the line without its figures; one example each, figures and all.
        const groups = new Map<string, { n: number; example: string }>();
        for (const w of waits) {
          const key = w.replace(/\d+/g, '#');
          const g = groups.get(key) ?? { n: 0, example: w };
          groups.set(key, { ...g, n: g.n + 1 });
        }
        log(`chaos: +${(elapsed / 1000).toFixed(0)} s, ${open.length} unsettled${open.length > 40 ? ' (the first 40 traced)' : ''}, waiting on:`);
        for (const { n, example } of [...groups.values()].sort((a, b) => b.n - a.n)) log(`chaos:   ${n} × e.g. ${example}`);
      }
      await sleep(1000);
    }
    await injecting;

    // Duplicates, from Gmail's state: drafts per thread, sent messages per action id.
    let drafts = 0;
    let duplicateDrafts = 0;
    let sends = 0;
    let duplicateSends = 0;
    for (const a of accounts) {
      const state = await gmail.control.getState(a.email, { messageLimit: 100_000, headers: [ACTION_MARKER_HEADER] });
      const perThread = new Map<string, number>();
      for (const d of state.drafts) perThread.set(d.threadId, (perThread.get(d.threadId) ?? 0) + 1);
      drafts += state.drafts.length;
      for (const n of perThread.values()) duplicateDrafts += n - 1;
      const perAction = new Map<string, number>();
      for (const m of state.messages) {
        const action = m.headers?.[ACTION_MARKER_HEADER];
        if (!m.labelIds.includes('SENT') || !action) continue;
        sends++;
        perAction.set(action, (perAction.get(action) ?? 0) + 1);
      }
      for (const n of perAction.values()) duplicateSends += n - 1;
    }

    const metrics = await gmail.control.metrics();
    const llm = await anthropic.metrics();
    const lastSettled = Math.max(0, ...settledAt.values());
    const byKind = Object.fromEntries(
      (['reply', 'newsletter', 'forward', 'poison', 'unreadable'] as const).map((k) => [
        k,
        { delivered: delivered.filter((d) => d.kind === k).length, settled: delivered.filter((d) => d.kind === k && settledAt.has(d.key)).length },
      ]),
    ) as ChaosReport['byKind'];
    const unsettled = delivered.filter((d) => !settledAt.has(d.key)).map(({ email, threadId, kind }) => ({ email, threadId, kind }));
    return {
      delivered: delivered.length,
      settled: settledAt.size,
      lost: unsettled.length,
      unsettled,
      duplicateDrafts,
      drafts,
      duplicateSends,
      sends,
      lastFaultToSettledMs: Math.max(0, lastSettled - (t0 + faultsOverMs)),
      byKind,
      faults: {
        timeline,
        workerKills: { ...workers.counts.kills },
        workerUnexpectedExits: { ...workers.counts.unexpectedExits },
        temporalRestarts: downtimes.length,
        temporalDowntimeMs: downtimes,
        gmail429StormMs: stormMs['gmail-429-storm'] ?? 0,
        gmail429s: metrics.quota.rejected429 - metrics0.quota.rejected429,
        pushesSent: metrics.push.sent - metrics0.push.sent,
        pushesDropped: metrics.push.dropped - metrics0.push.dropped,
        pushesDuplicated: metrics.push.duplicated - metrics0.push.duplicated,
        llmOutageMs: stormMs['llm-529-outage'] ?? 0,
        llm529s: (llm.byStatus['529'] ?? 0) - (llm0.byStatus['529'] ?? 0),
        poisonIsolated: byKind.poison.settled + byKind.unreadable.settled,
      },
      wallMs: performance.now() - started,
    };
  } finally {
    for (const step of cleanup) await step().catch((err: unknown) => log(`chaos: cleanup: ${(err as Error).message}`));
  }
}

/** One figure per line. */
export function formatChaosReport(r: ChaosReport): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const f = r.faults;
  const kills = Object.values(f.workerKills).reduce((a, b) => a + b, 0);
  return [
    `emails delivered: ${r.delivered}`,
    `emails settled: ${r.settled}`,
    `lost: ${r.lost}`,
    `duplicate drafts: ${r.duplicateDrafts}`,
    `duplicate sends: ${r.duplicateSends}`,
    `time from the last fault to all settled: ${r.lost === 0 ? s(r.lastFaultToSettledMs) : 'not all settled'}`,
    `settled by kind: ${Object.entries(r.byKind).map(([k, v]) => `${k} ${v.settled}/${v.delivered}`).join(', ')}`,
    `drafts in Gmail: ${r.drafts}; sends in Gmail: ${r.sends}`,
    `worker kills: ${kills} (${Object.entries(f.workerKills).map(([k, v]) => `${k} ${v}`).join(', ')})`,
    `worker exits not caused by a kill: ${Object.values(f.workerUnexpectedExits).reduce((a, b) => a + b, 0)}`,
    `Temporal restarts: ${f.temporalRestarts}${f.temporalDowntimeMs.length ? ` (downtime ${f.temporalDowntimeMs.map(s).join(', ')})` : ''}`,
    `Gmail 429s served: ${f.gmail429s} (storm ${s(f.gmail429StormMs)})`,
    `pushes sent: ${f.pushesSent}, dropped: ${f.pushesDropped}, duplicated: ${f.pushesDuplicated}`,
    `LLM 529s served: ${f.llm529s} (outage ${s(f.llmOutageMs)})`,
    `poison messages isolated: ${f.poisonIsolated}/${r.byKind.poison.delivered + r.byKind.unreadable.delivered} (bad model output ${r.byKind.poison.settled}, unreadable MIME ${r.byKind.unreadable.settled})`,
    `wall time: ${s(r.wallMs)}`,
  ];
}
