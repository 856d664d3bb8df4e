// GET /metrics: this process's metrics in the Prometheus text format. The HTTP server serves it
// among its routes; a worker process running alone serves it on its own listener (METRICS_PORT).
// Gauges about shared state (accounts, backfill alerts, the LLM breaker) are read from PostgreSQL at
// scrape time, so every process reports the same values for them.
import { currentBackfillAlerts } from '../backfill/alert-journal.js';
import { listBreakers } from '../llm/breaker-store.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { startHttpServer, type HttpServer, type RouteHandler } from '../shared/http-server.js';
import { registry } from '../metrics/metrics.js';
import { PROMETHEUS_CONTENT_TYPE, type Sample } from '../metrics/registry.js';

registry.scrapedGauge({
  name: 'durable_inbox_llm_breaker_open',
  help: 'Whether the LLM circuit breaker of the account is open (1) or closed (0).',
  read: async (db) => (await listBreakers(db, { openOnly: false })).map((b) => ({ labels: { account: b.accountId }, value: b.state === 'open' ? 1 : 0 })),
});

registry.scrapedGauge({
  name: 'durable_inbox_accounts',
  help: 'Connected accounts by status (needs_reauth: the grant was revoked, sync paused).',
  read: async (db) => {
    const rows = await db.query<{ status: string; n: number }>(`SELECT status::text AS status, count(*)::int AS n FROM accounts GROUP BY status`, []);
    return rows.map((r) => ({ labels: { status: r.status }, value: Number(r.n) }));
  },
});

const LEVEL_VALUE: Record<string, number> = { ok: 0, warn: 1, critical: 2 };

registry.scrapedGauge({
  name: 'durable_inbox_backfill_alert_level',
  help: "The current backfill's alert level per account and kind: 0 ok, 1 warn, 2 critical.",
  read: async (db): Promise<Sample[]> =>
    (await currentBackfillAlerts(db)).map((a) => ({ labels: { account: a.accountId, kind: a.kind }, value: LEVEL_VALUE[a.level] ?? 0 })),
});

export const METRICS_PATH = '/metrics';

/** The process's metrics and the state gauges, in the text format. */
export function renderMetrics(db: SqlExecutor): Promise<string> {
  return registry.render(db);
}

export function metricsRoute(db: SqlExecutor): RouteHandler {
  return async (_req, res) => {
    const body = await renderMetrics(db);
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' });
    res.end(body);
  };
}

/** A listener serving only /metrics, for processes without the app's HTTP server. */
export function startMetricsServer(opts: { host: string; port: number; db: SqlExecutor }): Promise<HttpServer> {
  return startHttpServer({ host: opts.host, port: opts.port, routes: { [`GET ${METRICS_PATH}`]: metricsRoute(opts.db) } });
}
