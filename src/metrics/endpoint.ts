// GET /metrics: this process's metrics in the Prometheus text format. The HTTP server serves it
// among its routes; a worker process running alone serves it on its own listener (METRICS_PORT).
import type { SqlExecutor } from '../db/sql-executor.js';
import { startHttpServer, type HttpServer, type RouteHandler } from '../http/server.js';
import { registry } from './metrics.js';
import { PROMETHEUS_CONTENT_TYPE } from './registry.js';

export const METRICS_PATH = '/metrics';

export function metricsRoute(db: SqlExecutor): RouteHandler {
  return async (_req, res) => {
    const body = await registry.render(db);
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' });
    res.end(body);
  };
}

/** A listener serving only /metrics, for processes without the app's HTTP server. */
export function startMetricsServer(opts: { host: string; port: number; db: SqlExecutor }): Promise<HttpServer> {
  return startHttpServer({ host: opts.host, port: opts.port, routes: { [`GET ${METRICS_PATH}`]: metricsRoute(opts.db) } });
}
