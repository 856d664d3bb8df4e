// The production-shaped Temporal server (v1.30.9 built from Go modules, PostgreSQL for persistence
// and SQL visibility, our deploy/temporal config) against real clients: the SDK, the Temporal CLI
// and the Web UI's HTTP API. Builds the binaries on first use (minutes), then reuses .cache/.
// Its two databases are named after the run's test database (which the run holds a lock on) and
// are recreated here, so each run starts from an empty Temporal.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseNameOf, withDatabaseName } from '../../src/db/connection-url.js';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';
import { InboxAccountId, searchAttributeDefinitions } from '../../src/temporal/search-attributes.js';
import { startTemporalServer, type TemporalServer } from '../../src/temporal/server.js';
import { bundleWorkflows } from '../../src/workers/workflow-bundle.js';
import {
  resolveTemporalServer,
  resolveTemporalUiServer,
  TEMPORAL_SERVER_VERSION,
  type TemporalServerBinaries,
} from '../../src/temporal/server-binary.js';
import type { EchoActivities } from '../fixtures/workflows/echo.js';
import { finishSignal, setInboxStateUpdate, stackProbe } from '../fixtures/workflows/stack-probe.js';
import { dropDatabase } from '../setup/database.js';

/** This suite runs beside other test files on a PostgreSQL with 100 connections: a small share. */
const SQL_MAX_CONNS = { persistence: 8, visibility: 4 };
const execFileAsync = promisify(execFile);
const activities: EchoActivities = { shout: async (message) => `${message.toUpperCase()}!` };
const CODEC_ENDPOINT = 'http://127.0.0.1:8234';
const log = process.env['TEMPORAL_TEST_LOG'] ? (m: string) => console.error(`[temporal-server] ${m}`) : undefined;

let binaries: TemporalServerBinaries;
let temporalCli: string;
let databaseUrl: string;
let visibilityDatabase: string;
let server: TemporalServer;
let connection: Connection;
let nativeConnection: NativeConnection;
let client: Client;
let workflowBundle: WorkflowBundle;

/** Prints a measured figure into the test output (the CI log keeps it). */
function figure(name: string, ms: number) {
  console.info(`[server.test] ${name}: ${(ms / 1000).toFixed(1)} s`);
}

beforeAll(async () => {
  const buildStarted = Date.now();
  const [server_, ui, cli] = await Promise.all([
    resolveTemporalServer({ log: (m) => console.info(`[server.test] ${m}`) }),
    resolveTemporalUiServer({ log: (m) => console.info(`[server.test] ${m}`) }),
    resolveTemporalCli({ log: (m) => console.info(`[server.test] ${m}`) }),
  ]);
  if (!server_ || !ui || !cli) throw new Error('these tests need Go (to build the Temporal server, Web UI and CLI)');
  figure(`binaries (server: ${server_.source}, ui: ${ui.source}, cli: ${cli.source})`, Date.now() - buildStarted);
  binaries = server_;
  temporalCli = cli.path;

  // Named after the run's test database: the run holds a lock on that name, so no other run uses these.
  const appDatabaseUrl = inject('databaseUrl');
  const base = databaseNameOf(appDatabaseUrl);
  databaseUrl = withDatabaseName(appDatabaseUrl, `${base}_temporal`);
  visibilityDatabase = `${base}_temporal_visibility`;
  await dropDatabase(databaseUrl);
  await dropDatabase(withDatabaseName(appDatabaseUrl, visibilityDatabase));

  const [bundle] = await Promise.all([
    bundleWorkflows(fileURLToPath(new URL('../fixtures/workflows/stack-probe.ts', import.meta.url))),
    (async () => {
      const started = Date.now();
      server = await startTemporalServer({
        databaseUrl,
        visibilityDatabase,
        port: 0,
        uiPort: 0,
        codecEndpoint: CODEC_ENDPOINT,
        binaries,
        log,
        sqlMaxConns: SQL_MAX_CONNS,
      });
      figure('first start on empty databases (schemas included)', Date.now() - started);
      figure('first start, spawn to ready', server.startupMs);
    })(),
  ]);
  workflowBundle = bundle;
  connection = await Connection.connect({ address: server.address });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  client = new Client({ connection });
}, 20 * 60_000);

