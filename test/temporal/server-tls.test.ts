// The stack's Temporal server with mTLS on its frontend (as `npm run stack` runs it): certificates
// made at first start, a client without one (or with one from another CA) refused, and our clients,
// workers, the `temporal` CLI, our `npm run temporal:cli` wrapper, the Web UI and the server's own
// scheduler connecting with theirs, configured by the TEMPORAL_TLS_* settings every Temporal tool reads.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { databaseNameOf, withDatabaseName } from '../../src/db/connection-url.js';
import { clientTlsSettings } from '../../src/stack/stack.js';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';
import { connectClient } from '../../src/temporal/client.js';
import { temporalConnectionEnv, temporalConnectionOptions, temporalProfileToml } from '../../src/temporal/connection.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { resolveTemporalServer, resolveTemporalUiServer } from '../../src/temporal/server-binary.js';
import { startTemporalServer, type TemporalServer } from '../../src/temporal/server.js';
import { ensureTlsCertificates, type TlsCertificates } from '../../src/temporal/tls-certificates.js';
import { bundleWorkflows } from '../../src/workers/workflow-bundle.js';
import type { EchoActivities } from '../fixtures/workflows/echo.js';
import { dropDatabase } from '../setup/database.js';
import { waitUntil } from '../helpers/wait-until.js';

const execFileAsync = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const activities: EchoActivities = { shout: async (message) => `${message.toUpperCase()}!` };
const log = process.env['TEMPORAL_TEST_LOG'] ? (m: string) => console.error(`[temporal-server] ${m}`) : undefined;

let dataDir: string;
let certs: TlsCertificates;
let temporalCli: string;
let databaseUrl: string;
let visibilityDatabase: string;
let server: TemporalServer;
let workflowBundle: WorkflowBundle;

