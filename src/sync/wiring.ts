// Configuration → sync wiring, for the entrypoints (dev orchestrator, HTTP server, CLI).
import type { Client } from '@temporalio/client';
import type { Env } from '../config.js';
import type { PrismaClient } from '../db/client.js';
import type { RouteHandler } from '../http/server.js';
import { PUSH_PATH, pushRoute } from './push-route.js';
import type { SyncScheduleSettings } from '../schedules/schedules.js';
import { createLogger } from '../shared/log.js';
import { WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';

const log = createLogger('sync');

export function syncScheduleSettingsFromConfig(cfg: Env): SyncScheduleSettings {
  return {
    pollEvery: cfg.SYNC_POLL_EVERY,
    fullScanEvery: cfg.SYNC_FULL_SCAN_EVERY,
    fullScanDays: cfg.SYNC_FULL_SCAN_DAYS,
    watchRenewalEvery: cfg.WATCH_RENEWAL_EVERY,
    watchRenewWithinMs: cfg.WATCH_RENEW_WITHIN_HOURS * 3600_000,
  };
}

/** `{'POST /gmail/push': handler}` when PUSH_AUDIENCE and PUSH_SERVICE_ACCOUNT_EMAIL are set, else `{}`. */
export function pushRoutesFromConfig(
  cfg: Env,
  deps: { prisma: PrismaClient; client: Client; taskQueue?: string },
  overrides: { audience?: string; serviceAccountEmail?: string; certsUrl?: string } = {},
): Record<string, RouteHandler> {
  const audience = overrides.audience ?? cfg.PUSH_AUDIENCE;
  const serviceAccountEmail = overrides.serviceAccountEmail ?? cfg.PUSH_SERVICE_ACCOUNT_EMAIL;
  const certsUrl = overrides.certsUrl ?? cfg.GOOGLE_CERTS_URL;
  if (!audience || !serviceAccountEmail) {
    log.warn('PUSH_AUDIENCE or PUSH_SERVICE_ACCOUNT_EMAIL unset: no push endpoint, mail arrives through the fallback poll');
    return {};
  }
  return {
    [`POST ${PUSH_PATH}`]: pushRoute({
      prisma: deps.prisma,
      sync: { client: deps.client, ...(deps.taskQueue ? { taskQueue: deps.taskQueue } : {}) },
      audience,
      serviceAccountEmail,
      ...(certsUrl ? { certsUrl } : {}),
    }),
  };
}

/** The main (workflow) task queue: TEMPORAL_TASK_QUEUE when the configuration has it, else the default. */
export function workflowTaskQueue(cfg: Env): string {
  return (cfg as Env & { TEMPORAL_TASK_QUEUE?: string }).TEMPORAL_TASK_QUEUE ?? WORKFLOW_TASK_QUEUE;
}
