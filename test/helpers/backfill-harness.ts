// Everything a backfill test needs, all real: the dev server (global setup), the test database,
// the Gmail emulator over HTTP (googleapis), and "worker processes": each its own Temporal
// connection, Prisma pool, GmailAccounts and quota limiter, as separate processes would have.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { inject } from 'vitest';
import { registerAccount, type RegisteredAccount } from '../../src/sync/connect.js';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { createBackfillMailActivities } from '../../src/backfill/mail-activities.js';
import { createAlertDeliveryActivities } from '../../src/backfill/alert-delivery.js';
import { createBackfillStoreActivities, type BackfillAlertOptions } from '../../src/backfill/store-activities.js';
import { createBackfillHandoffActivities } from '../../src/backfill/handoff-activities.js';
import { loadConfig } from '../../src/config/env.js';
import { threadSettingsFromConfig } from '../../src/config/settings.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { startGmailEmulator, type GmailEmulatorOptions, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { QuotaLimiter, type QuotaLimiterOptions } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';
import { nodeEntryArgs } from '../../src/shared/node-entry.js';

const threadSettings = () => threadSettingsFromConfig(loadConfig({ LOG_LEVEL: 'warn' }));
/** Our workflow bundle (the run's prebuilt one: test/setup/workflow-bundles.ts). */
export function backfillBundle(): Promise<WorkflowBundleOption> {
  return getWorkflowBundle();
}

export interface WorkerProcess {
  limiter: QuotaLimiter;
  /** Gmail activities this process ran. */
  calls(): number;
  worker: Worker;
  /** Stops polling; in-flight activities are cancelled after a short grace time. */
  stop(): Promise<void>;
}

export interface BackfillHarness {
  emulator: RunningGmailEmulator;
  prisma: PrismaClient;
  client: Client;
  accountId: string;
  email: string;
  taskQueue: string;
  startProcess(limiter?: Partial<QuotaLimiterOptions>, options?: { shutdownGraceMs?: number }): Promise<WorkerProcess>;
  /**
   * A Gmail worker as a separate OS process (test/backfill/gmail-worker-process.ts) on the
   * `${taskQueue}-gmail` queue; stop() returns how many activities it ran.
   */
  spawnGmailProcess(limiter: QuotaLimiterOptions): Promise<{ stop(): Promise<number> }>;
  storedIds(): Promise<string[]>;
  /** Gmail access to the account as the worker processes have it (unmetered). */
  gmailAccounts(): GmailAccounts;
  /**
   * The user grants access again and `accounts connect` registers it (registerAccount: tokens,
   * labels, the account active, its waiting workflows told). The sync workflow it starts sits on a
   * queue no worker polls (this harness runs no sync) and is terminated at close.
   */
  reconnect(): Promise<RegisteredAccount>;
  close(): Promise<void>;
}

