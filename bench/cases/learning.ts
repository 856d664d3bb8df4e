// Learning from the user (issue #27, docs/learning.md): a simulated user with hidden habits
// (bench/learning-user.ts) works through T threads on the real dev server, PostgreSQL, and the Gmail
// and Anthropic emulators (latency 0), accepting every lesson proposed after each block. Prints per
// block: the mean Levenshtein distance in characters between our draft and what the user sent, the
// share of drafts sent unedited, and the triage corrections the user needed to make.
//   --threads T (200)  --block B (20)  --concurrency C (4): threads in flight at once
import { loadavg } from 'node:os';
import { wholeFlag } from '../args.js';
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
  setLogLevel('warn');
  installSdkLogging('error', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });

  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench_learning';
  const server = await startBenchTemporal(false, databaseUrl);
  console.log(`learning: ${threads} threads in blocks of ${block}, ${concurrency} at a time; ${server.what}; load average ${load()}`);
  const gmail = await spawnGmailEmulator(['--no-quota']);
  const anthropic = await spawnAnthropicEmulator(['--latency-ms', '0']);
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, undefined, { info: () => undefined, warn: console.warn });
  const prisma = createPrismaClient(databaseUrl, { poolSize: 4 });
  // A fresh start: lessons of an earlier run and the rules they wrote would answer before the user teaches.
  await prisma.rule.deleteMany({ where: { scope: 'sender', scopeRef: { in: [HABITS.keepSender, HABITS.protectedSender] } } });
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
    };
    console.log('learning: block  drafts  mean edit distance (chars, Levenshtein)  sent unedited  newsletters  triage corrections  lessons accepted after it');
    await simulateUser(world, {
      threads, block, concurrency,
      onBlock: (f) => {
        console.log(
          `learning: ${String(f.block).padStart(5)}  ${String(f.drafts).padStart(6)}  ${f.meanEditDistance.toFixed(1).padStart(39)}  ${`${(f.unedited * 100).toFixed(0)}%`.padStart(13)}  ` +
            `${String(f.newsletters).padStart(11)}  ${String(f.corrections).padStart(18)}  ${f.accepted.length} (${f.seconds.toFixed(0)} s)`,
        );
        for (const text of f.accepted) console.log(`learning:        accepted: ${text}`);
      },
    });
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
