// The world most bench cases run in: a Temporal server (the dev server in memory unless the case
// brings one), the Gmail and Anthropic emulators in their own processes, the case's PostgreSQL
// database migrated and emptied, the workers' configuration, N emulated accounts, a client, and the
// workers (in this process unless the case brings its own). `close()` stops it all, in order.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { spawnAnthropicEmulator, type ChildAnthropicEmulator } from '../emulators/anthropic/index.js';
import { spawnGmailEmulator, type ChildGmailEmulator } from '../emulators/gmail/index.js';
import { loadConfig, type Env } from '../src/config/env.js';
import { createPrismaClient, type PrismaClient } from '../src/db/client.js';
import { ensureDatabase } from '../src/db/ensure-database.js';
import { applyMigrations } from '../src/db/migrate.js';
import { prismaExecutor, type SqlExecutor } from '../src/db/sql-executor.js';
import { createDataConverter } from '../src/temporal/data-converter.js';
import { startDevServer } from '../src/temporal/dev-server.js';
import { fixedTestPayloadKeys } from '../src/temporal/encryption-keys.js';
import { benchWorkerEnv, emulatedAccounts, startWorkersInProcess } from './worker-env.js';

/** A Temporal server a case runs on (startBenchTemporal's, or the dev server). */
export interface BenchTemporal {
  address: string;
  stop(): Promise<void>;
}

export interface BenchWorldOptions<T extends BenchTemporal = BenchTemporal> {
  /** The case: its database is durable_inbox_bench_<name> (BENCH_DATABASE_URL overrides) and its accounts' prefix. */
  name: string;
  accounts: number;
  llmLatencyMs: number;
  /** The Gmail emulator's flags (default: no quota). */
  gmailFlags?: string[];
  /** The case's own settings over the workers' environment. */
  env?: Record<string, string>;
  /** The case's Temporal server, made once the database URL is known (default: the dev server in memory). */
  temporal?: (databaseUrl: string) => Promise<T>;
  /** The case's workers (default: the three in this process), started by `startWorkers()`. */
  workers?: (world: { cfg: Env; env: Record<string, string>; databaseUrl: string; client: Client }) => Promise<{ stop(): Promise<void> }>;
  /** Start the workers now (default), or leave it to the case (`startWorkers()`), e.g. to time the burst from their start. */
  startWorkers?: boolean;
}

export interface BenchWorld<T extends BenchTemporal = BenchTemporal> {
  temporal: T;
  gmail: ChildGmailEmulator;
  anthropic: ChildAnthropicEmulator;
  databaseUrl: string;
  prisma: PrismaClient;
  db: SqlExecutor;
  env: Record<string, string>;
  cfg: Env;
  accounts: { id: string; email: string }[];
  client: Client;
  startWorkers(): Promise<void>;
  close(): Promise<void>;
}

export async function startBenchWorld<T extends BenchTemporal = BenchTemporal>(opts: BenchWorldOptions<T>): Promise<BenchWorld<T>> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? `postgresql://postgres@127.0.0.1:5432/durable_inbox_bench_${opts.name}`;
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, undefined, { info: () => undefined, warn: console.warn });
  // Without a factory T is BenchTemporal, which the dev server is.
  const temporal = opts.temporal ? await opts.temporal(databaseUrl) : ((await startDevServer({ port: 0, headless: true })) as unknown as T);
  const gmail = await spawnGmailEmulator(opts.gmailFlags ?? ['--no-quota']);
  const anthropic = await spawnAnthropicEmulator(['--latency-ms', String(opts.llmLatencyMs)]);
  const prisma = createPrismaClient(databaseUrl);
  await prisma.$executeRawUnsafe('TRUNCATE accounts CASCADE');
  const keys = fixedTestPayloadKeys();
  const env = {
    ...benchWorkerEnv({ temporalAddress: temporal.address, databaseUrl, keys, gmail: { ...gmail.details, url: gmail.url }, anthropic: { apiKey: 'bench', url: anthropic.url } }),
    LOG_LEVEL: 'error',
    ...opts.env,
  };
  const cfg = loadConfig(env);
  const accounts = await emulatedAccounts(gmail.control, prisma, cfg, `${opts.name}-${randomUUID().slice(0, 6)}`, opts.accounts);
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }), dataConverter: createDataConverter(keys) });
  let workers: { stop(): Promise<void> } | undefined;
  const world: BenchWorld<T> = {
    temporal,
    gmail,
    anthropic,
    databaseUrl,
    prisma,
    db: prismaExecutor(prisma),
    env,
    cfg,
    accounts,
    client,
    async startWorkers() {
      workers ??= opts.workers ? await opts.workers({ cfg, env, databaseUrl, client }) : await startWorkersInProcess(cfg, databaseUrl);
    },
    async close() {
      await workers?.stop();
      await client.connection.close();
      await prisma.$disconnect();
      await gmail.close();
      await anthropic.close();
      await temporal.stop();
    },
  };
  if (opts.startWorkers !== false) await world.startWorkers();
  return world;
}
