// What every worker process shares: one Temporal connection, one data converter (with the
// payload codec, so email content is encrypted in history), one Prisma client.
import { NativeConnection } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { Env } from '../config.js';
import { createPrismaClient, type PrismaClient } from '../db/client.js';
import { createDataConverter } from '../temporal/data-converter.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';

export interface WorkerContext {
  cfg: Env;
  connection: NativeConnection;
  dataConverter: DataConverter;
  prisma: PrismaClient;
  close(): Promise<void>;
}

export async function createWorkerContext(cfg: Env, databaseUrl: string): Promise<WorkerContext> {
  const connection = await NativeConnection.connect({ address: cfg.TEMPORAL_ADDRESS });
  const prisma = createPrismaClient(databaseUrl);
  const dataConverter = createDataConverter(await resolvePayloadKeys(cfg));
  return {
    cfg,
    connection,
    dataConverter,
    prisma,
    async close() {
      await prisma.$disconnect();
      await connection.close();
    },
  };
}
