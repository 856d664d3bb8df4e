// The app's HTTP routes, from the configuration: the health check, and Gmail push when
// PUSH_AUDIENCE and PUSH_SERVICE_ACCOUNT_EMAIL are set. `npm run dev` and `npm run start:http`
// serve the same routes.
import type { Client } from '@temporalio/client';
import type { Env } from '../config.js';
import type { PrismaClient } from '../db/client.js';
import { createLogger } from '../shared/log.js';
import { PUSH_PATH, pushRoute } from '../sync/push-route.js';
import { healthRoute } from './health.js';
import type { Routes } from './server.js';

const log = createLogger('http');

export function appRoutes(cfg: Env, deps: { prisma: PrismaClient; client: Client }): Routes {
  return {
    'GET /healthz': healthRoute({ temporal: deps.client, prisma: deps.prisma }),
    ...pushRoutes(cfg, deps),
  };
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
