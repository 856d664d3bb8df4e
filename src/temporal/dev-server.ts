// A local Temporal dev server for development and tests. Reuses a server already on the port;
// otherwise runs `temporal server start-dev` from resolveTemporalCli, and only when no binary can
// be had (no Go) falls back to the SDK's own download. The child never outlives us.
import { mkdir } from 'node:fs/promises';
import { createConnection as connectTcp } from 'node:net';
import { dirname } from 'node:path';
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
// @temporalio/proto is CommonJS without named-export hints: under ESM only its default export exists.
import proto, { type temporal } from '@temporalio/proto';
import { resolveTemporalCli } from './cli-binary.js';
import { searchAttributeDefinitions } from './search-attributes.js';
import { freePort } from '../shared/free-port.js';
import { spawnBoundToUs } from '../shared/bound-child.js';
import { untilFrontendAnswers } from './frontend-ready.js';

const HOST = '127.0.0.1';
const GRPC_ALREADY_EXISTS = 6;
const START_TIMEOUT_MS = 60_000;

export interface DevServerOptions {
  /** gRPC port (default 7233). */
  port?: number;
  /** Web UI port (default port + 1000). */
  uiPort?: number;
  /** No Web UI (tests). */
  headless?: boolean;
  /** SQLite file to keep state across restarts; in memory when omitted. */
  dbFile?: string;
  /** Codec server URL the Web UI calls to show decrypted payloads. */
  codecEndpoint?: string;
  namespace?: string;
  /** The TEMPORAL_CLI setting (otherwise PATH, the cache, or a Go build). */
  cli?: string;
  log?: (m: string) => void;
}

export interface DevServer {
  /** host:port for Connection / NativeConnection. */
  address: string;
  uiUrl: string | null;
  /** true when a server was already listening: stop() then leaves it running. */
  reused: boolean;
  stop(): Promise<void>;
}

export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  // Port 0: any free port (start-dev itself needs a concrete one).
  const port = opts.port === 0 ? await freePort() : (opts.port ?? 7233);
  const uiPort = opts.headless ? null : (opts.uiPort ?? port + 1000);
  const namespace = opts.namespace ?? 'default';
  const log = opts.log ?? (() => {});
  const address = `${HOST}:${port}`;
  const uiUrl = uiPort === null ? null : `http://${HOST}:${uiPort}`;

  if (await isListening(port)) {
    // Lazy + close in finally: a failed Connection.connect leaves its channel redialling.
    const connection = Connection.lazy({ address, connectTimeout: 3_000 });
    try {
      await connection
        .withDeadline(Date.now() + 3_000, () => connection.workflowService.getSystemInfo({}))
        .catch((err: unknown) => {
          throw new Error(`port ${port} is in use, but not by a Temporal server: ${String(err)}`);
        });
      await connection.withDeadline(Date.now() + 10_000, () => ensureSearchAttributes(connection, namespace));
    } finally {
      await connection.close();
    }
    log(
      `reusing the Temporal server already listening on ${address}` +
        (opts.codecEndpoint ? ' (its Web UI keeps the codec endpoint it was started with)' : ''),
    );
    const reusedUi = uiPort !== null && (await isListening(uiPort)) ? uiUrl : null;
    return { address, uiUrl: reusedUi, reused: true, stop: async () => {} };
  }

  if (opts.dbFile) await mkdir(dirname(opts.dbFile), { recursive: true });
  const cli = await resolveTemporalCli({ log, override: opts.cli });
  if (!cli) return startWithSdkDownload({ ...opts, port, uiPort, namespace, log });

  const args = [
    'server',
    'start-dev',
    '--ip',
    HOST,
    '--port',
    String(port),
    ...(uiPort === null ? ['--headless'] : ['--ui-port', String(uiPort)]),
    ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
    '--namespace',
    namespace,
    ...Object.entries(searchAttributeDefinitions).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ...extraServerArgs(opts.codecEndpoint),
  ];
  log(`starting ${cli.path} ${args.join(' ')}`);
  const server = spawnBoundToUs(cli.path, args, { log: (line) => log(`temporal: ${line}`) });
  try {
    await untilFrontendAnswers({
      address,
      server,
      what: 'Temporal dev server',
      timeoutMs: START_TIMEOUT_MS,
      everyMs: 200,
      probe: (connection) => connection.workflowService.describeNamespace({ namespace }),
    });
  } catch (err) {
    await server.stop();
    throw err;
  }
  log(`Temporal dev server ready on ${address}${uiUrl ? `, Web UI ${uiUrl}` : ''}`);
  return { address, uiUrl, reused: false, stop: server.stop };
}

/** Registers any of our search attributes the namespace lacks (a server we did not start). */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;
  const wanted = {
    Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
    Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
    Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  };
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const [name, type] of Object.entries(searchAttributeDefinitions)) {
    const existing = customAttributes?.[name];
    if (existing === undefined) missing[name] = wanted[type];
    else if (existing !== wanted[type]) {
      throw new Error(
        `search attribute ${name} exists on namespace ${namespace} as ${IndexedValueType[existing]}, expected ${type}`,
      );
    }
  }
  if (Object.keys(missing).length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (err) {
    // Another process registered them at the same moment.
    if (!(isGrpcServiceError(err) && err.code === GRPC_ALREADY_EXISTS)) throw err;
  }
}

/** Our search attributes as SDK keys, for TestWorkflowEnvironment. */
export function searchAttributeKeys() {
  const types = {
    Keyword: SearchAttributeType.KEYWORD,
    Int: SearchAttributeType.INT,
    Double: SearchAttributeType.DOUBLE,
    Datetime: SearchAttributeType.DATETIME,
  } as const;
  return Object.entries(searchAttributeDefinitions).map(([name, type]) => defineSearchAttributeKey(name, types[type]));
}

function extraServerArgs(codecEndpoint: string | undefined): string[] {
  return [
    // Needed for update-with-start.
    '--dynamic-config-value',
    'frontend.enableExecuteMultiOperation=true',
    // One partition per task queue: on a single-process dev server, partitions only make a task
    // miss the waiting poll more often (it then goes through SQLite). pipeline bench: +20% emails/min.
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
    // Task queue priority and fairness keys (src/temporal/priority.ts): live mail before a backfill.
    '--dynamic-config-value',
    'matching.useNewMatcher=true',
    '--dynamic-config-value',
    'matching.enableFairness=true',
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=OFF',
    ...(codecEndpoint ? ['--ui-codec-endpoint', codecEndpoint] : []),
  ];
}

async function startWithSdkDownload(opts: {
  port: number;
  uiPort: number | null;
  namespace: string;
  dbFile?: string;
  codecEndpoint?: string;
  log: (m: string) => void;
}): Promise<DevServer> {
  opts.log(
    'no Temporal CLI binary and no Go toolchain: falling back to the SDK download of the dev server (needs internet)',
  );
  // Loaded lazily: @temporalio/testing is a dev dependency, only this fallback needs it.
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: HOST,
      port: opts.port,
      namespace: opts.namespace,
      dbFilename: opts.dbFile,
      ui: opts.uiPort !== null,
      uiPort: opts.uiPort ?? undefined,
      searchAttributes: searchAttributeKeys(),
      extraArgs: extraServerArgs(opts.codecEndpoint),
    },
  });
  return {
    address: env.address,
    uiUrl: opts.uiPort === null ? null : `http://${HOST}:${opts.uiPort}`,
    reused: false,
    stop: () => env.teardown(),
  };
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: HOST, port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}
