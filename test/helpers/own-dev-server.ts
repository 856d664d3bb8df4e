// A Temporal dev server of a test file's own, to stop and start again mid-test (the shared one the
// other files use must stay up): SQLite in a temporary directory, so Schedules, workflows and timers
// survive the restart, on a free port that stays the same so clients and workers reconnect to it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/shared/free-port.js';
import { startDevServer, type DevServer, type DevServerOptions } from '../../src/temporal/dev-server.js';

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

/**
 * startDevServer, tried again when the server exits during start-up. `temporal server start-dev`
 * takes free ports of its own for its internal services when it starts; another process of a busy
 * test run can bind one of them first, and the server then panics. A new start picks other ports.
 */
export async function startDevServerRetrying(options: DevServerOptions | (() => Promise<DevServerOptions>), attempts = 3): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServer(typeof options === 'function' ? await options() : options);
    } catch (err) {
      if (attempt >= attempts || !/exited during start-up/.test((err as Error).message)) throw err;
    }
  }
}

export async function startOwnDevServer(): Promise<OwnDevServer> {
  const dir = await mkdtemp(join(tmpdir(), 'own-dev-server-'));
  const dbFile = join(dir, 'temporal.db');
  let options: DevServerOptions | undefined;
  let server: DevServer | undefined = await startDevServerRetrying(async () => (options = { port: await freePort(), headless: true, dbFile }));
  const fixed = options!;
  const { address } = server;
  return {
    address,
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await startDevServerRetrying(fixed);
    },
    async close() {
      await server?.stop();
      server = undefined;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
