// The pieces `npm run dev` and `npm run stack` both start around the workers, from the
// configuration: the codec server (open to the Web UI's origins), the HTTP server, the schedules,
// the demo account, and the banner that says where to look.
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { approvalsSettingsFromConfig, archiverScheduleSettingsFromConfig, codecServerSettingsFromConfig, correctionsDays, gmailOAuthSettings, syncScheduleSettingsFromConfig, threadSettingsFromConfig, userScheduleSettingsFromConfig, wholeDays, learningSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { TokenVault } from '../accounts/token-vault.js';
import { startCodecServer, type CodecServer } from '../codec-server/server.js';
import type { PrismaClient } from '../db/client.js';
import { appRoutes } from '../http/routes.js';
import { startHttpServer, type HttpServer } from '../shared/http-server.js';
import { ensureSchedules, RETENTION_SCHEDULE_ID } from '../schedules/schedules.js';
import { AesGcmPayloadCodec, type PayloadKey } from '../temporal/codec.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import { untilServerReady } from '../temporal/not-ready-retry.js';
import { METRICS_PATH } from '../http/metrics-route.js';
import { connectDemoAccount, DEMO_EMAIL, ensureDemoBrief, ensureDemoRules, type DemoWorld } from './demo.js';
import { ensureDemoTriageLesson, ensureDemoWritingLesson } from './demo-lessons.js';
import type { Logger } from '../shared/log.js';

/** Without APPROVALS_OPERATOR_TOKEN, a fresh one for this run (the list page needs one; the banner prints it). */
export function operatorTokenForRun(userCfg: Env): Record<string, string> {
  return userCfg.APPROVALS_OPERATOR_TOKEN ? {} : { APPROVALS_OPERATOR_TOKEN: randomBytes(18).toString('base64url') };
}

/** The codec server, callable from the Web UI on `uiPort` (and CODEC_CORS_ORIGIN). */
export function startAppCodecServer(cfg: Env, keys: readonly PayloadKey[], uiPort: number): Promise<CodecServer> {
  const uiOrigins = [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`];
  const settings = codecServerSettingsFromConfig(cfg);
  return startCodecServer({
    port: settings.port,
    codec: new AesGcmPayloadCodec(keys),
    corsOrigins: [...new Set([settings.corsOrigin, ...uiOrigins])],
    token: settings.token,
  });
}

export function startAppHttpServer(cfg: Env, deps: { prisma: PrismaClient; client: Client }): Promise<HttpServer> {
  return startHttpServer({ host: cfg.HTTP_HOST, port: cfg.HTTP_PORT, routes: appRoutes(cfg, deps) });
}

/**
 * Every schedule, and one retention run now (a fresh install shows a workflow in the Web UI right
 * away). A server that answers slowly after a restart is waited for, never a reason to exit.
 */
export async function ensureAppSchedules(client: Client, cfg: Env, log: Logger): Promise<string[]> {
  const startupRetry = { log: (m: string) => log.warn(m) };
  const schedules = await ensureSchedules(
    client,
    {
      retentionDays: wholeDays(cfg.RETENTION),
      evidenceDays: cfg.LEARNING_EVIDENCE_DAYS,
      correctionsDays: correctionsDays(cfg),
      learning: { every: cfg.LEARNING_EVERY, llmTaskQueue: cfg.LLM_TASK_QUEUE, gmailTaskQueue: cfg.GMAIL_TASK_QUEUE },
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      sync: syncScheduleSettingsFromConfig(cfg),
      archiver: archiverScheduleSettingsFromConfig(cfg),
    },
    startupRetry,
  );
  await untilServerReady(client.connection, 'retention trigger', () => client.schedule.getHandle(RETENTION_SCHEDULE_ID).trigger(), startupRetry);
  return schedules;
}

/**
 * With the Gmail emulator: the demo rules and the demo account, its inbox handed to the workflows.
 * The demo's writing lesson is learned in the background (it waits for our drafts); the `stop`
 * returned ends that at Ctrl-C.
 */
export async function connectDemo(demo: DemoWorld, cfg: Env, deps: { prisma: PrismaClient; client: Client }, log: Logger): Promise<{ stop(): Promise<void> } | undefined> {
  if (!demo.gmail) return undefined;
  await ensureDemoRules(deps.prisma);
  const account = await connectDemoAccount(
    demo.gmail,
    {
      prisma: deps.prisma,
      vault: new TokenVault(await resolveTokenKey(cfg)),
      oauth: gmailOAuthSettings(cfg),
      sync: { client: deps.client, taskQueue: cfg.TEMPORAL_TASK_QUEUE },
      labels: threadSettingsFromConfig(cfg).labels,
      pushTopic: cfg.GMAIL_PUSH_TOPIC,
    },
    { messages: cfg.DEMO_MAILBOX_MESSAGES, fullScanDays: wholeDays(cfg.SYNC_FULL_SCAN_BACK) },
  );
  log.info(`demo account ${DEMO_EMAIL} connected (${account.accountId}, ${account.how}); its inbox is being processed`);
  const proposed = await ensureDemoTriageLesson(demo.gmail, deps.prisma, account.accountId, DEMO_EMAIL, learningSettingsFromConfig(cfg));
  if (proposed.length > 0) log.info(`demo lesson waiting for you (from two newsletters moved back to the inbox): npm run cli -- memory show ${proposed[0]}`);
  const brief = await ensureDemoBrief(deps.client, deps.prisma, account.accountId, userScheduleSettingsFromConfig(cfg));
  log.info(`demo morning brief scheduled at 07:30 (schedule-${brief}); see one now: npm run cli -- schedules trigger ${brief}`);
  const abort = new AbortController();
  void ensureDemoWritingLesson({
    gmail: demo.gmail,
    prisma: deps.prisma,
    client: deps.client,
    sync: { client: deps.client, taskQueue: cfg.TEMPORAL_TASK_QUEUE },
    accountId: account.accountId,
    email: DEMO_EMAIL,
    queues: { workflow: cfg.TEMPORAL_TASK_QUEUE, llm: cfg.LLM_TASK_QUEUE, gmail: cfg.GMAIL_TASK_QUEUE },
    signal: abort.signal,
  }).then(
    (ids) => {
      if (ids.length > 0) log.info(`demo writing lesson waiting for you (the demo user opened two replies with "Hello"): npm run cli -- memory show ${ids[0]}`);
    },
    (err: unknown) => {
      if (!abort.signal.aborted) log.warn(`demo writing lesson not learned: ${err instanceof Error ? err.message : String(err)}`);
    },
  );
  return {
    // Not awaited: a learning run it waits for may outlast the workers; whatever it was doing fails quietly.
    stop: async () => abort.abort(),
  };
}

export interface BannerFacts {
  userCfg: Env;
  cfg: Env;
  uiUrl: string;
  /** The Temporal line, e.g. the address and how it runs. */
  temporal: string;
  codecServer: CodecServer;
  http: HttpServer;
  demo: DemoWorld;
  schedules: string[];
  /** Lines shown before the last one (e.g. the worker processes). */
  extra?: string[];
}

/** What is running and where to look. */
export function runningBanner(f: BannerFacts): string {
  const approvals = approvalsSettingsFromConfig(f.cfg);
  return [
    '',
    'durable-inbox is running',
    `  Temporal Web UI   ${f.uiUrl}/namespaces/${f.cfg.TEMPORAL_NAMESPACE}/workflows`,
    `  Temporal          ${f.temporal}`,
    `  Codec server      ${f.codecServer.url}${f.cfg.CODEC_SERVER_TOKEN ? ' (bearer token required)' : ''}`,
    `  Health            ${f.http.url}/healthz`,
    `  Metrics           ${f.http.url}${METRICS_PATH}${f.cfg.TEMPORAL_METRICS_PORT > 0 ? `  (Temporal SDK: http://${f.cfg.METRICS_HOST}:${f.cfg.TEMPORAL_METRICS_PORT}/metrics)` : ''}`,
    `  Approvals         ${approvals.publicBaseUrl}/approvals?token=${f.userCfg.APPROVALS_OPERATOR_TOKEN ? '<APPROVALS_OPERATOR_TOKEN>' : approvals.operatorToken}`,
    ...(f.demo.gmail ? [`  Gmail emulator    ${f.demo.gmail.url}  (demo mailbox ${DEMO_EMAIL})`] : []),
    ...(f.demo.anthropic ? [`  Anthropic emul.   ${f.demo.anthropic.url}`] : []),
    ...(f.demo.discord ? [`  Discord emulator  ${f.demo.discord.url}/__emulator/messages  (the approval requests it received)`] : []),
    `  Schedules         ${f.schedules.join(', ')}  (npm run temporal:cli -- schedule list)`,
    ...(f.extra ?? []),
    '  Ctrl-C stops everything started here.',
    '',
  ].join('\n');
}