afterAll(async () => {
  await connection?.close();
  await nativeConnection?.close();
  await server?.stop();
  if (databaseUrl) {
    await dropDatabase(databaseUrl);
    await dropDatabase(withDatabaseName(databaseUrl, visibilityDatabase));
  }
}, 60_000);

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(
    temporalCli,
    [...args, '--address', server.address, '--namespace', 'default'],
    {
      timeout: 30_000,
    },
  );
  return stdout;
}

/** Visibility is eventually consistent: retries `check` until it passes (or the deadline). */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function newWorker(taskQueue: string) {
  return Worker.create({ connection: nativeConnection, taskQueue, workflowBundle, activities });
}

describe('Temporal server on PostgreSQL', () => {
  it('runs release 1.30.9 from our config, with persistence and visibility in the two PostgreSQL databases', async () => {
    const info = await connection.workflowService.getSystemInfo({});
    expect(info.serverVersion).toBe(TEMPORAL_SERVER_VERSION);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const tables = await db.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN ('executions', 'namespaces', 'cluster_membership')",
      );
      expect(tables.rows.map((r) => r.table_name).sort()).toEqual(['cluster_membership', 'executions', 'namespaces']);
      const namespaces = await db.query<{ name: string }>('SELECT name FROM namespaces');
      expect(namespaces.rows.map((r) => r.name)).toContain('default');
    } finally {
      await db.end();
    }
    const vis = new pg.Client({ connectionString: withDatabaseName(databaseUrl, visibilityDatabase) });
    await vis.connect();
    try {
      const version = await vis.query<{ curr_version: string }>('SELECT curr_version FROM schema_version');
      expect(version.rows[0]?.curr_version).toMatch(/^1\.\d+$/);
      const tables = await vis.query(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'executions_visibility'",
      );
      expect(tables.rowCount).toBe(1);
    } finally {
      await vis.end();
    }
  });

  it('runs a workflow with an activity', async () => {
    const taskQueue = `server-echo-${randomUUID()}`;
    const worker = await newWorker(taskQueue);
    const result = await worker.runUntil(
      client.workflow.execute('echo', { taskQueue, workflowId: `echo-${randomUUID()}`, args: [{ message: 'hello' }] }),
    );
    expect(result).toEqual({ message: 'hello', shouted: 'HELLO!' });
  });

  it('has our search attributes, and visibility queries on them work through the SDK, the CLI and the Web UI', async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;
    const types = {
      Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
      Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
      Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
    };
    for (const [name, type] of Object.entries(searchAttributeDefinitions))
      expect(customAttributes?.[name]).toBe(types[type]);

    const taskQueue = `server-visibility-${randomUUID()}`;
    const workflowId = `probe-${randomUUID()}`;
    const accountId = `account-${randomUUID()}`;
    const worker = await newWorker(taskQueue);
    await worker.runUntil(async () => {
      // Update-with-start (no dynamic config needed on 1.30), which also indexes InboxState.
      const startOp = new WithStartWorkflowOperation(stackProbe, {
        taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
        typedSearchAttributes: [{ key: InboxAccountId, value: accountId }],
      });
      const state = await client.workflow.executeUpdateWithStart(setInboxStateUpdate, {
        args: ['drafted'],
        startWorkflowOperation: startOp,
      });
      expect(state).toBe('drafted');
      const query = `InboxState = "drafted" AND InboxAccountId = "${accountId}"`;

      const listed = await eventually(async () => {
        const ids: string[] = [];
        for await (const wf of client.workflow.list({ query })) ids.push(wf.workflowId);
        expect(ids).toEqual([workflowId]);
        return ids;
      });
      expect(listed).toEqual([workflowId]);
      expect((await client.workflow.count(query)).count).toBe(1);
      expect((await client.workflow.count(`InboxState = "sent" AND InboxAccountId = "${accountId}"`)).count).toBe(0);

      const cliList = JSON.parse(await cli('workflow', 'list', '--query', query, '--output', 'json')) as Array<{
        execution: { workflowId: string };
      }>;
      expect(cliList.map((w) => w.execution.workflowId)).toEqual([workflowId]);
      expect(await cli('workflow', 'count', '--query', query)).toMatch(/Total: 1\b/);

      // The Web UI's API (what its workflow list page calls) goes through the same visibility store.
      const ui = await fetch(`${server.uiUrl}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
      expect(ui.status).toBe(200);
      const body = (await ui.json()) as { executions?: Array<{ execution: { workflowId: string } }> };
      expect(body.executions?.map((e) => e.execution.workflowId)).toEqual([workflowId]);

      await client.workflow.getHandle(workflowId).signal(finishSignal, 'visibility test done');
      await client.workflow.getHandle(workflowId).result();
    });
  });

  it('serves the Web UI with our codec endpoint', async () => {
    const settings = (await (await fetch(`${server.uiUrl}/api/v1/settings`)).json()) as {
      Codec: { Endpoint: string };
      DefaultNamespace: string;
    };
    expect(settings.Codec.Endpoint).toBe(CODEC_ENDPOINT);
    expect(settings.DefaultNamespace).toBe('default');
    const page = await fetch(`${server.uiUrl}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('creates, describes and triggers a Schedule with the `temporal schedule` CLI', async () => {
    const taskQueue = `server-schedule-${randomUUID()}`;
    const scheduleId = `schedule-${randomUUID()}`;
    await cli(
      'schedule',
      'create',
      '--schedule-id',
      scheduleId,
      '--interval',
      '1h',
      '--overlap-policy',
      'Skip',
      '--workflow-id',
      `scheduled-echo-${scheduleId}`,
      '--task-queue',
      taskQueue,
      '--type',
      'echo',
      '--input',
      JSON.stringify({ message: 'scheduled' }),
    );
    const described = JSON.parse(
      await cli('schedule', 'describe', '--schedule-id', scheduleId, '--output', 'json'),
    ) as {
      schedule: {
        spec: { interval: Array<{ interval: string }> };
        action: { startWorkflow: { workflowType: { name: string } } };
        policies: { overlapPolicy: string };
      };
    };
    expect(described.schedule.spec.interval[0]?.interval).toBe('3600s');
    expect(described.schedule.action.startWorkflow.workflowType.name).toBe('echo');
    expect(described.schedule.policies.overlapPolicy).toMatch(/SKIP/i);

    // Triggering runs the action through the server's own scheduler, and our worker runs it.
    const worker = await newWorker(taskQueue);
    await worker.runUntil(async () => {
      await cli('schedule', 'trigger', '--schedule-id', scheduleId);
      await eventually(async () => {
        const info = JSON.parse(await cli('schedule', 'describe', '--schedule-id', scheduleId, '--output', 'json')) as {
          info: {
            actionCount?: string | number;
            recentActions?: Array<{ startWorkflowResult: { workflowId: string; runId: string } }>;
          };
        };
        const run = info.info.recentActions?.[0]?.startWorkflowResult;
        expect(run).toBeDefined();
        const result = await client.workflow.getHandle(run!.workflowId, run!.runId).result();
        expect(result).toEqual({ message: 'scheduled', shouted: 'SCHEDULED!' });
      }, 30_000);
    });
    expect(await cli('schedule', 'list')).toContain(scheduleId);
    await cli('schedule', 'delete', '--schedule-id', scheduleId);
  });

  it('keeps a running workflow across a restart on the same databases, and it then completes', async () => {
    const taskQueue = `server-restart-${randomUUID()}`;
    const workflowId = `restart-${randomUUID()}`;
    const before = await newWorker(taskQueue);
    await before.runUntil(async () => {
      const handle = await client.workflow.start(stackProbe, { taskQueue, workflowId });
      await handle.executeUpdate(setInboxStateUpdate, { args: ['waiting-for-restart'] });
    });

    const stopped = Date.now();
    await server.stop();
    figure('stop', Date.now() - stopped);
    // Gone for real: its frontend port and the Web UI's are free again.
    expect(await canListen(server.ports.frontendGrpc)).toBe(true);
    expect(await canListen(Number(new URL(server.uiUrl!).port))).toBe(true);
    const restarted = Date.now();
    server = await startTemporalServer({
      databaseUrl,
      visibilityDatabase,
      ports: server.ports, // same address: the open connections find it again
      uiPort: 0,
      codecEndpoint: CODEC_ENDPOINT,
      binaries,
      log,
      sqlMaxConns: SQL_MAX_CONNS,
    });
    figure('restart (schema check included)', Date.now() - restarted);
    figure('restart, spawn to ready', server.startupMs);

    const handle = client.workflow.getHandle(workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const after = await newWorker(taskQueue);
    const result = await after.runUntil(async () => {
      await handle.signal(finishSignal, 'after restart');
      return handle.result();
    });
    expect(result).toBe('finished: after restart');
    const history = await handle.fetchHistory();
    const updates = history.events?.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes) ?? [];
    expect(updates).toHaveLength(1);
  }, 180_000);
});
