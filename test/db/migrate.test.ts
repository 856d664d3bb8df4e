import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations, MigrationError } from '../../src/db/migrate.js';
import { defaultMigrationsDir } from '../../src/db/paths.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';

const migrationNames = readdirSync(defaultMigrationsDir, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

let database: { url: string; drop(): Promise<void> };
let tempDirs: string[] = [];

beforeEach(async () => {
  database = await createScratchDatabase();
});

afterEach(async () => {
  await database.drop();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs = [];
});

async function query<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** A copy of the project's migrations that a test may change. */
function copyOfMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  tempDirs.push(dir);
  cpSync(defaultMigrationsDir, dir, { recursive: true });
  return dir;
}

function addMigration(dir: string, name: string, sql: string): void {
  mkdirSync(join(dir, name));
  writeFileSync(join(dir, name, 'migration.sql'), sql);
}

describe('applyMigrations', () => {
  it('applies every migration once, in order, and nothing on the second run', async () => {
    expect(migrationNames.length).toBeGreaterThan(0);
    expect(await applyMigrations(database.url)).toEqual(migrationNames);
    expect(await applyMigrations(database.url)).toEqual([]);

    const tables = await query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['accounts', 'threads', 'decisions', 'rules', 'token_usage', 'push_rejections']),
    );
  });

  it('keeps _prisma_migrations as prisma migrate deploy does', async () => {
    await applyMigrations(database.url);

    // Prisma's own DDL: the same columns, types, nullability and defaults.
    const columns = await query<{
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>(
      `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', is_nullable: 'NO', column_default: null },
      { column_name: 'checksum', data_type: 'character varying', is_nullable: 'NO', column_default: null },
      { column_name: 'finished_at', data_type: 'timestamp with time zone', is_nullable: 'YES', column_default: null },
      { column_name: 'migration_name', data_type: 'character varying', is_nullable: 'NO', column_default: null },
      { column_name: 'logs', data_type: 'text', is_nullable: 'YES', column_default: null },
      {
        column_name: 'rolled_back_at',
        data_type: 'timestamp with time zone',
        is_nullable: 'YES',
        column_default: null,
      },
      { column_name: 'started_at', data_type: 'timestamp with time zone', is_nullable: 'NO', column_default: 'now()' },
      { column_name: 'applied_steps_count', data_type: 'integer', is_nullable: 'NO', column_default: '0' },
    ]);

    const rows = await query<{
      id: string;
      checksum: string;
      finished_at: Date | null;
      migration_name: string;
      logs: string | null;
      rolled_back_at: Date | null;
      started_at: Date;
      applied_steps_count: number;
    }>('SELECT * FROM _prisma_migrations ORDER BY started_at');
    expect(rows.map((r) => r.migration_name)).toEqual(migrationNames);
    for (const row of rows) {
      const file = readFileSync(join(defaultMigrationsDir, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(file).digest('hex'));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.applied_steps_count).toBe(1);
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
    }
  });

  it('applies only the migrations added since the last run', async () => {
    const dir = copyOfMigrations();
    await applyMigrations(database.url, dir);
    addMigration(
      dir,
      '29991231235959_add_notes',
      'CREATE TABLE "notes" ("id" SERIAL PRIMARY KEY, "body" TEXT NOT NULL);\n',
    );

    expect(await applyMigrations(database.url, dir)).toEqual(['29991231235959_add_notes']);
    expect(await query('SELECT * FROM notes')).toEqual([]);
  });

  it('refuses to run when an applied migration was edited, but tolerates converted line endings', async () => {
    const dir = copyOfMigrations();
    const first = join(dir, migrationNames[0]!, 'migration.sql');
    await applyMigrations(database.url, dir);

    const original = readFileSync(first, 'utf8');
    writeFileSync(first, original.replaceAll('\n', '\r\n'));
    expect(await applyMigrations(database.url, dir)).toEqual([]);

    writeFileSync(first, `${original}\n-- an afterthought\n`);
    addMigration(dir, '29991231235959_add_notes', 'CREATE TABLE "notes" ("id" SERIAL PRIMARY KEY);\n');
    await expect(applyMigrations(database.url, dir)).rejects.toThrow(
      new RegExp(`modified after they were applied: ${migrationNames[0]}`),
    );
    expect(await query(`SELECT to_regclass('notes') AS t`)).toEqual([{ t: null }]);
  });

  it('refuses to run while a failed migration is unresolved', async () => {
    await applyMigrations(database.url);
    await query(
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, logs, started_at)
       VALUES ('00000000-0000-4000-8000-000000000000', $1, '29991231235959_broken', 'syntax error', now())`,
      ['0'.repeat(64)],
    );
    await expect(applyMigrations(database.url)).rejects.toThrow(
      /failed migrations.*\n.*29991231235959_broken.*syntax error/,
    );

    // Marked rolled back, as `prisma migrate resolve --rolled-back` does: runs again.
    await query(`UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = '29991231235959_broken'`);
    expect(await applyMigrations(database.url)).toEqual([]);
  });

  it('rolls a failing migration back entirely and records nothing for it', async () => {
    const dir = copyOfMigrations();
    addMigration(
      dir,
      '29991231235959_half_broken',
      'CREATE TABLE "notes" ("id" SERIAL PRIMARY KEY);\nALTER TABLE "no_such_table" ADD COLUMN "x" INT;\n',
    );

    const failure = await applyMigrations(database.url, dir).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(MigrationError);
    expect((failure as Error).message).toMatch(/29991231235959_half_broken failed and was rolled back.*no_such_table/);

    expect(await query(`SELECT to_regclass('notes') AS t`)).toEqual([{ t: null }]);
    const names = await query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations ORDER BY started_at',
    );
    expect(names.map((r) => r.migration_name)).toEqual(migrationNames);
  });

  it('lets concurrent runners apply each migration exactly once', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => applyMigrations(database.url)));

    expect(results.flat().sort()).toEqual(migrationNames);
    const rows = await query<{ migration_name: string; n: number }>(
      'SELECT migration_name, count(*)::int AS n FROM _prisma_migrations GROUP BY migration_name ORDER BY migration_name',
    );
    expect(rows).toEqual(migrationNames.map((migration_name) => ({ migration_name, n: 1 })));
  });

  it('will not lay its tables over a database that holds other tables', async () => {
    await query('CREATE TABLE someone_elses (id int)');
    await expect(applyMigrations(database.url)).rejects.toThrow(/not empty \(someone_elses/);
    expect(await query(`SELECT to_regclass('_prisma_migrations') AS t`)).toEqual([{ t: null }]);
  });
});
