// Reads prisma/migrations the way Prisma Migrate does: one folder per migration, applied in
// name order (names start with a UTC timestamp), each holding migration.sql.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MigrationFile {
  /** The folder name, e.g. `20260101000000_init`; `_prisma_migrations.migration_name`. */
  name: string;
  path: string;
  script: string;
  /** sha256 of the script, lower-case hex: `_prisma_migrations.checksum`. */
  checksum: string;
}

export function migrationChecksum(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}

/**
 * Whether `script` matches a recorded checksum. Like Prisma, tolerant of the script's line
 * endings having been converted (git on Windows) and of the unpadded hex an old engine wrote.
 */
export function checksumMatches(script: string, recorded: string): boolean {
  const variants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return variants.some((variant) => {
    const digest = createHash('sha256').update(variant, 'utf8').digest();
    const hex = recorded.length === 64 ? digest.toString('hex') : [...digest].map((b) => b.toString(16)).join('');
    return hex === recorded;
  });
}

export function readMigrationsDirectory(migrationsDir: string): MigrationFile[] {
  if (!existsSync(migrationsDir)) throw new Error(`no migrations directory at ${migrationsDir}`);

  const lockFile = join(migrationsDir, 'migration_lock.toml');
  if (existsSync(lockFile)) {
    const provider = /^provider\s*=\s*"([^"]*)"/m.exec(readFileSync(lockFile, 'utf8'))?.[1];
    if (provider !== 'postgresql') {
      throw new Error(`${lockFile} names provider "${provider ?? '?'}"; these migrations are not for PostgreSQL`);
    }
  }

  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const path = join(migrationsDir, name, 'migration.sql');
      if (!existsSync(path)) throw new Error(`migration ${name} has no migration.sql (${path})`);
      const script = readFileSync(path, 'utf8');
      return { name, path, script, checksum: migrationChecksum(script) };
    });
}
