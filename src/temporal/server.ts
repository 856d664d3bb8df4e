// A real Temporal server (v1.30.9, the production shape) on PostgreSQL, as a child process bound to
// us: schemas set up with temporal-sql-tool, our config template (deploy/temporal/server.yaml, the
// same file docker-compose.yml mounts) rendered by the server from the environment we give it, the
// `default` namespace and our search attributes registered over the API, and optionally the Web UI
// (ui-server v2) with the codec endpoint. Used by `npm run temporal:server`, the tests, and
// `npm run stack` (src/stack/stack.ts). With `tls`, the frontend requires mTLS: clients present a
// certificate our CA signed (src/temporal/tls-certificates.ts), the Web UI and the server's own system
// worker included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer } from 'node:net';
import { Connection, isGrpcServiceError, type TLSConfig } from '@temporalio/client';
// @temporalio/proto is CommonJS without named-export hints: under ESM only its default export exists.
import proto from '@temporalio/proto';
import { databaseNameOf, redactUrl } from '../db/connection-url.js';
import { spawnBoundToUs, type BoundChild } from '../shared/bound-child.js';
import { untilFrontendAnswers } from './frontend-ready.js';
import { freePort } from '../shared/free-port.js';
import { ensureSearchAttributes } from './dev-server.js';
import { projectRoot } from './project-root.js';
import { searchAttributeDefinitions } from './search-attributes.js';
import {
  resolveTemporalServer,
  resolveTemporalUiServer,
  TEMPORAL_SERVER_VERSION,
  type TemporalServerBinaries,
  type TemporalServerOverrides,
} from './server-binary.js';
import { postgresTarget, setupTemporalSchemas } from './server-schema.js';
import type { TlsCertificates } from './tls-certificates.js';

const HOST = '127.0.0.1';
const GRPC_ALREADY_EXISTS = 6;
const GRPC_NOT_FOUND = 5;
const DEFAULT_START_TIMEOUT_MS = 90_000;
/** The server refreshes its namespace caches (custom search attributes included) this often. */
const NAMESPACE_CACHE_REFRESH_MS = 2_000;

export const DEFAULT_TEMPORAL_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/temporal';

export function temporalServerConfigFile(): string {
  return join(projectRoot(), 'deploy', 'temporal', 'server.yaml');
}
export function temporalDynamicConfigFile(): string {
  return join(projectRoot(), 'deploy', 'temporal', 'dynamicconfig.yaml');
}

/** Every port the server listens on (all on 127.0.0.1). */
export interface TemporalServerPorts {
  frontendGrpc: number;
  frontendHttp: number;
  frontendMembership: number;
  historyGrpc: number;
  historyMembership: number;
  matchingGrpc: number;
  matchingMembership: number;
  workerGrpc: number;
  workerMembership: number;
}

export interface TemporalServerOptions {
  /** The persistence database (created if missing); default postgresql://postgres@127.0.0.1:5432/temporal. */
  databaseUrl?: string;
  /** The visibility database on the same PostgreSQL (default `<persistence database>_visibility`). */
  visibilityDatabase?: string;
  /**
   * Frontend gRPC port (default 7233; 0 = a free one). The other services use Temporal's usual
   * layout around it (7234, 7235, 7239; membership 6933...; HTTP 7243), or free ports with 0.
   */
  port?: number;
  /** All ports explicitly, e.g. `previous.ports` to restart a server as it was. Wins over `port`. */
  ports?: TemporalServerPorts;
  /** No Web UI. */
  headless?: boolean;
  /** Web UI port (default port + 1000, 0 = a free one). */
  uiPort?: number;
  /** Codec server URL the Web UI (the user's browser) calls to show decrypted payloads. */
  codecEndpoint?: string;
  /** Origins allowed to call the Web UI's API (default its own). */
  uiCorsOrigins?: string[];
  namespace?: string;
  /** Retention of closed workflows when we create the namespace (default 30 days). */
  retentionDays?: number;
  /** Fixed once the database is set up (default 4, as Temporal's docker image). */
  numHistoryShards?: number;
  /** Server log level (default warn; its lines go to `log`). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Already resolved binaries (default: resolveTemporalServer, building them if needed). */
  binaries?: TemporalServerBinaries;
  /** The binary settings (TEMPORAL_SERVER_BIN, ...), when binaries are resolved here. */
  overrides?: TemporalServerOverrides;
  startTimeoutMs?: number;
  log?: (m: string) => void;
  /** Connections the server keeps to each database at most (defaults: 20 persistence, 10 visibility). */
  sqlMaxConns?: { persistence: number; visibility: number };
  /** mTLS on the frontend with these certificates (default: plaintext). */
  tls?: TlsCertificates;
}

