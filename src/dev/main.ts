// `npm run dev`: the whole product on embedded defaults, in one process.
// Starts (or reuses) the Temporal dev server, the database and its migrations, the codec
// server, the workers and the HTTP server; prints where to look. Ctrl-C stops everything
// this process started, in reverse order, and exits 0.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from '@temporalio/worker';
import {
  approvalsSettingsFromConfig,
  archiverScheduleSettingsFromConfig,
  gmailOAuthSettings,
  loadConfigOrExit,
  syncScheduleSettingsFromConfig,
  threadSettingsFromConfig,
} from '../config.js';
import { TokenVault } from '../accounts/token-vault.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import { createGmailWorker } from '../workers/gmail-worker.js';
import { createLlmWorker } from '../workers/llm-worker.js';
import { connectDemoAccount, DEMO_EMAIL, ensureDemoRules, startDemoWorld } from './demo.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { startCodecServer } from '../codec-server/server.js';
import { AesGcmPayloadCodec } from '../temporal/codec.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { startDevServer } from '../temporal/dev-server.js';
import { connectClient } from '../temporal/client.js';
import { createWorkerContext } from '../workers/context.js';
import { createWorkflowWorker } from '../workers/workflow-worker.js';
import { installSdkLogging, sdkMetricsTelemetry } from '../workers/sdk-logging.js';
import { startHttpServer } from '../http/server.js';
import { appRoutes } from '../http/routes.js';
import { METRICS_PATH } from '../metrics/endpoint.js';
import { ensureSchedules, RETENTION_SCHEDULE_ID } from '../schedules/schedules.js';
import { untilServerReady } from '../temporal/not-ready-retry.js';
import { createLogger } from '../shared/log.js';

const log = createLogger('dev');
const defaultDataDir = fileURLToPath(new URL('../../.data/', import.meta.url));