export async function createBackfillHarness(opts: {
  messages: number;
  spanDays?: number;
  emulator?: Omit<GmailEmulatorOptions, 'accounts'>;
  limiter?: Partial<QuotaLimiterOptions>;
  /** Backfill alerts: the metadata budget, and where and how often they are delivered (default: no Discord, one email an hour). */
  alerts?: Partial<BackfillAlertOptions> & { discordWebhookUrl?: string; emailEveryMs?: number };
}): Promise<BackfillHarness> {
  const tag = randomUUID().slice(0, 8);
  const email = `backfill-${tag}@example.com`;
  const emulator = await startGmailEmulator({
    ...opts.emulator,
    accounts: [{ email, seed: { count: opts.messages, spanDays: opts.spanDays ?? 30 } }],
  });
  const created = emulator.accounts[0]!;
  const databaseUrl = inject('databaseUrl');
  const prisma = createPrismaClient(databaseUrl);
  const tokenKey = randomBytes(32);
  const vault = new TokenVault(tokenKey);
  const account = await prisma.account.create({ data: { email, encryptedTokens: vault.seal({ refresh_token: created.refreshToken }) } });
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  const dataConverter = createDataConverter(fixedTestPayloadKeys());
  const client = new Client({ connection, dataConverter });
  const taskQueue = `backfill-${tag}`;
  const processes: Array<{ stop(): Promise<void> }> = [];
  const oauth = { clientId: created.clientId, clientSecret: created.clientSecret, tokenUrl: `${emulator.url}/token`, rootUrl: `${emulator.url}/` };

  const harness: BackfillHarness = {
    emulator,
    prisma,
    client,
    accountId: account.id,
    email,
    taskQueue,
    async startProcess(limiterOptions = {}, options = {}) {
      const processPrisma = createPrismaClient(databaseUrl, { poolSize: 4 });
      const nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
      const db = prismaExecutor(processPrisma);
      const limiter = new QuotaLimiter(db, { profile: 'legacy', ...opts.limiter, ...limiterOptions });
      const accounts = new GmailAccounts(processPrisma, vault, oauth, limiter.gateFor('bulk'));
      let calls = 0;
      const gmailActivities = createBackfillMailActivities({ accounts, concurrency: limiter.options.maxConcurrency, db });
      const counted = Object.fromEntries(
        Object.entries(gmailActivities).map(([name, fn]) => [
          name,
          (...args: unknown[]) => {
            calls++;
            return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
          },
        ]),
      );
      const worker = await Worker.create({
        connection: nativeConnection,
        taskQueue,
        workflowBundle: await backfillBundle(),
        activities: {
          ...createBackfillStoreActivities({ db, ...(opts.alerts ? { alerts: opts.alerts } : {}) }),
          ...createAlertDeliveryActivities({
            db,
            accounts,
            emailEveryMs: opts.alerts?.emailEveryMs ?? 3600_000,
            ...(opts.alerts?.discordWebhookUrl ? { discordWebhookUrl: opts.alerts.discordWebhookUrl } : {}),
          }),
          ...counted,
          ...createBackfillHandoffActivities({ db, client: async () => client, settings: threadSettings(), taskQueue: `${taskQueue}-threads` }),
        },
        dataConverter,
        shutdownGraceTime: options.shutdownGraceMs ?? 1000,
      });
      const running = worker.run();
      let stopped = false;
      const stop = async () => {
        if (stopped) return;
        stopped = true;
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
        await nativeConnection.close();
        await processPrisma.$disconnect();
      };
      processes.push({ stop });
      return { limiter, worker, stop, calls: () => calls };
    },
    async spawnGmailProcess(limiterOptions) {
      const child = spawn(process.execPath, nodeEntryArgs('test/helpers/backfill-gmail-worker-process.ts'), {
        cwd: fileURLToPath(new URL('../../', import.meta.url)),
        stdio: ['ignore', 'pipe', 'inherit'],
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          DATABASE_URL: databaseUrl,
          BACKFILL_GMAIL_QUEUE: `${taskQueue}-gmail`,
          BACKFILL_LIMITER: JSON.stringify(limiterOptions),
          BACKFILL_TOKEN_KEY: tokenKey.toString('base64'),
          BACKFILL_OAUTH: JSON.stringify(oauth),
        },
      });
      let output = '';
      child.stdout!.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: string) => {
          output += chunk;
          if (output.includes('ready')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`gmail worker process exited with ${code}`)));
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const stop = async () => {
        child.kill('SIGTERM');
        await exited;
        const last = output.trim().split('\n').at(-1) ?? '{}';
        return (JSON.parse(last) as { calls?: number }).calls ?? 0;
      };
      processes.push({ stop: async () => void (await stop().catch(() => 0)) });
      return { stop };
    },
    gmailAccounts: () => new GmailAccounts(prisma, vault, oauth),
    async reconnect() {
      const grant = await emulator.control.createAccount({ email, clientId: created.clientId });
      const sync = { client, taskQueue: `${taskQueue}-no-sync` };
      return registerAccount({ prisma, vault, oauth, sync, labels: threadSettings().labels }, { refresh_token: grant.refreshToken });
    },
    async storedIds() {
      const rows = await prisma.$queryRawUnsafe<Array<{ gmail_id: string }>>(`SELECT gmail_id FROM messages WHERE account_id = $1`, account.id);
      return rows.map((r) => r.gmail_id);
    },
    async close() {
      for (const p of processes) await p.stop();
      await client.workflow
        .getHandle(syncWorkflowId(account.id))
        .terminate('test over')
        .catch(() => undefined); // started only by reconnect()
      await connection.close();
      await prisma.$disconnect();
      await emulator.close();
    },
  };
  return harness;
}

/** What messages.list can see (no spam, no trash): what a backfill must store. */
export function listableMessages(emulator: RunningGmailEmulator, email: string): Array<{ id: string; internalDate: number; labelIds: string[] }> {
  return emulator.world
    .getAccount(email)
    .mailbox.allMessages()
    .filter((m) => !m.labelIds.includes('SPAM') && !m.labelIds.includes('TRASH'))
    .map((m) => ({ id: m.id, internalDate: m.internalDate, labelIds: [...m.labelIds] }));
}