export interface TemporalServer {
  /** host:port for Connection / NativeConnection / `temporal --address`. */
  address: string;
  /** With mTLS: what a client connects with (our CA, the client certificate). */
  clientTls: TLSConfig | null;
  namespace: string;
  uiUrl: string | null;
  ports: TemporalServerPorts;
  databaseUrl: string;
  visibilityDatabase: string;
  /** Milliseconds from spawn to "namespace and search attributes ready" (schema set-up excluded). */
  startupMs: number;
  /**
   * Resolves if the server or the Web UI exits without stop() (a crash), with the last lines of its
   * output; never resolves after stop(). For a supervisor (e.g. `npm run stack`) to notice.
   */
  crashed: Promise<string>;
  /** Stops the Web UI and the server (their process groups); never leaves either behind. */
  stop(): Promise<void>;
}

export class TemporalServerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TemporalServerError';
  }
}

export async function startTemporalServer(opts: TemporalServerOptions = {}): Promise<TemporalServer> {
  const log = opts.log ?? (() => {});
  const namespace = opts.namespace ?? 'default';
  const databaseUrl = opts.databaseUrl ?? DEFAULT_TEMPORAL_DATABASE_URL;
  const database = databaseNameOf(databaseUrl);
  const visibilityDatabase = opts.visibilityDatabase ?? `${database}_visibility`;
  const binaries = opts.binaries ?? (await resolveTemporalServer({ log, overrides: opts.overrides }));
  if (!binaries) {
    throw new TemporalServerError(
      `no Temporal server ${TEMPORAL_SERVER_VERSION} binary and no Go toolchain to build one: install Go, ` +
        'or set TEMPORAL_SERVER_BIN, TEMPORAL_SQL_TOOL_BIN and TEMPORAL_SCHEMA_DIR',
    );
  }

  await setupTemporalSchemas({
    sqlTool: binaries.sqlTool,
    schemaDir: binaries.schemaDir,
    databaseUrl,
    visibilityDatabase,
    log,
  });

  const ports = opts.ports ?? (await choosePorts(opts.port ?? 7233));
  const address = `${HOST}:${ports.frontendGrpc}`;
  const clientTls = opts.tls ? clientTlsConfig(opts.tls) : null;
  const pg = postgresTarget(databaseUrl);
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    LOG_LEVEL: opts.logLevel ?? 'warn',
    NUM_HISTORY_SHARDS: String(opts.numHistoryShards ?? 4),
    DBNAME: database,
    VISIBILITY_DBNAME: visibilityDatabase,
    POSTGRES_SEEDS: pg.host,
    DB_PORT: String(pg.port),
    POSTGRES_USER: pg.user,
    POSTGRES_PWD: pg.password,
    SQL_MAX_CONNS: String(opts.sqlMaxConns?.persistence ?? 20),
    SQL_MAX_IDLE_CONNS: String(opts.sqlMaxConns?.persistence ?? 20),
    SQL_VIS_MAX_CONNS: String(opts.sqlMaxConns?.visibility ?? 10),
    SQL_VIS_MAX_IDLE_CONNS: String(opts.sqlMaxConns?.visibility ?? 10),
    BIND_ON_IP: HOST,
    TEMPORAL_BROADCAST_ADDRESS: HOST,
    PROMETHEUS_ENDPOINT: '',
    FRONTEND_GRPC_PORT: String(ports.frontendGrpc),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_GRPC_PORT: String(ports.historyGrpc),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_GRPC_PORT: String(ports.matchingGrpc),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_GRPC_PORT: String(ports.workerGrpc),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: temporalDynamicConfigFile(),
    ...(opts.tls ? serverTlsEnv(opts.tls) : {}),
  };
  const args = ['--config-file', temporalServerConfigFile(), '--allow-no-auth', 'start'];
  log(
    `starting Temporal server ${TEMPORAL_SERVER_VERSION} on ${address}${opts.tls ? ' (mTLS)' : ''} ` +
      `(PostgreSQL ${redactUrl(databaseUrl)}, visibility database ${visibilityDatabase})`,
  );
  const started = Date.now();
  const server = spawnBoundToUs(binaries.server, args, {
    env,
    log: (line) => log(`temporal-server: ${line}`),
    formatLine: compactServerLogLine,
  });
  let ui: BoundChild | null = null;
  const stopAll = async () => {
    await ui?.stop();
    await server.stop();
  };
  try {
    // Every step below would otherwise wait out its own timeout if the server died under it.
    const diedDuringStartup = server.exited.then(() => {
      throw new TemporalServerError(`Temporal server exited during start-up:\n${server.outputTail()}`);
    });
    diedDuringStartup.catch(() => {}); // also rejects after a later stop(): nobody waits for it then
    const startup = (async () => {
      await untilFrontendAnswers({
        address,
        tls: clientTls,
        server,
        what: 'Temporal server',
        timeoutMs: opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
        everyMs: 250,
        probe: (connection) => connection.workflowService.getSystemInfo({}),
        error: (message) => new TemporalServerError(message),
      });
      await ensureNamespace({ address, tls: clientTls }, namespace, opts.retentionDays ?? 30, log);
      await waitForHistoryAndMatching({ address, tls: clientTls }, namespace);
    })();
    startup.catch(() => {}); // when the server died first, this fails later, unheard
    await Promise.race([diedDuringStartup, startup]);
    const startupMs = Date.now() - started;
    log(`Temporal server ready on ${address} in ${startupMs} ms`);

    let uiUrl: string | null = null;
    if (!opts.headless) {
      const uiPort = opts.uiPort === 0 ? await freePort() : (opts.uiPort ?? ports.frontendGrpc + 1000);
      const started = await startWebUi({
        address,
        namespace,
        uiPort,
        codecEndpoint: opts.codecEndpoint,
        corsOrigins: opts.uiCorsOrigins,
        overrides: opts.overrides,
        tls: opts.tls,
        log,
      });
      ui = started.ui;
      uiUrl = started.url;
    }
    let stopped = false;
    const crashed = new Promise<string>((resolve) => {
      const watch = (child: BoundChild, name: string) =>
        void child.exited.then(() => {
          if (!stopped) resolve(`${name} exited unexpectedly:\n${child.outputTail()}`);
        });
      watch(server, 'Temporal server');
      if (ui) watch(ui, 'Temporal Web UI');
    });
    const stop = async () => {
      stopped = true;
      await stopAll();
    };
    return { address, clientTls, namespace, uiUrl, ports, databaseUrl, visibilityDatabase, startupMs, crashed, stop };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function choosePorts(port: number): Promise<TemporalServerPorts> {
  if (port === 0) {
    const [frontendGrpc, frontendHttp, historyGrpc, matchingGrpc, workerGrpc] = await distinctPorts(5, freePort);
    // Membership ports land in cluster_membership.rpc_port, a SMALLINT: above 32767 the server
    // dies at start ("value ... is out of range for type smallint"), and the OS's free ports are
    // all above it (Linux hands out 32768-60999).
    const [frontendMembership, historyMembership, matchingMembership, workerMembership] = await distinctPorts(
      4,
      freeMembershipPort,
    );
    return {
      frontendGrpc: frontendGrpc!,
      frontendHttp: frontendHttp!,
      frontendMembership: frontendMembership!,
      historyGrpc: historyGrpc!,
      historyMembership: historyMembership!,
      matchingGrpc: matchingGrpc!,
      matchingMembership: matchingMembership!,
      workerGrpc: workerGrpc!,
      workerMembership: workerMembership!,
    };
  }
  // Temporal's usual layout, relative to the frontend (7233 gives exactly the documented ports).
  return {
    frontendGrpc: port,
    frontendHttp: port + 10,
    frontendMembership: port - 300,
    historyGrpc: port + 1,
    historyMembership: port - 299,
    matchingGrpc: port + 2,
    matchingMembership: port - 298,
    workerGrpc: port + 6,
    workerMembership: port - 294,
  };
}

async function distinctPorts(count: number, pick: () => Promise<number>): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await pick());
  return [...ports];
}

