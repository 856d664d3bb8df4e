// The test database: its own database on the local server (never the dev one), dropped and
// recreated on every run so each run starts from the migrations alone.
//   TEST_DATABASE_URL  overrides the default postgresql://postgres@127.0.0.1:5432/durable_inbox_test;
//                      its database name must contain "test", since it is dropped.
import pg from 'pg';
import { databaseNameOf, redactUrl, withDatabaseName } from '../../src/db/connection-url.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { DEFAULT_LOCAL_DATABASE_URL } from '../../src/db/resolve-database.js';

export const DEFAULT_TEST_DATABASE_URL = withDatabaseName(DEFAULT_LOCAL_DATABASE_URL, 'durable_inbox_test');

export async function prepareTestDatabase(): Promise<{ url: string }> {
  const url = process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
  const name = databaseNameOf(url);
  if (!/test/i.test(name)) {
    throw new Error(`refusing to drop database "${name}" for tests: its name must contain "test" (${redactUrl(url)})`);
  }
  const devUrls = [DEFAULT_LOCAL_DATABASE_URL, process.env.DATABASE_URL].filter((u): u is string => !!u);
  if (devUrls.some((dev) => sameDatabase(dev, url))) {
    throw new Error(`refusing to use the application database ${redactUrl(url)} for tests`);
  }
  await holdRunLock(url);
  await recreateDatabase(url);
  await applyMigrations(url);
  return { url };
}

/**
 * Several people (or agents) may run `npm test` on one machine at once: a run that dropped the
 * database under another would break it. So each run holds a session advisory lock, named after
 * the database, until its process exits; a second run waits for the first to finish.
 */
async function holdRunLock(url: string): Promise<void> {
  const name = databaseNameOf(url);
  const client = new pg.Client({ connectionString: withDatabaseName(url, 'postgres'), connectionTimeoutMillis: 5_000 });
  client.on('error', () => {}); // the server going away ends the run's tests anyway
  await client.connect();
  const key = ['durable-inbox test run', name].join(':');
  const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key]);
  if (!got.rows[0]?.ok) {
    console.log(`test database ${name} is in use by another test run; waiting for it to finish ...`);
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
  }
  // Held, not closed: released when this process exits. Unref'd so it does not keep it alive.
  (client as unknown as { connection: { stream: { unref(): void } } }).connection.stream.unref();
}

/** Drops (after disconnecting its other sessions) and creates the URL's database. */
export async function recreateDatabase(url: string): Promise<void> {
  await withMaintenanceClient(url, async (client, name) => {
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)}`);
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  });
}

/** Drops the URL's database if it exists, disconnecting its other sessions first. */
export async function dropDatabase(url: string): Promise<void> {
  await withMaintenanceClient(url, async (client, name) => {
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)}`);
  });
}

async function withMaintenanceClient(
  url: string,
  work: (client: pg.Client, name: string) => Promise<void>,
): Promise<void> {
  const maintenanceUrl = withDatabaseName(url, 'postgres');
  const client = new pg.Client({ connectionString: maintenanceUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `tests need PostgreSQL: cannot connect to ${redactUrl(maintenanceUrl)} (${(err as Error).message}). ` +
        `Start it, or set TEST_DATABASE_URL.`,
      { cause: err },
    );
  }
  try {
    await work(client, databaseNameOf(url));
  } finally {
    await client.end();
  }
}

function sameDatabase(a: string, b: string): boolean {
  const x = new URL(a);
  const y = new URL(b);
  const port = (u: URL) => u.port || '5432';
  const host = (h: string) => (h === 'localhost' ? '127.0.0.1' : h);
  return host(x.hostname) === host(y.hostname) && port(x) === port(y) && databaseNameOf(a) === databaseNameOf(b);
}
