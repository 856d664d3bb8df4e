// Prisma Client over node-postgres (Prisma 7 driver adapter: no native query engine).
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export { PrismaClient };

/** Enough for one process's workers and HTTP server; PostgreSQL's default limit is 100 in total. */
export const DEFAULT_POOL_SIZE = 10;

export interface PrismaClientOptions {
  /** Connections in the pool (default DEFAULT_POOL_SIZE); resolveDatabase() suggests one for the embedded server. */
  poolSize?: number;
}

/** A Prisma Client for `databaseUrl`. Call `$disconnect()` to close its pool. */
export function createPrismaClient(databaseUrl: string, options: PrismaClientOptions = {}): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  return new PrismaClient({ adapter });
}
