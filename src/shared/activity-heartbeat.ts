// Liveness for activities that wait on one remote call: heartbeats while the call runs, so a worker
// that died or hangs is noticed after the activity's heartbeat timeout rather than its start-to-close.
import { Context } from '@temporalio/activity';

/**
 * Runs `work`, heartbeating `details` every third of the heartbeat timeout. Without a heartbeat
 * timeout (or outside an activity) it just runs `work`.
 *
 * No heartbeat at the start: the server's heartbeat clock starts with the attempt, and the SDK sends
 * a first heartbeat at once (a server write per activity), so calls that finish within a third of
 * the timeout (nearly all) send none.
 */
export async function heartbeatWhile<T>(work: () => Promise<T>, details?: unknown): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return work(); // called outside an activity (tests of the functions themselves)
  }
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  if (!timeoutMs) return work();
  const timer = setInterval(() => ctx.heartbeat(details), Math.max(100, Math.floor(timeoutMs / 3)));
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** The activities, each heartbeating while it runs (heartbeatWhile): for activities with a short heartbeat timeout. */
export function heartbeatingWhileRunning<T extends object>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] =
      typeof fn === 'function'
        ? (...args: unknown[]) => heartbeatWhile(() => (fn as (...a: unknown[]) => Promise<unknown>)(...args))
        : fn;
  }
  return wrapped as T;
}
