// The app's HTTP routes, from the configuration: the health check, the metrics, the approvals page, the
// MCP server (Streamable HTTP, bearer tokens), and Gmail
// push when PUSH_AUDIENCE and PUSH_SERVICE_ACCOUNT_EMAIL are set. `npm run dev` and
// `npm run start:http` serve the same routes.
import type { Client } from '@temporalio/client';
import { approvalsSettingsFromConfig, healthSettingsFromConfig, learningSettingsFromConfig, threadSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { deriveTriageLessons } from '../learning/triage-lessons.js';
import { approvalKeysOnce } from '../actions/approval-links.js';
import { cancelFollowUp, decideAction } from '../thread/decide.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { createLogger } from '../shared/log.js';
import { PUSH_PATH, pushRoute } from '../sync/push-route.js';
import { mcpRoutes } from '../mcp/http-route.js';
import { approvalsRoutes } from './approvals-routes.js';
import { healthRoute } from './health.js';
import { defaultReasonSources } from './health-reasons.js';
import { METRICS_PATH, metricsRoute } from './metrics-route.js';
import type { Routes } from '../shared/http-server.js';

const log = createLogger('http');

export function appRoutes(cfg: Env, deps: { prisma: PrismaClient; client: Client }): Routes {
  return {
    'GET /healthz': healthRoute({
      temporal: deps.client,
      prisma: deps.prisma,
      reasons: defaultReasonSources(healthSettingsFromConfig(cfg)),
      operatorToken: approvalsSettingsFromConfig(cfg).operatorToken,
    }),
    [`GET ${METRICS_PATH}`]: metricsRoute(prismaExecutor(deps.prisma)),
    ...approvalRoutes(cfg, deps),
    ...mcpRoutes({ cfg, ...deps, allowedOrigins: cfg.MCP_ALLOWED_ORIGINS }),
    ...pushRoutes(cfg, deps),
  };
}

function approvalRoutes(cfg: Env, deps: { prisma: PrismaClient; client: Client }): Routes {
  const db = prismaExecutor(deps.prisma);
  const learning = learningSettingsFromConfig(cfg);
  const decideDeps = { client: deps.client, db, taskQueue: cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: cfg.GMAIL_TASK_QUEUE };
  return approvalsRoutes({
    db,
    decide: (actionId, decision, by) => decideAction(decideDeps, actionId, decision, by),
    followUps: {
      cancel: (actionId) => cancelFollowUp({ ...decideDeps, threadSettings: threadSettingsFromConfig(cfg) }, actionId),
      defaultZone: cfg.DEFAULT_TIME_ZONE,
      label: cfg.LABEL_FOLLOW_UP,
    },
    keys: approvalKeysOnce(cfg),
    settings: approvalsSettingsFromConfig(cfg),
    learning: {
      enabled: learning.enabled,
      dryRunWindowMs: learning.dryRunWindowMs,
      async propose() {
        const accounts = await deps.prisma.account.findMany({ where: { status: 'active' }, select: { id: true } });
        for (const a of accounts) await deriveTriageLessons(db, { accountId: a.id, settings: learning });
      },
    },
  });
}

function pushRoutes(cfg: Env, deps: { prisma: PrismaClient; client: Client }): Routes {
  if (!cfg.PUSH_AUDIENCE || !cfg.PUSH_SERVICE_ACCOUNT_EMAIL) {
    log.warn('PUSH_AUDIENCE or PUSH_SERVICE_ACCOUNT_EMAIL unset: no push endpoint, mail arrives through the fallback poll');
    return {};
  }
  return {
    [`POST ${PUSH_PATH}`]: pushRoute({
      prisma: deps.prisma,
      sync: { client: deps.client, taskQueue: cfg.TEMPORAL_TASK_QUEUE },
      audience: cfg.PUSH_AUDIENCE,
      serviceAccountEmail: cfg.PUSH_SERVICE_ACCOUNT_EMAIL,
      ...(cfg.GOOGLE_CERTS_URL ? { certsUrl: cfg.GOOGLE_CERTS_URL } : {}),
    }),
  };
}
