// Learning from the user (issue #27, #36; docs/learning.md): a simulated user with hidden habits of
// its own (bench/learning-user.ts) works through T threads on the real dev server, PostgreSQL, the
// Gmail emulator (mail, sends and corrections read by the sync) and the Anthropic emulator (latency 0;
// its stand-in words each lesson in one of several ways), and reviews the proposals after each block
// through the memory CLI, auto-accept on where --auto-accept says. Prints per block: the mean
// Levenshtein distance in characters between our draft and what the user sent, the share of drafts
// sent unedited, the scope leaks (drafts outside a scoped lesson's scope it changed: goal 0), and the
// triage corrections the user made in Gmail.
//   --threads T (200)  --block B (20)  --concurrency C (4): threads in flight at once
//   --auto-accept N (2; 0: off): typed lessons take hold alone after N confirmations
import { mailboxAccounts } from '../../src/accounts/mailbox-accounts.js';
import { loadavg } from 'node:os';
import { countFlag, wholeFlag } from '../args.js';
import { startBenchTemporal } from '../bench-kit.js';
import { HABITS, simulateUser } from '../learning-user.js';
import { emulatedAccounts, startWorkersInProcess, benchWorkerEnv } from '../worker-env.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { gmailOAuthSettings, threadSettingsFromConfig } from '../../src/config/settings.js';
import { loadConfig } from '../../src/config/env.js';
import { createPrismaClient } from '../../src/db/client.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { spawnAnthropicEmulator } from '../../emulators/anthropic/index.js';
import { spawnGmailEmulator } from '../../emulators/gmail/index.js';
import { connectClient } from '../../src/temporal/client.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { setLogLevel } from '../../src/shared/log.js';
import { installSdkLogging } from '../../src/workers/sdk-logging.js';

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export async function run(args: string[]): Promise<void> {
  const threads = wholeFlag(args, 'threads', 200);
  const block = wholeFlag(args, 'block', 20);
  const concurrency = wholeFlag(args, 'concurrency', 4);
  const autoAccept = countFlag(args, 'auto-accept', 2);
  setLogLevel('warn');
  installSdkLogging('error', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });

  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench_learning';
  const server = await startBenchTemporal(false, databaseUrl);
  console.log(`learning: ${threads} threads in blocks of ${block}, ${concurrency} at a time, auto-accept ${autoAccept ? `after ${autoAccept}` : 'off'}; ${server.what}; load average ${load()}`);
  console.log('learning: what this measures: the path from evidence to lesson to prompt to draft (workflows, PostgreSQL, Gmail, sync, CLI), with an emulated model: not how well a real model learns.');
  const gmail = await spawnGmailEmulator(['--no-quota']);
  const anthropic = await spawnAnthropicEmulator(['--latency-ms', '0']);
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, undefined, { info: () => undefined, warn: console.warn });
  const prisma = createPrismaClient(databaseUrl, { poolSize: 4 });
  // A fresh start: lessons of an earlier run and the rules they wrote would answer before the user teaches.
  await prisma.rule.deleteMany({ where: { scope: 'sender', scopeRef: { in: [HABITS.keepSender, HABITS.unlabelSender] } } });
  await prisma.$executeRawUnsafe('TRUNCATE accounts, lessons, writing_evidence CASCADE');
  const keys = fixedTestPayloadKeys();
  const env: Record<string, string> = {
    ...benchWorkerEnv({ temporalAddress: server.address, databaseUrl, keys, gmail: { ...gmail.details, url: gmail.url }, anthropic: { apiKey: 'bench', url: anthropic.url } }),
    LOG_LEVEL: 'error',
    DAILY_TOKEN_BUDGET: String(1e9), // the bench measures learning, not the budget
  };
  const cfg = loadConfig(env);
  const client = await connectClient(cfg, keys);
  const workers = await startWorkersInProcess(cfg, databaseUrl);
  try {
    const [account] = await emulatedAccounts(gmail.control, prisma, cfg, `learning-${Date.now()}`, 1);
    const vault = new TokenVault(Buffer.from(cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
    const world = {
      cfg, prisma, client, gmail, accountId: account!.id, email: account!.email, settings: threadSettingsFromConfig(cfg),
      accountGmail: () => new GmailAccounts(prisma, vault, gmailOAuthSettings(cfg)).forAccount(account!.id),
      gmailAccounts: () => new GmailAccounts(prisma, vault, gmailOAuthSettings(cfg)),
      mailboxAccounts: () => mailboxAccounts(prisma, vault, gmailOAuthSettings(cfg)),
    };
    console.log('learning: block  drafts  mean edit distance (chars, Levenshtein)  sent unedited  scope leaks (of drafts checked)  newsletters  triage corrections (Gmail)  lessons: accepted / rejected (CLI) / alone');
    const all = await simulateUser(world, {
      threads, block, concurrency, autoAcceptAfter: autoAccept || null,
      onBlock: (f) => {
        console.log(
          `learning: ${String(f.block).padStart(5)}  ${String(f.drafts).padStart(6)}  ${f.meanEditDistance.toFixed(1).padStart(39)}  ${`${(f.unedited * 100).toFixed(0)}%`.padStart(13)}  ` +
            `${`${f.scopeLeaks} (of ${f.outOfScopeDrafts})`.padStart(30)}  ${String(f.newsletters).padStart(11)}  ${String(f.corrections).padStart(26)}  ${f.accepted.length} / ${f.rejected.length} / ${f.alone.length} (${f.seconds.toFixed(0)} s)`,
        );
        for (const text of f.alone) console.log(`learning:        took hold alone: ${text}`);
        for (const text of f.accepted) console.log(`learning:        accepted (memory accept): ${text}`);
        for (const text of f.rejected) console.log(`learning:        rejected (memory reject): ${text}`);
      },
    });
    console.log(`learning: scope leaks in all: ${all.reduce((n, f) => n + f.scopeLeaks, 0)} of ${all.reduce((n, f) => n + f.outOfScopeDrafts, 0)} drafts to senders outside every scoped lesson (goal 0)`);
    console.log(`learning: done; load average ${load()}`);
  } finally {
    await workers.stop();
    await client.connection.close();
    await prisma.$disconnect();
    await anthropic.close();
    await gmail.close();
    await server.stop();
  }
}
