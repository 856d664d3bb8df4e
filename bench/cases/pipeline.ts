// Pipeline benchmark (issue 4): N emails delivered into the Gmail emulator and handed to the ingest
// function, through the thread workflows on a real Temporal dev server, the Gmail and LLM workers
// and Postgres, with the Anthropic emulator answering after 300 ms. Most emails need a reply and
// take the whole path: classify (LLM) → context → draft (LLM) → Gmail draft → labels; the rest are
// newsletters and automated notices that get the default actions (docs/actions.md).
//   --emails N        emails (default 1000)
//   --bulk PERCENT    newsletters and automated notices among them, half each (default 20; 0: replies only)
//   --accounts A      mailboxes they are spread over (default 10)
//   --llm-latency MS  Anthropic emulator latency (default 300)
//   --stack           the Temporal server on PostgreSQL (default: the dev server in memory)
//   --cache N         the workflow worker's cache (WORKFLOW_CACHE_SIZE; default the product's)
//   --floor N         bare thread-shaped runs measured first on the same server (bench/floor; default
//                     as many as emails; 0: none), and the pipeline's ratio to them
//   --provider imap   then the same mail through IMAP/SMTP (a local Dovecot and Postfix, mail-servers/)
//                     on the same server and workers, and both providers' figures side by side
// Gmail quotas are off here: this measures our pipeline; bench e2e measures it under Gmail's quota.
import { cpuPerEmailLine, cpuSnapshot, cpuSpent } from '../proc-cpu.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { countFlag, wholeFlag } from '../args.js';
import { percentile, startBenchTemporal } from '../bench-kit.js';
import { startBenchWorld, type BenchWorld } from '../bench-world.js';
import { llmPricesFromConfig, threadSettingsFromConfig } from '../../src/config/settings.js';
import { llmCostLines } from '../llm-cost.js';
import { floorLine, ratioLine, runThreadFloor, type FloorRun } from '../floor/floor.js';
import { workflowCacheOptions } from '../../src/workers/workflow-worker.js';
import { ingestThreadEvent } from '../../src/thread/ingest.js';
import { randomUUID } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { imapMailboxSettings, type ImapServers } from '../../src/accounts/imap-accounts.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { startMailServers } from '../../mail-servers/index.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';

type MailKind = 'reply' | 'newsletter' | 'automated';

/** Spreads the bulk mail evenly through the run: `bulkPercent` of the emails, newsletters and notices alternating. */
function mailKind(i: number, bulkPercent: number): MailKind {
  const bulkSoFar = Math.floor(((i + 1) * bulkPercent) / 100) - Math.floor((i * bulkPercent) / 100);
  if (bulkSoFar === 0) return 'reply';
  return Math.floor(((i + 1) * bulkPercent) / 100) % 2 === 0 ? 'newsletter' : 'automated';
}

function mailOf(kind: MailKind, i: number): { from: string; subject: string; text: string; headers?: Record<string, string> } {
  switch (kind) {
    case 'reply':
      return {
        from: `Client ${i} <client${i}@partner.example>`,
        subject: `Question ${i} about the contract`,
        text: `Hi,\n\nCould you send me the signed contract (reference ${i}) by Friday?\n\nThanks`,
      };
    case 'newsletter':
      return {
        from: `Weekly ${i} <news@letters.example>`,
        subject: `This week, issue ${i}`,
        text: 'The week in review.',
        headers: { 'List-Unsubscribe': '<mailto:unsubscribe@letters.example>' },
      };
    case 'automated':
      return { from: `CI <ci@builds.example>`, subject: `Build ${i} passed`, text: 'All green.', headers: { 'Auto-Submitted': 'auto-generated' } };
  }
}

/** Gmail quota units the emulator charged so far (it counts them with quotas off too). */
async function unitsSpent(control: { metrics(): Promise<{ methods: Record<string, { units: number }> }> }): Promise<number> {
  const m = await control.metrics();
  return Object.values(m.methods).reduce((sum, x) => sum + x.units, 0);
}

interface Driven {
  cpu: ReturnType<typeof cpuSpent>;
  draftedAt: Map<string, number>;
  start: number;
  end: number;
  latencies: number[];
  peakRss: number;
}

