// The Temporal server for a test run: a fresh in-memory dev server on a free port with our search
// attributes, or the server named by TEMPORAL_TEST_ADDRESS (e.g. one you keep running while iterating).
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '../../src/temporal/dev-server.js';
import { startDevServerRetrying } from '../helpers/own-dev-server.js';
import { freePort } from '../../src/shared/free-port.js';

export interface TestTemporal {
  address: string;
  stop(): Promise<void>;
}

export async function startTestTemporal(): Promise<TestTemporal> {
  const existing = process.env['TEMPORAL_TEST_ADDRESS'];
  if (existing) {
    const connection = await Connection.connect({ address: existing });
    try {
      await ensureSearchAttributes(connection, 'default');
    } finally {
      await connection.close();
    }
    return { address: existing, stop: async () => {} };
  }
  const server = await startDevServerRetrying(async () => ({
    port: await freePort(),
    headless: true,
    log: process.env['TEMPORAL_TEST_LOG'] ? (m: string) => console.error(`[temporal] ${m}`) : undefined,
  }));
  return { address: server.address, stop: () => server.stop() };
}
