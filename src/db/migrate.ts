// Applies prisma/migrations without Prisma's native schema engine (it cannot be downloaded
// offline), keeping `_prisma_migrations` exactly as `prisma migrate deploy` does, so either
// tool can take over from the other. Differences, both on the safe side: each migration runs
// in one transaction together with its bookkeeping row (a failure leaves no trace to resolve),
// and an applied migration whose file changed is refused instead of ignored.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { redactUrl } from './connection-url.js';
import { type DbLogger, silentDbLogger } from './db-logger.js';
import { checksumMatches, type MigrationFile, readMigrationsDirectory } from './migrations-directory.js';
import { defaultMigrationsDir } from './paths.js';

/** Prisma Migrate's advisory lock key: our runner and `prisma migrate deploy` exclude each other. */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;

/** Prisma's DDL for its bookkeeping table, verbatim (prisma-engines, sql-schema-connector, postgres flavour). */
export const PRISMA_MIGRATIONS_TABLE_DDL = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);
`;

const DUPLICATE_TABLE = '42P07';

export class MigrationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
}

/**
 * Applies the migrations in `migrationsDir` that the database has not applied yet, in name
 * order, and returns their names (empty when the database was up to date).
 * Refuses (MigrationError) when a migration failed earlier and was not resolved, or when an
 * applied migration's file no longer matches its recorded checksum.
 */
export async function applyMigrations(
  databaseUrl: string,
  migrationsDir: string = defaultMigrationsDir,
  log: DbLogger = silentDbLogger,
): Promise<string[]> {
  const migrations = readMigrationsDirectory(migrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (err) {
    throw new MigrationError(`cannot connect to ${redactUrl(databaseUrl)}: ${(err as Error).message}`, { cause: err });
  }
  // A broken connection must reject the pending query, not crash the process.
  client.on('error', () => {});
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
    try {
      await ensureMigrationsTable(client);
      const rows = (
        await client.query<MigrationRow>(
          `SELECT id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at
           FROM _prisma_migrations ORDER BY started_at`,
        )
      ).rows;
      checkHistory(rows, migrations);

      const applied = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
      const pending = migrations.filter((m) => !applied.has(m.name));
      const names: string[] = [];
      for (const migration of pending) {
        if (await applyOne(client, migration)) {
          log.info(`applied migration ${migration.name}`);
          names.push(migration.name);
        }
      }
      return names;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK_KEY]).catch(() => {});
    }
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureMigrationsTable(client: pg.Client): Promise<void> {
  const exists = await client.query<{ found: string | null }>(
    `SELECT to_regclass('_prisma_migrations')::text AS found`,
  );
  if (exists.rows[0]?.found) return;

  // Like Prisma (error P3005): never lay our tables over a database that already holds others,
  // e.g. a DATABASE_URL pointing at the wrong application's database.
  const others = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name LIMIT 5`,
  );
  if (others.rows.length > 0) {
    throw new MigrationError(
      `the database schema is not empty (${others.rows.map((r) => r.table_name).join(', ')}, ...) and has no ` +
        `_prisma_migrations table: refusing to apply migrations over unknown tables. Use an empty database, or ` +
        `baseline this one (https://pris.ly/d/migrate-baseline).`,
    );
  }
  try {
    await client.query(PRISMA_MIGRATIONS_TABLE_DDL);
  } catch (err) {
    // Created meanwhile by a runner the advisory lock did not hold back (embedded PGlite).
    if ((err as { code?: string }).code !== DUPLICATE_TABLE) throw err;
  }
}

function checkHistory(rows: MigrationRow[], migrations: MigrationFile[]): void {
  const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed.length > 0) {
    const details = failed
      .map(
        (r) =>
          `  ${r.migration_name} (started ${r.started_at.toISOString()})${r.logs?.trim() ? `: ${r.logs.trim()}` : ''}`,
      )
      .join('\n');
    throw new MigrationError(
      `found failed migrations in the database; new migrations will not be applied until they are resolved:\n${details}\n` +
        `Repair the database, then mark each one with \`npx prisma migrate resolve --rolled-back <name>\` ` +
        `(or --applied), or set rolled_back_at = now() on its _prisma_migrations row.`,
    );
  }

  const onDisk = new Map(migrations.map((m) => [m.name, m]));
  const changed = rows.filter((r) => {
    const file = onDisk.get(r.migration_name);
    return r.rolled_back_at === null && file !== undefined && !checksumMatches(file.script, r.checksum);
  });
  if (changed.length > 0) {
    throw new MigrationError(
      `applied migrations were modified after they were applied: ${changed.map((r) => r.migration_name).join(', ')}. ` +
        `Restore their migration.sql (git checkout) and put changes in a new migration (npm run db:migration:new -- <name>).`,
    );
  }
}

/** Runs one migration and its bookkeeping in a transaction; false when another runner got there first. */
async function applyOne(client: pg.Client, migration: MigrationFile): Promise<boolean> {
  await client.query('BEGIN');
  try {
    // Only needed where the advisory lock does not separate runners (embedded PGlite shares one session).
    const done = await client.query(
      'SELECT 1 FROM _prisma_migrations WHERE migration_name = $1 AND rolled_back_at IS NULL',
      [migration.name],
    );
    if (done.rowCount) {
      await client.query('ROLLBACK');
      return false;
    }
    const id = randomUUID();
    await client.query(
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, clock_timestamp())`,
      [id, migration.checksum, migration.name],
    );
    try {
      // No parameters: the simple query protocol, which accepts a script of many statements.
      await client.query(migration.script);
    } catch (err) {
      throw new MigrationError(
        `migration ${migration.name} failed and was rolled back (the database is as before): ${(err as Error).message}`,
        { cause: err },
      );
    }
    await client.query(
      `UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1, finished_at = clock_timestamp()
       WHERE id = $1`,
      [id],
    );
    await client.query('COMMIT');
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
