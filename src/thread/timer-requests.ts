// The boundary of the thread's timers: what a snooze, remind, send-later, unsnooze or cancel signal
// may carry, checked where it comes in (the workflow's signal handlers, and the client helpers the
// CLI and the sync's label hand-off use). Workflow-safe: plain checks (src/shared/plain-checks.ts),
// no schema library in workflow code.
import { checked, checkInteger, checkLiteral, checkObject, checkOneOf, checkString, optionalField, type CheckPath } from '../shared/plain-checks.js';
import { WAKE_KINDS, type TimerRequest, type TimerRequestEvent } from './contracts.js';

/** Far enough for any real timer; a bigger number is a mistake (seconds for ms, say). */
const LATEST_MS = Date.UTC(2200, 0, 1);

const instant = (value: unknown, path: CheckPath) => checkInteger(value, path, { min: 0, max: LATEST_MS });
const REQUEST_KINDS = ['snooze', 'remind', 'send_later', 'unsnooze', 'cancel'] as const;

/** The request, with only the fields its kind has. */
function checkTimerRequest(value: unknown, path: CheckPath): TimerRequest {
  const o = checkObject(value, path);
  const kind = checkOneOf(o['kind'], REQUEST_KINDS, [...path, 'kind']);
  switch (kind) {
    case 'snooze':
    case 'send_later':
      return { kind, at: instant(o['at'], [...path, 'at']) };
    case 'remind':
      return { kind, at: instant(o['at'], [...path, 'at']), ...optionalField(o, 'note', path, (v, p) => checkString(v, p, { max: 500 })) };
    case 'unsnooze':
      return { kind };
    case 'cancel':
      return { kind, ...optionalField(o, 'timer', path, (v, p) => checkOneOf(v, WAKE_KINDS, p)) };
  }
}

/** A timer request event, with only its own fields; throws CheckFailure. */
function checkTimerRequestEvent(value: unknown): TimerRequestEvent {
  const o = checkObject(value, []);
  return {
    type: checkLiteral(o['type'], 'timer_request', ['type']),
    requestId: checkString(o['requestId'], ['requestId'], { min: 1, max: 200 }),
    request: checkTimerRequest(o['request'], ['request']),
    by: checkOneOf(o['by'], ['user', 'label'] as const, ['by']),
    ...optionalField(o, 'decidedBy', [], (v, p) => checkString(v, p, { min: 1, max: 40 })),
    ...optionalField(o, 'label', [], (v, p) => checkString(v, p, { min: 1, max: 225 })),
  };
}

/** The event if it is a well-formed timer request (any kind); else why not. */
export function parseTimerRequestEvent(raw: unknown): { event: TimerRequestEvent } | { error: string } {
  const result = checked(() => checkTimerRequestEvent(raw));
  return 'value' in result ? { event: result.value } : result;
}

export type TimerSignalName = 'snooze' | 'unsnooze' | 'remind' | 'sendLater' | 'cancelTimer';

/** The request kind each signal carries. */
export const SIGNAL_REQUEST_KIND: Record<TimerSignalName, TimerRequestEvent['request']['kind']> = {
  snooze: 'snooze',
  unsnooze: 'unsnooze',
  remind: 'remind',
  sendLater: 'send_later',
  cancelTimer: 'cancel',
};

/** The event, when it is one this signal may carry; else why not. */
export function parseTimerRequest(signal: TimerSignalName, raw: unknown): { event: TimerRequestEvent } | { error: string } {
  const parsed = parseTimerRequestEvent(raw);
  if ('error' in parsed) return parsed;
  if (parsed.event.request.kind !== SIGNAL_REQUEST_KIND[signal]) {
    return { error: `the ${signal} signal carries a ${SIGNAL_REQUEST_KIND[signal]} request, not ${parsed.event.request.kind}` };
  }
  return parsed;
}
