import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from '../../src/db/client.js';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { applyMigrations } from '../../src/db/migrate.js';

const root = mkdtempSync(join(tmpdir(), 'embedded-postgres-test-'));
const dataDir = join(root, 'pglite');

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('startEmbeddedPostgres', () => {
  it('serves PGlite to Prisma and the migration runner, and keeps the data across restarts', async () => {
    const first = await startEmbeddedPostgres({ dataDir, port: 0 });
    let accountId: string;
    try {
      expect(first.url).toMatch(/^postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      expect(await applyMigrations(first.url)).not.toEqual([]);

      const prisma = createPrismaClient(first.url, { poolSize: EMBEDDED_POOL_SIZE });
      try {
        const account = await prisma.account.create({ data: { email: 'embedded@example.com' } });
        accountId = account.id;
        await prisma.thread.create({ data: { accountId, gmailThreadId: 't-1', state: 'new' } });
      } finally {
        await prisma.$disconnect();
      }
    } finally {
      await first.stop();
    }

    const second = await startEmbeddedPostgres({ dataDir, port: 0 });
    try {
      expect(await applyMigrations(second.url)).toEqual([]);
      const prisma = createPrismaClient(second.url, { poolSize: EMBEDDED_POOL_SIZE });
      try {
        const account = await prisma.account.findUniqueOrThrow({
          where: { email: 'embedded@example.com' },
          include: { threads: true },
        });
        expect(account.id).toBe(accountId);
        expect(account.threads.map((t) => t.gmailThreadId)).toEqual(['t-1']);
      } finally {
        await prisma.$disconnect();
      }
    } finally {
      await second.stop();
    }
  });

  it('refuses a data directory another server is using', async () => {
    const running = await startEmbeddedPostgres({ dataDir, port: 0 });
    try {
      await expect(startEmbeddedPostgres({ dataDir, port: 0 })).rejects.toThrow(/is in use by process/);
    } finally {
      await running.stop();
    }
  });

  it('fails clearly on a taken port and leaves the data directory usable', async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      await expect(startEmbeddedPostgres({ dataDir, port })).rejects.toThrow(`127.0.0.1:${port} is already in use`);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
    const server = await startEmbeddedPostgres({ dataDir, port });
    await server.stop();
  });

  it('answers several connections at once, one statement at a time', async () => {
    const server = await startEmbeddedPostgres({ dataDir: ':memory:', port: 0 });
    const pool = new pg.Pool({ connectionString: server.url, max: 4 });
    try {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          pool.query<{ n: number; s: string }>('SELECT $1::int AS n, repeat($2, $1::int) AS s', [i, 'x']),
        ),
      );
      expect(results.map((r) => r.rows[0])).toEqual(Array.from({ length: 40 }, (_, i) => ({ n: i, s: 'x'.repeat(i) })));
    } finally {
      await pool.end();
      await server.stop();
    }
  });
});
