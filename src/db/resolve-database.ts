// Which PostgreSQL the application uses, decided once at start-up, and migrated before use:
//   1. DATABASE_URL when set (created if missing; any failure is an error),
//   2. else the local server at 127.0.0.1:5432 if it answers (database durable_inbox, created if missing),
//   3. else, when allowed (EMBEDDED_POSTGRES=auto in dev mode, or always), embedded PGlite
//      persisted in .data/pglite; or the one another of our processes already serves on its port.
import { relative } from 'node:path';
import pg from 'pg';
import { redactUrl } from './connection-url.js';
import type { DbLogger } from './db-logger.js';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres } from './embedded-postgres.js';
import { ensureDatabase } from './ensure-database.js';
import { applyMigrations } from './migrate.js';
import { defaultEmbeddedDataDir, defaultMigrationsDir, projectRoot } from './paths.js';

export const DEFAULT_LOCAL_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/durable_inbox';
const LOCAL_PROBE_TIMEOUT_MS = 1_500;

export type DatabaseSource = 'configured' | 'local' | 'embedded';

export interface ResolvedDatabase {
  url: string;
  source: DatabaseSource;
  /** Pool size suited to this server, for createPrismaClient (set for the embedded one). */
  poolSize?: number;
  /** Stops what resolveDatabase started (the embedded server); otherwise does nothing. */
  stop(): Promise<void>;
}

/** The database settings, named as the environment names them (src/config/env.ts reads them). */
export interface DatabaseSettings {
  DATABASE_URL?: string | undefined;
  EMBEDDED_POSTGRES: 'auto' | 'always' | 'never';
  EMBEDDED_POSTGRES_PORT: number;
  DURABLE_INBOX_MODE: 'dev' | 'production';
}

export interface ResolveDatabaseOptions {
  migrationsDir?: string;
  embeddedDataDir?: string;
  /** Where to look for a local server when DATABASE_URL is unset. */
  localUrl?: string;
}

const nothingToStop = async () => {};

export async function resolveDatabase(
  cfg: DatabaseSettings,
  log: DbLogger,
  options: ResolveDatabaseOptions = {},
): Promise<ResolvedDatabase> {
  const migrationsDir = options.migrationsDir ?? defaultMigrationsDir;

  if (cfg.DATABASE_URL) {
    await ensureAndMigrate(cfg.DATABASE_URL, 'configured', migrationsDir, log);
    return { url: cfg.DATABASE_URL, source: 'configured', stop: nothingToStop };
  }

  const localUrl = options.localUrl ?? DEFAULT_LOCAL_DATABASE_URL;
  if (await postgresAnswers(localUrl)) {
    await ensureAndMigrate(localUrl, 'local', migrationsDir, log);
    return { url: localUrl, source: 'local', stop: nothingToStop };
  }

  const local = new URL(localUrl).host;
  const embeddedAllowed =
    cfg.EMBEDDED_POSTGRES === 'always' || (cfg.EMBEDDED_POSTGRES === 'auto' && cfg.DURABLE_INBOX_MODE === 'dev');
  if (!embeddedAllowed) {
    throw new Error(
      `no PostgreSQL at ${local} and DATABASE_URL is not set; start PostgreSQL or set DATABASE_URL ` +
        `(embedded PGlite is ${cfg.EMBEDDED_POSTGRES === 'never' ? 'disabled by EMBEDDED_POSTGRES=never' : 'only used in dev mode unless EMBEDDED_POSTGRES=always'})`,
    );
  }

  const port = cfg.EMBEDDED_POSTGRES_PORT;
  const sharedUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  if (await postgresAnswers(sharedUrl)) {
    log.info(`no PostgreSQL at ${local}; using the embedded PGlite another process serves at ${sharedUrl}`);
    await applyAndReport(sharedUrl, migrationsDir, log);
    return { url: sharedUrl, source: 'embedded', poolSize: EMBEDDED_POOL_SIZE, stop: nothingToStop };
  }

  const dataDir = options.embeddedDataDir ?? defaultEmbeddedDataDir;
  const embedded = await startEmbeddedPostgres({ dataDir, port });
  log.warn(
    `no PostgreSQL at ${local}; started embedded PGlite at ${embedded.url} (data in ${relative(projectRoot, dataDir) || dataDir})`,
  );
  try {
    await applyAndReport(embedded.url, migrationsDir, log);
  } catch (err) {
    await embedded.stop().catch(() => {});
    throw err;
  }
  return { url: embedded.url, source: 'embedded', poolSize: EMBEDDED_POOL_SIZE, stop: embedded.stop };
}

async function ensureAndMigrate(
  url: string,
  source: DatabaseSource,
  migrationsDir: string,
  log: DbLogger,
): Promise<void> {
  if (await ensureDatabase(url)) log.info(`created database ${redactUrl(url)}`);
  else log.info(`using ${source} database ${redactUrl(url)}`);
  await applyAndReport(url, migrationsDir, log);
}

async function applyAndReport(url: string, migrationsDir: string, log: DbLogger): Promise<void> {
  const applied = await applyMigrations(url, migrationsDir, log);
  log.info(applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database schema is up to date');
}

/**
 * Whether a PostgreSQL server answers at the URL's host and port. Any reply from the server,
 * even an error such as "database does not exist", counts; refused or timed-out connections do not.
 */
export async function postgresAnswers(url: string, timeoutMs = LOCAL_PROBE_TIMEOUT_MS): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    return true;
  } catch (err) {
    // Errors the server sent carry a five-character SQLSTATE; socket errors carry ECONNREFUSED and the like.
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && /^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code); // no SQLSTATE class starts with E (EPIPE is not one)
  } finally {
    await client.end().catch(() => {});
  }
}
