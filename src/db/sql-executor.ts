// The database interface most modules use: run a parameterised statement and get its rows.
// Adapters for a node-postgres pool and for a Prisma client, so each process can share the pool it
// already has.
import type pg from 'pg';

export interface SqlExecutor {
  query<T extends Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]>;
}

export function pgExecutor(pool: pg.Pool | pg.Client): SqlExecutor {
  return {
    async query<T extends Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]> {
      const result = await pool.query(sql, params as unknown[]);
      return result.rows as T[];
    },
  };
}

/** Anything with Prisma's `$queryRawUnsafe` (a PrismaClient or a transaction client). */
export interface RawQueryable {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

export function prismaExecutor(prisma: RawQueryable): SqlExecutor {
  return {
    query<T extends Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]> {
      return prisma.$queryRawUnsafe<T[]>(sql, ...params);
    },
  };
}
