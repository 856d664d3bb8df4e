// Creates the target database when the server has no database of that name yet.
import pg from 'pg';
import { databaseNameOf, redactUrl, withDatabaseName } from './connection-url.js';

const INVALID_CATALOG_NAME = '3D000'; // "database ... does not exist"
const DUPLICATE_DATABASE = '42P04';
const OBJECT_IN_USE = '55006'; // template1 busy: another CREATE DATABASE is running

function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

async function canConnect(databaseUrl: string, connectionTimeoutMillis: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis });
  try {
    await client.connect();
    return true;
  } catch (err) {
    if (pgCode(err) === INVALID_CATALOG_NAME) return false;
    throw new Error(`cannot connect to ${redactUrl(databaseUrl)}: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Makes sure the database named in `databaseUrl` exists, creating it through the server's
 * `postgres` maintenance database when it does not. Returns whether it created it.
 * Connection and permission problems are thrown, with the password redacted.
 */
export async function ensureDatabase(databaseUrl: string, connectionTimeoutMillis = 10_000): Promise<boolean> {
  if (await canConnect(databaseUrl, connectionTimeoutMillis)) return false;

  const database = databaseNameOf(databaseUrl);
  const maintenanceUrl = withDatabaseName(databaseUrl, 'postgres');
  const client = new pg.Client({ connectionString: maintenanceUrl, connectionTimeoutMillis });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `database "${database}" does not exist and the maintenance database at ${redactUrl(maintenanceUrl)} ` +
        `is unreachable to create it: ${(err as Error).message}`,
      { cause: err },
    );
  }
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
        return true;
      } catch (err) {
        // Someone else created it between our check and now: it exists, which is all we want.
        if (pgCode(err) === DUPLICATE_DATABASE) return false;
        if (pgCode(err) === OBJECT_IN_USE && attempt < 10) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          continue;
        }
        throw new Error(`cannot create database "${database}": ${(err as Error).message}`, { cause: err });
      }
    }
  } finally {
    await client.end().catch(() => {});
  }
}
