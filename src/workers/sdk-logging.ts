// The Temporal SDK's log lines in our one-line format (`[temporal]`), at our LOG_LEVEL, without the
// notices every activity-only worker prints at start (they are expected here: the Gmail and LLM
// workers have no workflows, by design), and the SDK's worker metrics on a Prometheus endpoint.
// Call before the first connection: it installs the Runtime.
import { DefaultLogger, Runtime, type LogEntry, type LogLevel as SdkLogLevel, type TelemetryOptions } from '@temporalio/worker';
import { createLogger, type Logger, type LogLevel } from '../shared/log.js';

const EXPECTED_NOTICES = [/^No workflows registered/, /^No Nexus services registered/, /^No activities registered/];

const SDK_LEVEL: Record<LogLevel, SdkLogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };

function plain(value: unknown): unknown {
  return value instanceof Error ? `${value.name}: ${value.message}` : value;
}

/** What the SDK logs, passed on to `log` (one line each; expected start-up notices dropped). */
export function sdkLogFunction(log: Logger): (entry: LogEntry) => void {
  return (entry) => {
    if (EXPECTED_NOTICES.some((notice) => notice.test(entry.message))) return;
    const { sdkComponent: _component, taskQueue, ...rest } = entry.meta ?? {};
    const meta = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, plain(v)]));
    const message = taskQueue ? `${entry.message} (${String(taskQueue)})` : entry.message;
    if (entry.level === 'ERROR') log.error(message, meta);
    else if (entry.level === 'WARN') log.warn(message, meta);
    else if (entry.level === 'INFO') log.info(message, meta);
    else log.debug(message, meta);
  };
}

/** The SDK's Prometheus exporter (its own /metrics) on host:port; port 0: none. */
export function sdkMetricsTelemetry(host: string, port: number): TelemetryOptions | undefined {
  return port > 0 ? { metrics: { prometheus: { bindAddress: `${host}:${port}` } } } : undefined;
}

export function installSdkLogging(level: LogLevel, telemetryOptions?: TelemetryOptions): void {
  const log = createLogger('temporal');
  const install = (options?: TelemetryOptions) =>
    Runtime.install({ logger: new DefaultLogger(SDK_LEVEL[level], sdkLogFunction(log)), ...(options ? { telemetryOptions: options } : {}) });
  try {
    install(telemetryOptions);
  } catch (err) {
    if (!telemetryOptions?.metrics) throw err;
    // A busy metrics port must not keep the worker from working (several on one host share the default).
    log.error(`the Temporal SDK's metrics are off: ${err instanceof Error ? err.message : String(err)} (set TEMPORAL_METRICS_PORT to a free port, or 0)`);
    install(undefined);
  }
}