/** The configuration of a durable-inbox process of the stack: its TEMPORAL_* variables point at the certificates. */
function stackClientConfig() {
  return loadConfig({ TEMPORAL_ADDRESS: server.address, ...temporalConnectionEnv({ ...clientTlsSettings(certs), TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' }) });
}

beforeAll(async () => {
  const [binaries, ui, cli] = await Promise.all([resolveTemporalServer({}), resolveTemporalUiServer({}), resolveTemporalCli({})]);
  if (!binaries || !ui || !cli) throw new Error('these tests need Go (to build the Temporal server, Web UI and CLI)');
  temporalCli = cli.path;

  dataDir = mkdtempSync(join(tmpdir(), 'server-tls-'));
  certs = await ensureTlsCertificates(join(dataDir, 'tls'));

  const base = databaseNameOf(inject('databaseUrl'));
  databaseUrl = withDatabaseName(inject('databaseUrl'), `${base}_tls_temporal`);
  visibilityDatabase = `${base}_tls_temporal_visibility`;
  await dropDatabase(databaseUrl);
  await dropDatabase(withDatabaseName(databaseUrl, visibilityDatabase));
  [workflowBundle, server] = await Promise.all([
    bundleWorkflows(fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url))),
    startTemporalServer({ databaseUrl, visibilityDatabase, port: 0, uiPort: 0, binaries, tls: certs, log, sqlMaxConns: { persistence: 8, visibility: 4 } }),
  ]);
}, 20 * 60_000);

afterAll(async () => {
  await server?.stop();
  if (databaseUrl) {
    await dropDatabase(databaseUrl);
    await dropDatabase(withDatabaseName(databaseUrl, visibilityDatabase));
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('Temporal server with mTLS on its frontend', () => {
  it('has a CA, a server and client certificates made once, the keys readable only by us', async () => {
    for (const key of [certs.serverKey, certs.clientKey, certs.systemWorkerKey]) expect(statSync(key).mode & 0o077).toBe(0);
    const made = statSync(certs.caCert).mtimeMs;
    expect((await ensureTlsCertificates(certs.dir)).caCert).toBe(certs.caCert);
    expect(statSync(certs.caCert).mtimeMs).toBe(made);
  });

  it('refuses a client without a certificate, and one whose certificate another CA signed', async () => {
    const attempt = (opts: Parameters<typeof Connection.connect>[0]) =>
      Connection.connect({ ...opts, address: server.address, connectTimeout: 3_000 }).then(async (c) => {
        await c.close();
        return 'connected';
      });
    await expect(attempt({})).rejects.toThrow();
    await expect(attempt({ tls: { serverNameOverride: 'localhost', serverRootCACertificate: readFileSync(certs.caCert) } })).rejects.toThrow();
    const stranger = await ensureTlsCertificates(join(dataDir, 'other-ca'));
    await expect(
      attempt({
        tls: {
          serverNameOverride: 'localhost',
          serverRootCACertificate: readFileSync(certs.caCert),
          clientCertPair: { crt: readFileSync(stranger.clientCert), key: readFileSync(stranger.clientKey) },
        },
      }),
    ).rejects.toThrow();
    await expect(attempt({ tls: server.clientTls! })).resolves.toBe('connected');
  });

  it('runs a workflow for a client and a worker configured by TEMPORAL_TLS_* paths', async () => {
    const cfg = stackClientConfig();
    expect(cfg.TEMPORAL_TLS_CLIENT_CERT_PATH).toBe(certs.clientCert);
    const keys = fixedTestPayloadKeys();
    const client = await connectClient(cfg, keys);
    const connection = await NativeConnection.connect(temporalConnectionOptions(cfg));
    const taskQueue = `tls-${randomUUID()}`;
    try {
      const worker = await Worker.create({ connection, taskQueue, workflowBundle, activities, dataConverter: createDataConverter(keys) });
      await worker.runUntil(async () => {
        const result = await client.workflow.execute('echo', { taskQueue, workflowId: `echo-${randomUUID()}`, args: [{ message: 'over mtls' }] });
        expect(result).toEqual({ message: 'over mtls', shouted: 'OVER MTLS!' });

        // The server's own scheduler (its system worker) reaches the frontend with its certificate.
        const schedule = await client.schedule.create({
          scheduleId: `tls-${randomUUID()}`,
          spec: { intervals: [{ every: '1 day' }] },
          action: { type: 'startWorkflow', workflowType: 'echo', taskQueue, args: [{ message: 'scheduled' }] },
        });
        await schedule.trigger();
        const started = await waitUntil('the triggered schedule', async () => (await schedule.describe()).info.recentActions[0]?.action, {
          timeoutMs: 30_000,
          everyMs: 500,
        });
        expect(await client.workflow.getHandle(started.workflow.workflowId).result()).toEqual({ message: 'scheduled', shouted: 'SCHEDULED!' });
        await schedule.delete();
      });
    } finally {
      await client.connection.close();
      await connection.close();
    }
  }, 60_000);

  it('lets the temporal CLI and npm run temporal:cli in with the same settings or a temporal.toml profile, not without', async () => {
    const env = { ...process.env, ...temporalConnectionEnv(stackClientConfig()) };
    const describe = ['operator', 'namespace', 'describe', '--namespace', 'default', '--output', 'json'];
    expect(JSON.parse((await execFileAsync(temporalCli, describe, { env, timeout: 30_000 })).stdout)).toMatchObject({
      namespaceInfo: { name: 'default' },
    });
    await expect(execFileAsync(temporalCli, [...describe, '--address', server.address, '--command-timeout', '5s'], { timeout: 30_000 })).rejects.toThrow();

    // Our wrapper passes the configuration on; here it comes from a profile file, as `npm run stack` writes one.
    const profile = join(dataDir, 'temporal.toml');
    writeFileSync(profile, temporalProfileToml(stackClientConfig()));
    const wrapper = await execFileAsync(process.execPath, ['--import', 'tsx', 'scripts/temporal-cli.ts', ...describe], {
      cwd: repoRoot,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], TEMPORAL_CLI: temporalCli, TEMPORAL_CONFIG_FILE: profile },
      timeout: 60_000,
    });
    expect(JSON.parse(wrapper.stdout)).toMatchObject({ namespaceInfo: { name: 'default' } });
  }, 120_000);

  it('serves the Web UI, whose server presents the client certificate to the frontend', async () => {
    const reply = await fetch(`${server.uiUrl}/api/v1/namespaces/default`);
    expect(reply.status).toBe(200);
    expect(((await reply.json()) as { namespaceInfo: { name: string } }).namespaceInfo.name).toBe('default');
  });
});