/** Things to stop on exit, last started first. */
const stack: { name: string; stop: () => Promise<void> }[] = [];
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    for (const { name, stop } of stack.reverse()) {
      try {
        await stop();
        log.debug(`stopped ${name}`);
      } catch (err) {
        log.warn(`stopping ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  process.exit(code);
}

async function main(): Promise<void> {
  const userCfg = loadConfigOrExit();
  installSdkLogging(userCfg.LOG_LEVEL, sdkMetricsTelemetry(userCfg.METRICS_HOST, userCfg.TEMPORAL_METRICS_PORT));
  const dataDir = userCfg.DATA_DIR ? join(resolve(userCfg.DATA_DIR), '/') : defaultDataDir;
  mkdirSync(dataDir, { recursive: true });

  // Without Google, Anthropic or Discord credentials, the bundled emulators stand in.
  const demo = await startDemoWorld(userCfg, dataDir);
  stack.push({ name: 'emulators', stop: () => demo.close() });
  // The list page needs an operator token: without one, a fresh one for this run (printed below).
  const operatorToken = userCfg.APPROVALS_OPERATOR_TOKEN ? {} : { APPROVALS_OPERATOR_TOKEN: randomBytes(18).toString('base64url') };
  const cfg = loadConfigOrExit({ ...process.env, ...demo.env, ...operatorToken });
  const approvals = approvalsSettingsFromConfig(cfg);

  const database = await resolveDatabase(cfg, log);
  stack.push({ name: 'database', stop: () => database.stop() });
  log.info(`database ready (${database.source})`);

  const keys = await resolvePayloadKeys(cfg);
  const codec = new AesGcmPayloadCodec(keys);
  const uiOrigins = [`http://localhost:${cfg.TEMPORAL_UI_PORT}`, `http://127.0.0.1:${cfg.TEMPORAL_UI_PORT}`];
  const codecServer = await startCodecServer({
    port: cfg.CODEC_SERVER_PORT,
    codec,
    corsOrigins: [...new Set([cfg.CODEC_CORS_ORIGIN, ...uiOrigins])],
    token: cfg.CODEC_SERVER_TOKEN,
  });
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
  stack.push({
    name: 'workers',
    stop: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      await ctx.close();
    },
  });

  const http = await startHttpServer({
    host: cfg.HTTP_HOST,
    port: cfg.HTTP_PORT,
    routes: appRoutes(cfg, { prisma: ctx.prisma, client }),
  });
  stack.push({ name: 'http server', stop: () => http.close() });

  // A restarted dev server may answer slowly for a while: start-up calls wait for it, never exit on that.
  const startupRetry = { log: (m: string) => log.warn(m) };
  const schedules = await ensureSchedules(client, {
    retentionDays: cfg.RETENTION_DAYS,
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    sync: syncScheduleSettingsFromConfig(cfg),
    archiver: archiverScheduleSettingsFromConfig(cfg),
  }, startupRetry);
  // Run retention once now, so a fresh install shows a workflow in the Web UI right away.
  await untilServerReady(client.connection, 'retention trigger', () => client.schedule.getHandle(RETENTION_SCHEDULE_ID).trigger(), startupRetry);

  if (demo.gmail) {
    await ensureDemoRules(ctx.prisma);
    const demoAccount = await connectDemoAccount(
      demo.gmail,
      {
        prisma: ctx.prisma,
        vault: new TokenVault(await resolveTokenKey(cfg)),
        oauth: gmailOAuthSettings(cfg),
        sync: { client, taskQueue: cfg.TEMPORAL_TASK_QUEUE },
        labels: threadSettingsFromConfig(cfg).labels,
        pushTopic: cfg.GMAIL_PUSH_TOPIC,
      },
      { messages: cfg.DEMO_MAILBOX_MESSAGES, fullScanDays: cfg.SYNC_FULL_SCAN_DAYS },
    );
    log.info(`demo account ${DEMO_EMAIL} connected (${demoAccount.accountId}, ${demoAccount.how}); its inbox is being processed`);
  }

  const ui = temporal.uiUrl ?? `http://localhost:${cfg.TEMPORAL_UI_PORT}`;
  console.log(
    [
      '',
      'durable-inbox is running',
      `  Temporal Web UI   ${ui}/namespaces/${cfg.TEMPORAL_NAMESPACE}/workflows`,
      `  Temporal          ${temporal.address}${temporal.reused ? ' (already running, reused)' : ''}`,
      `  Codec server      ${codecServer.url}${cfg.CODEC_SERVER_TOKEN ? ' (bearer token required)' : ''}`,
      `  Health            ${http.url}/healthz`,
      `  Metrics           ${http.url}${METRICS_PATH}${cfg.TEMPORAL_METRICS_PORT > 0 ? `  (Temporal SDK: http://${cfg.METRICS_HOST}:${cfg.TEMPORAL_METRICS_PORT}/metrics)` : ''}`,
      `  Approvals         ${approvals.publicBaseUrl}/approvals?token=${userCfg.APPROVALS_OPERATOR_TOKEN ? '<APPROVALS_OPERATOR_TOKEN>' : approvals.operatorToken}`,
      ...(demo.gmail ? [`  Gmail emulator    ${demo.gmail.url}  (demo mailbox ${DEMO_EMAIL})`] : []),
      ...(demo.anthropic ? [`  Anthropic emul.   ${demo.anthropic.url}`] : []),
      ...(demo.discord ? [`  Discord emulator  ${demo.discord.url}/__emulator/messages  (the approval requests it received)`] : []),
      `  Schedules         ${schedules.join(', ')}  (npm run temporal:cli -- schedule list)`,
      '  Ctrl-C stops everything started here.',
      '',
    ].join('\n'),
  );

  // Workers also stop on their own when the Temporal runtime sees SIGINT/SIGTERM.
  const onSignal = (signal: NodeJS.Signals) => {
    log.info(`${signal}: shutting down`);
    void shutdown(0);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await Promise.all(running);
  if (!stopping) {
    log.error('a worker stopped unexpectedly');
    await shutdown(1);
  }
}

main().catch(async (err: unknown) => {
  log.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  await shutdown(1);
});