const MEMBERSHIP_PORT_RANGE = [20_000, 32_767] as const;

/** A random port in 20000-32767 that is free on 127.0.0.1 right now. */
async function freeMembershipPort(): Promise<number> {
  const [low, high] = MEMBERSHIP_PORT_RANGE;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, HOST, () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new TemporalServerError(`no free port in ${low}-${high} on ${HOST} after 100 attempts`);
}

/** The server logs JSON lines with a Go stack trace in most of them: keep level, message, error. */
export function compactServerLogLine(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const {
      level,
      msg,
      error,
      stacktrace: _stack,
      ts: _ts,
      ['logging-call-at']: _at,
      ...rest
    } = JSON.parse(line) as Record<string, unknown>;
    const extra = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    return `${String(level).toUpperCase()} ${String(msg)}${error ? `: ${String(error)}` : ''}${extra ? ` (${extra})` : ''}`;
  } catch {
    return line;
  }
}

/**
 * deploy/temporal/server.yaml's TLS variables (the names of Temporal's docker image where it has
 * them): the frontend presents the server certificate and requires a client certificate our CA
 * signed; the server's own services call the frontend with the system worker's certificate.
 */
function serverTlsEnv(tls: TlsCertificates): NodeJS.ProcessEnv {
  return {
    TEMPORAL_TLS_FRONTEND_CERT: tls.serverCert,
    TEMPORAL_TLS_FRONTEND_KEY: tls.serverKey,
    TEMPORAL_TLS_CLIENT1_CA_CERT: tls.caCert,
    TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
    TEMPORAL_TLS_SERVER_CA_CERT: tls.caCert,
    TEMPORAL_TLS_FRONTEND_SERVER_NAME: 'localhost',
    TEMPORAL_TLS_SYSTEM_WORKER_CERT: tls.systemWorkerCert,
    TEMPORAL_TLS_SYSTEM_WORKER_KEY: tls.systemWorkerKey,
  };
}

