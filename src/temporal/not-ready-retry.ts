// Start-up calls to a Temporal server that may still be coming up: a restarted dev server accepts
// connections before it answers every call (schedule calls are slow or time out for a while, and it
// logs "Slow gRPC call"). Each try is bounded; errors of a server that is not ready yet are retried
// with backoff until an overall deadline, with a log line per retry; any other error fails at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { isGrpcServiceError, type Connection } from '@temporalio/client';

export interface NotReadyRetry {
  /** How long to keep trying, in all. */
  waitMs?: number;
  /** Bound of one try. */
  attemptMs?: number;
  log?: (m: string) => void;
}

/** gRPC codes of a server that is starting or overloaded: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED. */
const NOT_READY_CODES = new Set([14, 4, 8]);

/** The error, or one of its causes, says the server is not ready yet. */
export function serverNotReady(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (isGrpcServiceError(e)) return NOT_READY_CODES.has(e.code);
  }
  return false;
}

/** Runs `call` until it succeeds, retrying while the server is not ready (see the header). */
export async function untilServerReady<T>(
  connection: Pick<Connection, 'withDeadline'>,
  what: string,
  call: () => Promise<T>,
  opts: NotReadyRetry = {},
): Promise<T> {
  const deadline = Date.now() + (opts.waitMs ?? 120_000);
  const attemptMs = opts.attemptMs ?? 10_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await connection.withDeadline(Date.now() + attemptMs, call);
    } catch (err) {
      if (!serverNotReady(err) || Date.now() > deadline) throw err;
      const backoffMs = Math.min(500 * attempt, 5_000);
      opts.log?.(`${what}: the Temporal server is not ready (${(err as Error).message}); trying again in ${backoffMs} ms (try ${attempt})`);
      await sleep(backoffMs);
    }
  }
}
