// The SDK's log entries as our one-line logs: levels kept, task queue in the text, errors readable,
// and the start-up notices of activity-only workers (expected by design) left out.
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '@temporalio/worker';
import type { Logger } from '../../src/shared/log.js';
import { sdkLogFunction } from '../../src/workers/sdk-logging.js';

function capture() {
  const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
  const at = (level: string) => (msg: string, meta?: Record<string, unknown>) => void lines.push([level, msg, meta]);
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { lines, fn: sdkLogFunction(log) };
}

const entry = (level: LogEntry['level'], message: string, meta?: Record<string, unknown>): LogEntry => ({
  level,
  message,
  meta,
  timestampNanos: 0n,
});

describe('SDK log lines', () => {
  it('keeps the level, names the task queue, drops the SDK component and flattens errors', () => {
    const { lines, fn } = capture();
    fn(entry('INFO', 'Worker state changed', { sdkComponent: 'worker', taskQueue: 'durable-inbox', state: 'RUNNING' }));
    fn(entry('ERROR', 'Activity failed', { sdkComponent: 'activity', error: new TypeError('boom'), attempt: 3 }));
    fn(entry('TRACE', 'polling'));
    expect(lines).toEqual([
      ['info', 'Worker state changed (durable-inbox)', { state: 'RUNNING' }],
      ['error', 'Activity failed', { error: 'TypeError: boom', attempt: 3 }],
      ['debug', 'polling', {}],
    ]);
  });

  it('leaves out the notices of workers that have no workflows or Nexus services by design', () => {
    const { lines, fn } = capture();
    fn(entry('WARN', 'No workflows registered, not polling for workflow tasks', { taskQueue: 'durable-inbox-llm' }));
    fn(entry('INFO', 'No Nexus services registered, not polling for Nexus tasks', { taskQueue: 'durable-inbox' }));
    fn(entry('WARN', 'Workflow task failed', { taskQueue: 'durable-inbox' }));
    expect(lines.map(([level, msg]) => `${level} ${msg}`)).toEqual(['warn Workflow task failed (durable-inbox)']);
  });
});