/**
 * Hands every thread its new message as a sync burst would, and waits until each thread's row says
 * drafted (written right after the Outbox label) or skipped (bulk mail, after its actions).
 */
async function drive(
  world: { client: BenchWorld['client']; prisma: BenchWorld['prisma'] },
  threads: { accountId: string; threadId: string; messageId: string }[],
  settings: ReturnType<typeof threadSettingsFromConfig>,
): Promise<Driven> {
  const { client, prisma } = world;
  const accountIds = [...new Set(threads.map((t) => t.accountId))];
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 500);
  const ingestedAt = new Map<string, number>();
  const cpuBefore = cpuSnapshot();
  const start = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < threads.length) {
        const t = threads[next++]!;
        ingestedAt.set(t.threadId, Date.now());
        await ingestThreadEvent(client, {
          accountId: t.accountId,
          threadId: t.threadId,
          event: { type: 'message_added', messageId: t.messageId, labelIds: ['INBOX'] },
          settings,
        });
      }
    }),
  );

  // Settled = the thread row says drafted (written right after the Outbox label), or skipped for
  // bulk mail (written after its actions).
  const draftedAt = new Map<string, number>();
  const deadline = Date.now() + 30 * 60_000;
  // Each poll asks only for rows written lately; the overlap covers transactions that commit out of
  // order (a row stamped before the newest one seen can still appear).
  let since = new Date(0);
  while (draftedAt.size < threads.length && Date.now() < deadline) {
    const rows = await prisma.thread.findMany({
      where: { accountId: { in: accountIds }, state: { in: ['drafted', 'skipped'] }, updatedAt: { gte: since } },
      select: { gmailThreadId: true, updatedAt: true },
      orderBy: { updatedAt: 'asc' },
    });
    for (const r of rows) if (!draftedAt.has(r.gmailThreadId)) draftedAt.set(r.gmailThreadId, r.updatedAt.getTime());
    const newest = rows.at(-1)?.updatedAt;
    if (newest) since = new Date(newest.getTime() - 10_000);
    await new Promise((r) => setTimeout(r, 250));
  }
  clearInterval(sampler);
  const cpu = cpuSpent(cpuBefore, cpuSnapshot());
  const end = Math.max(...draftedAt.values());
  const latencies = threads
    .filter((t) => draftedAt.has(t.threadId))
    .map((t) => draftedAt.get(t.threadId)! - ingestedAt.get(t.threadId)!)
    .sort((a, b) => a - b);

  return { cpu, draftedAt, start, end, latencies, peakRss };
}

