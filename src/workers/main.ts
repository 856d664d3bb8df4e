// Standalone entrypoint shared by the worker files: configuration, database, context, metrics
// (ours on METRICS_PORT, the SDK's on TEMPORAL_METRICS_PORT), run until SIGINT/SIGTERM (the
// Temporal runtime's signal handlers shut the worker down gracefully), then release everything
// and exit 0.
import type { Worker } from '@temporalio/worker';
import { loadConfigOrExit, type Env } from '../config/env.js';
import { resolveDatabase } from '../db/resolve-database.js';
import type { HttpServer } from '../shared/http-server.js';
import { METRICS_PATH, startMetricsServer } from '../http/metrics-route.js';
import { createLogger, type Logger } from '../shared/log.js';
import { describeTemporalConnection } from '../temporal/connection.js';
import { startTracing, stopTracing } from '../temporal/tracing.js';
import { createWorkerContext, type WorkerContext } from './context.js';
import { installSdkLogging, sdkMetricsTelemetry } from './sdk-logging.js';

/** Our /metrics for this process; a busy port is logged, and the worker runs without it. */
async function startWorkerMetrics(cfg: Env, ctx: WorkerContext, log: Logger): Promise<HttpServer | undefined> {
  if (cfg.METRICS_PORT === 0) return undefined;
  try {
    const server = await startMetricsServer({ host: cfg.METRICS_HOST, port: cfg.METRICS_PORT, db: ctx.sql });
    log.info(`metrics on ${server.url}${METRICS_PATH}`);
    return server;
  } catch (err) {
    log.error(`metrics are off: ${err instanceof Error ? err.message : String(err)} (set METRICS_PORT to a free port, or 0)`);
    return undefined;
  }
}

export async function runWorkerMain(name: string, create: (ctx: WorkerContext) => Promise<Worker>): Promise<void> {
  const cfg = loadConfigOrExit(process.env, { modeRequired: true });
  const log = createLogger(name);
  installSdkLogging(cfg.LOG_LEVEL, sdkMetricsTelemetry(cfg.METRICS_HOST, cfg.TEMPORAL_METRICS_PORT));
  await startTracing(cfg, { serviceName: `durable-inbox-${name}` });
  const database = await resolveDatabase(cfg, log);
  const ctx = await createWorkerContext(cfg, database.url);
  const metrics = await startWorkerMetrics(cfg, ctx, log);
  try {
    const worker = await create(ctx);
    log.info(`polling task queue ${worker.options.taskQueue} on ${describeTemporalConnection(cfg)}`);
    await worker.run();
    log.info('stopped cleanly');
  } finally {
    await metrics?.close();
    await ctx.close();
    await database.stop();
    await stopTracing();
  }
  process.exit(0);
}
