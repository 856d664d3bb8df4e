// Start-up creates the schedules even when the Temporal server is not answering yet (a restarted
// dev server), and fails at once on an error that waiting cannot fix.
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { ensureSchedules, RETENTION_SCHEDULE_ID } from '../../src/schedules/schedules.js';
import { freePort } from '../../src/shared/free-port.js';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { waitUntil } from '../helpers/wait-until.js';

describe('ensureSchedules', () => {
  it('waits for a server that is still coming up, then creates the schedules', async () => {
    const port = await freePort();
    const connection = Connection.lazy({ address: `127.0.0.1:${port}`, connectTimeout: 1_000 });
    const client = new Client({ connection });
    const waits: string[] = [];
    let server: Awaited<ReturnType<typeof startDevServer>> | undefined;
    try {
      const ensured = ensureSchedules(client, { retentionDays: 30, idPrefix: 'late-' }, { waitMs: 90_000, attemptMs: 1_000, log: (m) => waits.push(m) });
      // The server comes up only after the first calls were refused.
      await waitUntil('a refused call', async () => waits.length > 0);
      server = await startDevServer({ port, headless: true });
      expect(await ensured).toEqual([`late-${RETENTION_SCHEDULE_ID}`]);
      expect(waits.length).toBeGreaterThan(0);
      expect(waits[0]).toMatch(/^schedule late-retention: the Temporal server is not ready/);
      const described = await client.schedule.getHandle(`late-${RETENTION_SCHEDULE_ID}`).describe();
      expect(described.action).toMatchObject({ workflowType: 'retentionWorkflow' });
    } finally {
      await connection.close();
      await server?.stop();
    }
  }, 120_000);

  it('gives up when the server does not come within the wait', async () => {
    const port = await freePort();
    const connection = Connection.lazy({ address: `127.0.0.1:${port}`, connectTimeout: 500 });
    try {
      const started = Date.now();
      await expect(ensureSchedules(new Client({ connection }), { retentionDays: 30 }, { waitMs: 2_000, attemptMs: 500 })).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await connection.close();
    }
  }, 30_000);
});