function clientTlsConfig(tls: TlsCertificates): TLSConfig {
  return {
    serverNameOverride: 'localhost',
    serverRootCACertificate: readFileSync(tls.caCert),
    clientCertPair: { crt: readFileSync(tls.clientCert), key: readFileSync(tls.clientKey) },
  };
}

/** Only what a Go binary needs: nothing of ours leaks into the config template's env lookups. */
function baseEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG'];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
}

/** The frontend, and with mTLS how to connect to it. */
interface Target {
  address: string;
  tls: TLSConfig | null;
}

function connectOptions({ address, tls }: Target) {
  return tls ? { address, tls } : { address };
}

/**
 * The namespace (created if missing) with our custom search attributes. A fresh server answers
 * before all its services have joined, so each step retries transient errors for a while.
 */
async function ensureNamespace(target: Target, namespace: string, retentionDays: number, log: (m: string) => void) {
  const connection = await Connection.connect(connectOptions(target));
  try {
    await retrying(`namespace ${namespace}`, async () => {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } catch (err) {
        if (!(isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND)) throw err;
      }
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: proto.google.protobuf.Duration.fromObject({
            seconds: retentionDays * 86_400,
          }),
        });
        log(`created namespace ${namespace} (retention ${retentionDays} days)`);
      } catch (err) {
        if (!(isGrpcServiceError(err) && err.code === GRPC_ALREADY_EXISTS)) throw err;
      }
      await connection.workflowService.describeNamespace({ namespace });
    });
    // Right after registration only persistence knows the namespace; the caches catch up within a
    // refresh period, and this call goes through them.
    const before = await retrying(`namespace ${namespace} in the caches`, () =>
      connection.operatorService.listSearchAttributes({ namespace }),
    );
    const missing = Object.keys(searchAttributeDefinitions).filter((name) => !before.customAttributes?.[name]);
    await retrying('search attributes', () => ensureSearchAttributes(connection, namespace));
    if (missing.length > 0) {
      log(`registered search attributes ${missing.join(', ')} on ${namespace}`);
      // The frontend accepts queries on them once its cache has them; history's cache refreshes on
      // the same period, so one more period covers a workflow started (or upserting) right away.
      const probe = Object.keys(searchAttributeDefinitions)
        .map((name) => `${name} IS NOT NULL`)
        .join(' OR ');
      await retrying('search attributes in the visibility cache', () =>
        connection.workflowService.countWorkflowExecutions({ namespace, query: probe }),
      );
      await sleep(NAMESPACE_CACHE_REFRESH_MS);
    }
  } finally {
    await connection.close();
  }
}

