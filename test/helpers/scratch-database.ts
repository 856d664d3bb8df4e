// Throwaway databases for tests that need an empty one, on the test database's server.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { withDatabaseName } from '../../src/db/connection-url.js';
import { dropDatabase, recreateDatabase } from '../setup/database.js';

/** Creates an empty database with a unique name; call the returned drop() when done. */
export async function createScratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const url = withDatabaseName(inject('databaseUrl'), `durable_inbox_scratch_test_${randomBytes(6).toString('hex')}`);
  await recreateDatabase(url);
  return { url, drop: () => dropDatabase(url) };
}

/** A URL naming a database that does not exist (yet), on the test database's server. */
export function unusedDatabaseUrl(): { url: string; drop(): Promise<void> } {
  const url = withDatabaseName(inject('databaseUrl'), `durable_inbox_scratch_test_${randomBytes(6).toString('hex')}`);
  return { url, drop: () => dropDatabase(url) };
}
