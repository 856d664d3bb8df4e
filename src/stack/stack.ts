// The production shape on one machine: the Temporal server on PostgreSQL (not the dev server), the
// codec server, the workers as separate OS processes (several per role), the HTTP server and the
// schedules. `npm run stack` runs it against the emulators or real Gmail and Anthropic; the stack
// tests run their scenarios on it. The app database and the emulators are the caller's.
import type { Client } from '@temporalio/client';
import { temporalServerOverridesFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import type { CodecServer } from '../codec-server/server.js';
import { createPrismaClient, type PrismaClient } from '../db/client.js';
import { withDatabaseName, databaseNameOf } from '../db/connection-url.js';
import { ensureAppSchedules, startAppCodecServer, startAppHttpServer } from '../dev/app-services.js';
import type { HttpServer } from '../shared/http-server.js';
import type { Logger } from '../shared/log.js';
import { connectClient } from '../temporal/client.js';
import { temporalConnectionEnv } from '../temporal/connection.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { DEFAULT_TEMPORAL_DATABASE_URL, startTemporalServer, type TemporalServer, type TemporalServerOptions } from '../temporal/server.js';
import type { TlsCertificates } from '../temporal/tls-certificates.js';
import { WorkerProcesses, type WorkerProcessesOptions } from './worker-processes.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface StackOptions {
  /** The configuration (its TEMPORAL_ADDRESS port is the server's frontend port; 0 = free ports). */
  cfg: Env;
  /** The raw environment the configuration came from: the worker processes load theirs from it. */
  env: Record<string, string>;
  /** The app database, migrated. */
  databaseUrl: string;
  /** Default STACK_WORKERS_PER_ROLE. */
  workersPerRole?: WorkerProcessesOptions['perRole'];
  /** Server options beyond those the configuration gives (binaries, ports, headless...). */
  server?: Omit<TemporalServerOptions, 'databaseUrl' | 'namespace' | 'codecEndpoint' | 'overrides' | 'log' | 'tls'>;
  /** mTLS on the server's frontend with these certificates; every client of the stack presents the client one. */
  tls?: TlsCertificates;
  /** Each worker process's output line. */
  workerOutput?: WorkerProcessesOptions['output'];
  log?: Logger;
}

export interface Stack {
  /** The configuration as running (TEMPORAL_ADDRESS is the server's). */
  cfg: Env;
  server: TemporalServer;
  workers: WorkerProcesses;
  codecServer: CodecServer;
  http: HttpServer;
  client: Client;
  prisma: PrismaClient;
  schedules: string[];
  /** Stops the Temporal server and starts it again on the same databases and ports. */
  restartServer(): Promise<void>;
  /** Everything this started, last first. */
  stop(): Promise<void>;
}

/** The Temporal server's persistence database: TEMPORAL_DATABASE_URL, else `temporal` beside the app's. */
export function temporalDatabaseUrl(cfg: Pick<Env, 'TEMPORAL_DATABASE_URL'>, appDatabaseUrl: string): string {
  if (cfg.TEMPORAL_DATABASE_URL) return cfg.TEMPORAL_DATABASE_URL;
  return withDatabaseName(appDatabaseUrl, databaseNameOf(DEFAULT_TEMPORAL_DATABASE_URL));
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const log = opts.log ?? silent;
  const started: { name: string; stop: () => Promise<void> }[] = [];
  const stop = async () => {
    for (const { name, stop } of started.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        log.warn(`stopping ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  try {
    const keys = await resolvePayloadKeys(opts.cfg);
    const uiPort = opts.server?.uiPort ?? opts.cfg.TEMPORAL_UI_PORT;
    const codecServer = await startAppCodecServer(opts.cfg, keys, uiPort);
    started.push({ name: 'codec server', stop: () => codecServer.close() });

    const serverOptions: TemporalServerOptions = {
      port: Number(opts.cfg.TEMPORAL_ADDRESS.split(':')[1]),
      uiPort,
      ...opts.server,
      databaseUrl: temporalDatabaseUrl(opts.cfg, opts.databaseUrl),
      namespace: opts.cfg.TEMPORAL_NAMESPACE,
      codecEndpoint: codecServer.url,
      overrides: temporalServerOverridesFromConfig(opts.cfg),
      ...(opts.tls ? { tls: opts.tls } : {}),
      log: (m) => log.info(m),
    };
    let server = await startTemporalServer(serverOptions);
    started.push({ name: 'Temporal server', stop: () => server.stop() });
    const cfg: Env = { ...opts.cfg, TEMPORAL_ADDRESS: server.address, ...(opts.tls ? clientTlsSettings(opts.tls) : {}) };

    const workers = new WorkerProcesses({
      env: { ...opts.env, DATABASE_URL: opts.databaseUrl, ...temporalConnectionEnv(cfg) },
      perRole: opts.workersPerRole ?? opts.cfg.STACK_WORKERS_PER_ROLE,
      output: opts.workerOutput,
      ...(opts.cfg.METRICS_PORT > 0 && opts.cfg.TEMPORAL_METRICS_PORT > 0 ? { metricsPorts: { ours: opts.cfg.METRICS_PORT, sdk: opts.cfg.TEMPORAL_METRICS_PORT } } : {}),
    });
    workers.startAll();
    started.push({ name: 'workers', stop: () => workers.stopAll() });

    const client = await connectClient(cfg, keys);
    started.push({ name: 'Temporal client', stop: () => client.connection.close() });
    const prisma = createPrismaClient(opts.databaseUrl);
    started.push({ name: 'database client', stop: () => prisma.$disconnect() });

    const http = await startAppHttpServer(cfg, { prisma, client });
    started.push({ name: 'HTTP server', stop: () => http.close() });
    const schedules = await ensureAppSchedules(client, cfg, log);

    return {
      cfg,
      get server() {
        return server;
      },
      workers,
      codecServer,
      http,
      client,
      prisma,
      schedules,
      async restartServer() {
        const { ports, visibilityDatabase } = server;
        const uiPort = server.uiUrl ? Number(new URL(server.uiUrl).port) : undefined;
        await server.stop();
        log.info('Temporal server stopped; starting it again on the same databases and ports');
        server = await startTemporalServer({ ...serverOptions, ports, visibilityDatabase, uiPort });
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The TEMPORAL_TLS_* settings of a client of the stack's server (workers, CLI, HTTP server). */
export function clientTlsSettings(tls: TlsCertificates) {
  return {
    TEMPORAL_TLS: true,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caCert,
    TEMPORAL_TLS_CLIENT_CERT_PATH: tls.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: tls.clientKey,
    // The name in the server certificate: a TLS server name cannot be an IP address (RFC 6066).
    TEMPORAL_TLS_SERVER_NAME: 'localhost',
  };
}