/**
 * The frontend answers before history and matching have joined the ring ("Not enough hosts to
 * serve the request"): wait until a history call (NotFound for a workflow nobody started) and a
 * matching call (an empty task queue) get real answers.
 */
async function waitForHistoryAndMatching(target: Target, namespace: string): Promise<void> {
  const connection = await Connection.connect(connectOptions(target));
  const probe = `durable-inbox-readiness-probe-${process.pid}`;
  try {
    await retrying('history service', async () => {
      try {
        await connection.withDeadline(Date.now() + 2_000, () =>
          connection.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: probe } }),
        );
      } catch (err) {
        if (!(isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND)) throw err;
      }
    });
    await retrying('matching service', () =>
      connection.withDeadline(Date.now() + 2_000, () =>
        connection.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: probe },
          taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        }),
      ),
    );
  } finally {
    await connection.close();
  }
}

async function retrying<T>(what: string, attempt: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) {
        throw new TemporalServerError(`Temporal server: ${what} not ready after ${timeoutMs / 1000}s: ${String(err)}`, {
          cause: err,
        });
      }
      await sleep(250);
    }
  }
}

async function startWebUi(opts: {
  address: string;
  namespace: string;
  uiPort: number;
  codecEndpoint?: string;
  corsOrigins?: string[];
  overrides?: TemporalServerOverrides;
  tls?: TlsCertificates;
  log: (m: string) => void;
}): Promise<{ ui: BoundChild; url: string }> {
  const binary = await resolveTemporalUiServer({ log: opts.log, overrides: opts.overrides });
  if (!binary) {
    throw new TemporalServerError(
      'no Temporal Web UI server and no Go toolchain to build one: install Go, set TEMPORAL_UI_SERVER_BIN, or start headless',
    );
  }
  const url = `http://${HOST}:${opts.uiPort}`;
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    TEMPORAL_ADDRESS: opts.address,
    TEMPORAL_UI_IP: HOST,
    TEMPORAL_UI_PORT: String(opts.uiPort),
    TEMPORAL_DEFAULT_NAMESPACE: opts.namespace,
    TEMPORAL_CODEC_ENDPOINT: opts.codecEndpoint ?? '',
    TEMPORAL_CORS_ORIGINS: (opts.corsOrigins ?? [url]).join(','),
    // The temporalio/ui image's names; the UI server is a client of the frontend like any other.
    ...(opts.tls
      ? {
          TEMPORAL_TLS_CA: opts.tls.caCert,
          TEMPORAL_TLS_CERT: opts.tls.clientCert,
          TEMPORAL_TLS_KEY: opts.tls.clientKey,
          TEMPORAL_TLS_SERVER_NAME: 'localhost',
          TEMPORAL_TLS_ENABLE_HOST_VERIFICATION: 'true',
        }
      : {}),
  };
  const args = [
    '--root',
    projectRoot(),
    '--config',
    join('deploy', 'temporal', 'ui'),
    '--env',
    'durable-inbox',
    'start',
  ];
  const ui = spawnBoundToUs(binary.path, args, { env, log: (line) => opts.log(`temporal-ui: ${line}`) });
  try {
    const deadline = Date.now() + 30_000;
    let exited = false;
    void ui.exited.then(() => (exited = true));
    for (;;) {
      if (exited) throw new TemporalServerError(`Temporal Web UI exited during start-up:\n${ui.outputTail()}`);
      const ok = await fetch(`${url}/api/v1/settings`, { signal: AbortSignal.timeout(2_000) })
        .then((res) => res.ok)
        .catch(() => false);
      if (ok) break;
      if (Date.now() > deadline) {
        throw new TemporalServerError(`Temporal Web UI did not answer on ${url} within 30s:\n${ui.outputTail()}`);
      }
      await sleep(250);
    }
  } catch (err) {
    await ui.stop();
    throw err;
  }
  opts.log(`Temporal Web UI on ${url}${opts.codecEndpoint ? ` (codec endpoint ${opts.codecEndpoint})` : ''}`);
  return { ui, url };
}