export async function run(args: string[]): Promise<void> {
  const emails = wholeFlag(args, 'emails', 1000);
  const accountsCount = wholeFlag(args, 'accounts', 10);
  const llmLatency = wholeFlag(args, 'llm-latency', 300);
  const floorRuns = countFlag(args, 'floor', emails);
  const providerAt = args.indexOf('--provider');
  const provider = providerAt >= 0 ? args[providerAt + 1] : 'gmail';
  if (provider !== 'gmail' && provider !== 'imap') throw new Error('--provider expects gmail or imap');
  const cacheAt = args.indexOf('--cache');
  const cacheEnv: Record<string, string> = cacheAt >= 0 ? { WORKFLOW_CACHE_SIZE: String(countFlag(args, 'cache', 0)) } : {};
  const bulkIndex = args.indexOf('--bulk');
  const bulkPercent = bulkIndex >= 0 ? Number(args[bulkIndex + 1]) : 20;
  if (!Number.isInteger(bulkPercent) || bulkPercent < 0 || bulkPercent > 100) throw new Error('--bulk expects a percentage, 0 to 100');
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  // Both emulators in their own processes: the workers' thread is what this measures.
  // No IDLE watch: the burst is ingested as the sync would hand it over, on both providers.
  const world = await startBenchWorld({ name: 'pipeline', accounts: accountsCount, llmLatencyMs: llmLatency, env: { ...cacheEnv, IMAP_IDLE: 'false' }, startWorkers: false,
    ...(args.includes('--stack') ? { temporal: (url: string) => startBenchTemporal(true, url, { persistence: 8, visibility: 4 }) } : {}),
  });
  const { gmail, anthropic, prisma, cfg, accounts, client } = world;
  const settings = threadSettingsFromConfig(cfg);

  // Deliver first (the mailbox fills), then ingest everything as a sync burst would.
  const threads: { accountId: string; threadId: string; messageId: string; kind: MailKind }[] = [];
  for (let i = 0; i < emails; i++) {
    const account = accounts[i % accounts.length]!;
    const kind = mailKind(i, bulkPercent);
    const m = await gmail.control.deliver(account.email, { ...mailOf(kind, i), to: [account.email] });
    threads.push({ accountId: account.id, threadId: m.threadId, messageId: m.id, kind });
  }
  const unitsBefore = await unitsSpent(gmail.control);

  // The floor first, alone on the server (the product's workers start after it).
  let floor: FloorRun | undefined;
  if (floorRuns > 0) floor = await runThreadFloor(world.temporal.address, floorRuns, { workerOptions: workflowCacheOptions(cfg) });
  await world.startWorkers();

  const driven = await drive(world, threads, settings);
  const { cpu, draftedAt, start, end, latencies, peakRss } = driven;

  const sample = threads.slice(0, 20);
  let events = 0;
  for (const t of sample) {
    const history = await client.workflow.getHandle(threadWorkflowId(t.accountId, t.threadId)).fetchHistory();
    events += history.events?.length ?? 0;
  }
  const drafts = (
    await Promise.all(accounts.map(async (a) => (await gmail.control.getState(a.email, { messageLimit: 1 })).drafts.length))
  ).reduce((x, y) => x + y, 0);

  const units = (await unitsSpent(gmail.control)) - unitsBefore;
  const counts = { reply: 0, newsletter: 0, automated: 0 };
  for (const t of threads) counts[t.kind] += 1;
  const actionsDone = await prisma.action.count({ where: { state: 'done', kind: { not: 'draft' } } });
  console.log(`pipeline server: ${'what' in world.temporal ? String(world.temporal.what) : 'the Temporal dev server (SQLite in memory)'}`);
  console.log(`pipeline emails: ${threads.length} (${counts.reply} to answer, ${counts.newsletter} newsletters, ${counts.automated} automated; ${accountsCount} mailboxes, Anthropic emulator at ${llmLatency} ms)`);
  console.log(`pipeline settled: ${draftedAt.size} threads, ${drafts} Gmail drafts, ${actionsDone} default actions done`);
  console.log(`pipeline Gmail units/email: ${(units / threads.length).toFixed(1)} (default actions on)`);
  console.log(`pipeline: ${Math.round((draftedAt.size / (end - start)) * 60_000)} emails/min`);
  console.log(`pipeline ingest→settled p50: ${percentile(latencies, 50)} ms`);
  console.log(`pipeline ingest→settled p95: ${percentile(latencies, 95)} ms`);
  console.log(`pipeline history: ${(events / sample.length).toFixed(1)} events/thread`);
  console.log(`pipeline worker process peak RSS: ${Math.round(peakRss / 1024 / 1024)} MiB (the three workers)`);
  const llm = await anthropic.metrics();
  console.log(`pipeline LLM calls: ${llm.requests}`);
  for (const line of llmCostLines('pipeline', llm, threads.length, llmPricesFromConfig(cfg), cfg.ANTHROPIC_MODEL)) console.log(line);
  console.log(cpuPerEmailLine('pipeline', cpu, draftedAt.size));
  if (floor) {
    console.log(floorLine('pipeline', 'run', floor));
    console.log(ratioLine('pipeline CPU per e-mail', { cpu, units: draftedAt.size }, floor));
  }

  if (provider === 'imap') {
    const imap = await imapPhase(world, { emails, accounts: accountsCount, bulkPercent, settings });
    const perMin = (d: Driven) => Math.round((d.draftedAt.size / Math.max(1, d.end - d.start)) * 60_000);
    const cpuMs = (d: Driven) => (Object.values(d.cpu).reduce((a, b) => a + b, 0) / Math.max(1, d.draftedAt.size)).toFixed(1);
    console.log(`pipeline imap settled: ${imap.draftedAt.size} threads (${imap.mailServers})`);
    console.log(`pipeline imap: ${perMin(imap)} emails/min`);
    console.log(`pipeline imap ingest→settled p50: ${percentile(imap.latencies, 50)} ms`);
    console.log(`pipeline imap ingest→settled p95: ${percentile(imap.latencies, 95)} ms`);
    console.log(cpuPerEmailLine('pipeline imap', imap.cpu, imap.draftedAt.size));
    console.log(`pipeline provider: Gmail API ${perMin(driven)} emails/min, ${cpuMs(driven)} CPU ms/email; IMAP/SMTP ${perMin(imap)} emails/min, ${cpuMs(imap)} CPU ms/email (same run, same workers and server)`);
  }

  await world.close();
}

