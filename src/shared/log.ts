// A minimal leveled logger: one line per event, `component` first, never payload contents. A value
// that came from mail cannot forge a line or hide text: control characters, line breaks and bidi
// overrides are dropped from the message, and the metadata is JSON (which escapes the rest).
import { displaySafe } from './display-text.js';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
// Set from LOG_LEVEL by each entrypoint (loadConfigOrExit).
let threshold: LogLevel = 'info';

export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

// A process whose stdout is a protocol (the MCP server over stdio) logs every line to stderr.
let infoToStderr = false;

export function logEverythingToStderr(): void {
  infoToStderr = true;
}

export interface Logger {
  debug(msg: string, meta?: Record<string, unknown>): void;
  info(msg: string, meta?: Record<string, unknown>): void;
  warn(msg: string, meta?: Record<string, unknown>): void;
  error(msg: string, meta?: Record<string, unknown>): void;
}

export function createLogger(component: string): Logger {
  const emit = (level: LogLevel, msg: string, meta?: Record<string, unknown>) => {
    if (order[level] < order[threshold]) return;
    const suffix = meta && Object.keys(meta).length > 0 ? ` ${displaySafe(JSON.stringify(meta))}` : '';
    const line = `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} [${component}] ${displaySafe(msg)}${suffix}`;
    if (level === 'error' || level === 'warn' || infoToStderr) console.error(line);
    else console.log(line);
  };
  return {
    debug: (m, meta) => emit('debug', m, meta),
    info: (m, meta) => emit('info', m, meta),
    warn: (m, meta) => emit('warn', m, meta),
    error: (m, meta) => emit('error', m, meta),
  };
}
