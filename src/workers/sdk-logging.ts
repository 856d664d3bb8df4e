// The Temporal SDK's log lines in our one-line format (`[temporal]`), at our LOG_LEVEL, without the
// notices every activity-only worker prints at start (they are expected here: the Gmail and LLM
// workers have no workflows, by design). Call before the first connection: it installs the Runtime.
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

export function installSdkLogging(level: LogLevel, telemetryOptions?: TelemetryOptions): void {
  Runtime.install({
    logger: new DefaultLogger(SDK_LEVEL[level], sdkLogFunction(createLogger('temporal'))),
    ...(telemetryOptions ? { telemetryOptions } : {}),
  });
}
