// What every worker process shares: one Temporal connection, one data converter (with the
// payload codec, so email content is encrypted in history), one PostgreSQL pool (Prisma on it, and
// raw statements straight on it), and one Gmail quota limiter (one bucket per account in Postgres,
// shared with every other process).
import type { Client } from '@temporalio/client';
import { NativeConnection, type ActivityInterceptorsFactory, type WorkerOptions } from '@temporalio/worker';
import { workerTracingOptions } from '../temporal/tracing.js';
import type { DataConverter } from '@temporalio/common';
import { quotaOptionsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { createDatabasePool, type PrismaClient } from '../db/client.js';
import { QuotaLimiter } from '../quota/limiter.js';
import { createOneClickClient, type OneClickClient } from '../outbound/one-click.js';
import { pgExecutor, type SqlExecutor } from '../db/sql-executor.js';
import { connectClient } from '../temporal/client.js';
import { temporalConnectionOptions } from '../temporal/connection.js';
import { createDataConverter } from '../temporal/data-converter.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';

export interface WorkerContext {
  cfg: Env;
  connection: NativeConnection;
  dataConverter: DataConverter;
  prisma: PrismaClient;
  /** Raw statements on the same pool as `prisma`. */
  sql: SqlExecutor;
  /** Every Gmail call of the process draws from it (thread, sync and backfill activities). */
  quota: QuotaLimiter;
  /** The one outbound HTTP client to strangers' servers (one-click unsubscribe); tests swap in one with their loopback allowance. */
  oneClick: OneClickClient;
  /** Interceptors around every activity of the Gmail and LLM workers (tests inject failures with one). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** A Temporal client (for activities that start or signal workflows), connected on first use. */
  client(): Promise<Client>;
  /** Runs `fn` when the context closes, before the pools (open IMAP connections, say). */
  onClose(fn: () => Promise<void>): void;
  close(): Promise<void>;
}

export async function createWorkerContext(cfg: Env, databaseUrl: string): Promise<WorkerContext> {
  const connection = await NativeConnection.connect(temporalConnectionOptions(cfg));
  const { pool, prisma } = createDatabasePool(databaseUrl, { poolSize: cfg.DATABASE_POOL_SIZE });
  const sql = pgExecutor(pool);
  const keys = await resolvePayloadKeys(cfg);
  const dataConverter = createDataConverter(keys);
  let client: Promise<Client> | undefined;
  const closers: Array<() => Promise<void>> = [];
  const ctx: WorkerContext = {
    cfg,
    connection,
    dataConverter,
    prisma,
    sql,
    quota: new QuotaLimiter(sql, quotaOptionsFromConfig(cfg)),
    oneClick: createOneClickClient(),
    client() {
      client ??= connectClient(cfg, keys);
      client.catch(() => (client = undefined));
      return client;
    },
    onClose(fn) {
      closers.push(fn);
    },
    async close() {
      for (const fn of closers.splice(0)) await fn().catch(() => undefined);
      ctx.oneClick.close();
      const connected = await client?.catch(() => undefined);
      await connected?.connection.close();
      await prisma.$disconnect();
      await pool.end();
      await connection.close();
    },
  };
  return ctx;
}

/** The workers' interceptors and sinks: tracing's (when on), then the context's own activity interceptors (tests). */
export function ioWorkerInterceptors(ctx: Pick<WorkerContext, 'activityInterceptors'>): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const tracing = workerTracingOptions();
  if (!ctx.activityInterceptors) return tracing;
  return { ...tracing, interceptors: { ...tracing.interceptors, activity: [...(tracing.interceptors?.activity ?? []), ...ctx.activityInterceptors] } };
}
