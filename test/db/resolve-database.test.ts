import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { DbLogger } from '../../src/db/db-logger.js';
import { readMigrationsDirectory } from '../../src/db/migrations-directory.js';
import { defaultMigrationsDir } from '../../src/db/paths.js';
import { postgresAnswers, resolveDatabase, type DatabaseSettings } from '../../src/db/resolve-database.js';
import { freePort } from '../../src/shared/free-port.js';
import { unusedDatabaseUrl } from '../helpers/scratch-database.js';

const root = mkdtempSync(join(tmpdir(), 'resolve-database-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function recordingLog(): DbLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m) };
}

/** Two different ports (the OS may hand out the same free port twice when nothing binds it in between). */
async function twoFreePorts(): Promise<[number, number]> {
  const first = await freePort();
  for (;;) {
    const second = await freePort();
    if (second !== first) return [first, second];
  }
}

const migrationCount = readMigrationsDirectory(defaultMigrationsDir).length;

/** Migrations recorded as applied, after checking that the initial tables are there. */
async function appliedMigrations(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT count(*) FROM accounts JOIN threads ON threads.account_id = accounts.id');
    const r = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL',
    );
    return r.rows[0]!.n;
  } finally {
    await client.end();
  }
}

const devDefaults: DatabaseSettings = {
  DATABASE_URL: undefined,
  EMBEDDED_POSTGRES: 'auto',
  EMBEDDED_POSTGRES_PORT: 0,
  DURABLE_INBOX_MODE: 'dev',
};

describe('resolveDatabase', () => {
  it('creates and migrates the configured database', async () => {
    const target = unusedDatabaseUrl();
    const log = recordingLog();
    try {
      const db = await resolveDatabase({ ...devDefaults, DATABASE_URL: target.url }, log);
      expect(db.source).toBe('configured');
      expect(db.url).toBe(target.url);
      expect(await appliedMigrations(target.url)).toBe(migrationCount);
      expect(log.lines[0]).toBe(`created database ${target.url}`);
      expect(log.lines.at(-1)).toBe(`applied ${migrationCount} migration(s)`);
      await db.stop();
    } finally {
      await target.drop();
    }
  });

  it('reports an unreachable configured database as an error, never falling back', async () => {
    const port = await freePort();
    await expect(
      resolveDatabase(
        { ...devDefaults, DATABASE_URL: `postgresql://postgres:secret@127.0.0.1:${port}/x` },
        recordingLog(),
      ),
    ).rejects.toThrow(new RegExp(`cannot connect to postgresql://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${port}/x`));
  });

  it('uses the local server when it answers', async () => {
    const local = unusedDatabaseUrl();
    try {
      const db = await resolveDatabase(devDefaults, recordingLog(), { localUrl: local.url });
      expect(db).toMatchObject({ source: 'local', url: local.url });
      expect(await appliedMigrations(local.url)).toBe(migrationCount);
    } finally {
      await local.drop();
    }
  });

  it('starts embedded PGlite when nothing answers in dev mode, and shares it with a second process', async () => {
    // Nothing may answer at the local address, also once the embedded server is up.
    const [localPort, embeddedPort] = await twoFreePorts();
    const localUrl = `postgresql://postgres@127.0.0.1:${localPort}/durable_inbox`;
    const settings = { ...devDefaults, EMBEDDED_POSTGRES_PORT: embeddedPort };
    const log = recordingLog();
    const embedded = await resolveDatabase(settings, log, { localUrl, embeddedDataDir: join(root, 'pglite') });
    try {
      expect(embedded).toMatchObject({ source: 'embedded', poolSize: expect.any(Number) as number });
      expect(embedded.url).toBe(`postgresql://postgres@127.0.0.1:${settings.EMBEDDED_POSTGRES_PORT}/postgres`);
      expect(log.lines[0]).toMatch(
        /^no PostgreSQL at 127\.0\.0\.1:\d+; started embedded PGlite at postgresql:\/\/.* \(data in /,
      );
      expect(await appliedMigrations(embedded.url)).toBe(migrationCount);

      const reused = await resolveDatabase(settings, recordingLog(), {
        localUrl,
        embeddedDataDir: join(root, 'other'),
      });
      expect(reused).toMatchObject({ source: 'embedded', url: embedded.url });
      await reused.stop(); // not its server: must leave it running
      expect(await postgresAnswers(embedded.url)).toBe(true);
    } finally {
      await embedded.stop();
    }
    expect(await postgresAnswers(embedded.url)).toBe(false);
  });

  it('does not start embedded PGlite when it is disabled or in production mode', async () => {
    const localUrl = `postgresql://postgres@127.0.0.1:${await freePort()}/durable_inbox`;
    await expect(
      resolveDatabase({ ...devDefaults, EMBEDDED_POSTGRES: 'never' }, recordingLog(), { localUrl }),
    ).rejects.toThrow(/no PostgreSQL at .*disabled by EMBEDDED_POSTGRES=never/);
    await expect(
      resolveDatabase({ ...devDefaults, DURABLE_INBOX_MODE: 'production' }, recordingLog(), { localUrl }),
    ).rejects.toThrow(/no PostgreSQL at .*only used in dev mode unless EMBEDDED_POSTGRES=always/);
  });
});
