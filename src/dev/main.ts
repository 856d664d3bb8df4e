// `npm run dev`: the whole product on embedded defaults, in one process. `npm run dev -- --imap`:
// a second demo mailbox beside the Gmail emulator's, on a local Dovecot and Postfix (src/dev/imap-demo.ts).
// Starts (or reuses) the Temporal dev server, the database and its migrations, the codec
// server, the workers and the HTTP server; prints where to look. Ctrl-C stops everything
// this process started, in reverse order, and exits 0.
import { dropRetriesAfterClose } from '../temporal/closed-connection-guard.js';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from '@temporalio/worker';
import { loadConfigOrExit } from '../config/env.js';
import { createGmailWorker } from '../workers/gmail-worker.js';
import { createLlmWorker } from '../workers/llm-worker.js';
import { startDemoWorld } from './demo.js';
import { startImapDemo } from './imap-demo.js';
import { TokenVault } from '../accounts/token-vault.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { startDevServer } from '../temporal/dev-server.js';
import { connectClient } from '../temporal/client.js';
import { createWorkerContext } from '../workers/context.js';
import { createWorkflowWorker } from '../workers/workflow-worker.js';
import { installSdkLogging, sdkMetricsTelemetry } from '../workers/sdk-logging.js';
import { createLogger } from '../shared/log.js';
import { StopList } from '../shared/stop-list.js';
import { startTracing, stopTracing } from '../temporal/tracing.js';
import {
  connectDemo,
  ensureAppSchedules,
  operatorTokenForRun,
  runningBanner,
  startAppCodecServer,
  startAppHttpServer,
} from './app-services.js';

const log = createLogger('dev');
const defaultDataDir = fileURLToPath(new URL('../../.data/', import.meta.url));

/** Things to stop on exit, last started first. */
const stack = new StopList(log);

async function main(): Promise<void> {
  dropRetriesAfterClose();
  // Signals first: Ctrl-C during start-up stops what has started (the workers also stop on their
  // own when the Temporal runtime sees SIGINT/SIGTERM).
  stack.exitOnSignals();
  const userCfg = loadConfigOrExit();
  const imap = process.argv.slice(2).includes('--imap');
  installSdkLogging(userCfg.LOG_LEVEL, sdkMetricsTelemetry(userCfg.METRICS_HOST, userCfg.TEMPORAL_METRICS_PORT));
  if (await startTracing(userCfg, { serviceName: 'durable-inbox' })) stack.push({ name: 'tracing', stop: stopTracing });
  const dataDir = userCfg.DATA_DIR ? join(resolve(userCfg.DATA_DIR), '/') : defaultDataDir;
  mkdirSync(dataDir, { recursive: true });

  // Without Google, Anthropic or Discord credentials, the bundled emulators stand in.
  const demo = await startDemoWorld(userCfg, dataDir);
  stack.push({ name: 'emulators', stop: () => demo.close() });
  const cfg = loadConfigOrExit({ ...process.env, ...demo.env, ...operatorTokenForRun(userCfg) });

  const database = await resolveDatabase(cfg, log);
  stack.push({ name: 'database', stop: () => database.stop() });
  log.info(`database ready (${database.source})`);

  const keys = await resolvePayloadKeys(cfg);
  const codecServer = await startAppCodecServer(cfg, keys, cfg.TEMPORAL_UI_PORT);
  stack.push({ name: 'codec server', stop: () => codecServer.close() });

  const [host, port] = cfg.TEMPORAL_ADDRESS.split(':');
  const temporal = await startDevServer({
    port: Number(port),
    uiPort: cfg.TEMPORAL_UI_PORT,
    dbFile: `${dataDir}temporal.db`,
    codecEndpoint: codecServer.url,
    namespace: cfg.TEMPORAL_NAMESPACE,
    cli: cfg.TEMPORAL_CLI,
    log: (m) => log.info(m),
  });
  stack.push({ name: 'temporal dev server', stop: () => temporal.stop() });
  if (host !== '127.0.0.1' && host !== 'localhost') log.warn(`TEMPORAL_ADDRESS host ${host} is not local`);

  const client = await connectClient(cfg, keys);
  stack.push({ name: 'temporal client', stop: () => client.connection.close() });

  const ctx = await createWorkerContext(cfg, database.url);
  const workers: Worker[] = [await createWorkflowWorker(ctx), await createGmailWorker(ctx), await createLlmWorker(ctx)];
  const running = workers.map((w) => w.run());
  let workersStopped: Promise<void> | undefined;
  const stopWorkers = () =>
    (workersStopped ??= (async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      await ctx.close();
    })());
  stack.push({ name: 'workers', stop: stopWorkers });

  const http = await startAppHttpServer(cfg, { prisma: ctx.prisma, client });
  stack.push({ name: 'http server', stop: () => http.close() });

  const schedules = await ensureAppSchedules(client, cfg, log);
  const demoLearning = await connectDemo(demo, cfg, { prisma: ctx.prisma, client }, log);
  if (demoLearning) stack.push({ name: 'demo writing lesson', stop: demoLearning.stop });
  const extra: string[] = [];
  if (imap) {
    const mail = await startImapDemo({
      prisma: ctx.prisma,
      vault: new TokenVault(await resolveTokenKey(cfg)),
      sync: { client, taskQueue: cfg.TEMPORAL_TASK_QUEUE },
      dataDir,
    });
    // The workers' IDLE watch goes first: the servers stopping under it would be a connection refused.
    stack.push({
      name: 'mail servers',
      stop: async () => {
        await stopWorkers();
        await mail.close();
      },
    });
    log.info(`IMAP demo account ${mail.email} connected (${mail.accountId}); its inbox is being processed`);
    extra.push(...mail.lines);
  }

  console.log(
    runningBanner({
      userCfg,
      cfg,
      uiUrl: temporal.uiUrl ?? `http://localhost:${cfg.TEMPORAL_UI_PORT}`,
      temporal: `${temporal.address}${temporal.reused ? ' (already running, reused)' : ''}`,
      codecServer,
      http,
      demo,
      schedules,
      extra,
    }),
  );

  await Promise.all(running);
  if (!stack.stopping) {
    log.error('a worker stopped unexpectedly');
    await stack.exit(1);
  }
}

main().catch(async (err: unknown) => {
  log.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  await stack.exit(1);
});