/**
 * The same mail through the IMAP/SMTP mailbox: a local Dovecot and Postfix (mail-servers/) with
 * one mailbox per account, the mail delivered through the MX port (SMTP → LMTP, as from the
 * Internet), the accounts stored as `accounts connect --imap` stores them, and the same burst of
 * ingests on the same workers. Dovecot's and Postfix's CPU is its own group (mail servers).
 */
async function imapPhase(
  world: BenchWorld,
  opts: { emails: number; accounts: number; bulkPercent: number; settings: ReturnType<typeof threadSettingsFromConfig> },
): Promise<Driven & { mailServers: string }> {
  const run = randomUUID().slice(0, 6);
  const users = Array.from({ length: opts.accounts }, (_, a) => ({ address: `pipeline-${run}-${a}@inbox.test`, password: randomUUID() }));
  const servers = await startMailServers({ user: users[0]!, others: users.slice(1) });
  try {
    const vault = new TokenVault(Buffer.from(world.cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
    const address = { host: servers.host, ca: servers.caPem };
    const accounts: { id: string; settings: ReturnType<typeof imapMailboxSettings> }[] = [];
    for (const u of users) {
      const mailServers: ImapServers = {
        imap: { server: { ...address, port: servers.imap.implicitTlsPort, tls: 'implicit' }, user: u.address },
        smtp: { server: { ...address, port: servers.smtp.submissionPort, tls: 'starttls' }, user: u.address },
      };
      const row = await world.prisma.account.create({ data: { email: u.address, provider: 'imap', mailServers, encryptedTokens: vault.sealJson({ password: u.password }) } });
      accounts.push({ id: row.id, settings: imapMailboxSettings(u.address, mailServers, { password: u.password }) });
    }
    const mx = createTransport({ host: servers.host, port: servers.smtp.mxPort, secure: false, tls: { ca: servers.caPem }, pool: true, maxConnections: 4, logger: false });
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < opts.emails) {
            const i = next++;
            const mail = mailOf(mailKind(i, opts.bulkPercent), i);
            await mx.sendMail({ ...mail, to: users[i % users.length]!.address, messageId: `<pipeline-${run}-${i}@bench.example>` });
          }
        }),
      );
    } finally {
      mx.close();
    }
    // Every message in its INBOX (LMTP delivery follows the SMTP answer), then the ids the mailbox gives them.
    const threads: { accountId: string; threadId: string; messageId: string }[] = [];
    for (const [a, account] of accounts.entries()) {
      const expected = Math.floor(opts.emails / accounts.length) + (a < opts.emails % accounts.length ? 1 : 0);
      const mailbox = await ImapMailbox.open(account.settings);
      try {
        for (let tries = 0; ; tries++) {
          const list = await mailbox.searchMessages({ in: 'INBOX', since: new Date(0), maxResults: 1_000_000 });
          if (list.messages.length >= expected || tries > 600) {
            for (const m of list.messages) threads.push({ accountId: account.id, threadId: m.threadId, messageId: m.id });
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        await mailbox.close();
      }
    }
    const driven = await drive(world, threads, opts.settings);
    return { ...driven, mailServers: `Dovecot ${servers.versions.dovecot}, Postfix ${servers.versions.postfix}` };
  } finally {
    await servers.stop();
  }
}
