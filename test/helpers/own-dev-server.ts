// A Temporal dev server of a test file's own, to stop and start again mid-test (the shared one the
// other files use must stay up): SQLite in a temporary directory, so Schedules, workflows and timers
// survive the restart, on a free port that stays the same so clients and workers reconnect to it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/shared/free-port.js';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server.js';

export interface OwnDevServer {
  /** host:port, the same across restarts (TEMPORAL_ADDRESS for the harness). */
  address: string;
  /** Stops the server (its state stays on disk). */
  stop(): Promise<void>;
  /** Starts it again on the same port and file; nothing when it is running. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

export async function startOwnDevServer(): Promise<OwnDevServer> {
  const dir = await mkdtemp(join(tmpdir(), 'own-dev-server-'));
  const port = await freePort();
  const options = { port, headless: true, dbFile: join(dir, 'temporal.db') };
  let server: DevServer | undefined = await startDevServer(options);
  const { address } = server;
  return {
    address,
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await startDevServer(options);
    },
    async close() {
      await server?.stop();
      server = undefined;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
