// Prisma Client over node-postgres (Prisma 7 driver adapter: no native query engine).
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { createLogger } from '../shared/log.js';

const log = createLogger('db');

export { PrismaClient };

/** Enough for one process's workers and HTTP server; PostgreSQL's default limit is 100 in total. */
export const DEFAULT_POOL_SIZE = 10;

export interface PrismaClientOptions {
  /** Connections in the pool (default DEFAULT_POOL_SIZE); resolveDatabase() suggests one for the embedded server. */
  poolSize?: number;
}

/** A Prisma Client for `databaseUrl`. Call `$disconnect()` to close its pool. */
export function createPrismaClient(databaseUrl: string, options: PrismaClientOptions = {}): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(poolConfig(databaseUrl, options)) });
}

/**
 * A node-postgres pool and a Prisma Client on it: Prisma for the models, the pool for the raw
 * statements on the hot path (a raw statement through Prisma costs about three times the CPU).
 * Close with `pool.end()` after `prisma.$disconnect()`.
 */
export function createDatabasePool(databaseUrl: string, options: PrismaClientOptions = {}): { pool: pg.Pool; prisma: PrismaClient } {
  const pool = new pg.Pool(poolConfig(databaseUrl, options));
  // An idle connection PostgreSQL ends (a restart, a dropped database) errs on the pool: without a
  // listener that would end the process. The pool opens a new connection when one is next needed.
  pool.on('error', (err) => log.warn(`an idle PostgreSQL connection ended: ${err.message}`));
  return { pool, prisma: new PrismaClient({ adapter: new PrismaPg(pool) }) };
}

function poolConfig(databaseUrl: string, options: PrismaClientOptions): pg.PoolConfig {
  return {
    connectionString: databaseUrl,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  };
}
