// The boundary of the thread's timers: what a snooze, remind, send-later, unsnooze or cancel signal
// may carry, checked with zod where it comes in (the workflow's signal handlers, and the client
// helpers the CLI and the sync's label hand-off use). Workflow-safe: zod and plain data only.
import { z } from 'zod';
import { WAKE_KINDS, type TimerRequestEvent } from './contracts.js';

/** Far enough for any real timer; a bigger number is a mistake (seconds for ms, say). */
const LATEST_MS = Date.UTC(2200, 0, 1);

const instant = z.number().int().min(0).max(LATEST_MS);

export const timerRequestSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('snooze'), at: instant }),
  z.object({ kind: z.literal('remind'), at: instant, note: z.string().max(500).optional() }),
  z.object({ kind: z.literal('send_later'), at: instant }),
  z.object({ kind: z.literal('unsnooze') }),
  z.object({ kind: z.literal('cancel'), timer: z.enum(WAKE_KINDS).optional() }),
]);

export const timerRequestEventSchema = z.object({
  type: z.literal('timer_request'),
  requestId: z.string().min(1).max(200),
  request: timerRequestSchema,
  by: z.enum(['user', 'label']),
  label: z.string().min(1).max(225).optional(),
});

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
  const parsed = timerRequestEventSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { error: `${issue.path.join('.') || 'input'}: ${issue.message}` };
  }
  if (parsed.data.request.kind !== SIGNAL_REQUEST_KIND[signal]) {
    return { error: `the ${signal} signal carries a ${SIGNAL_REQUEST_KIND[signal]} request, not ${parsed.data.request.kind}` };
  }
  return { event: parsed.data as TimerRequestEvent };
}
