// The one polling helper of the tests: ask `probe` until it answers, or fail naming what was awaited.
// An answer is any value but undefined and false; a probe that throws counts as no answer yet. And
// untilTime, for an instant a scenario sets itself. Every 250 ms by default: most probes are
// workflow queries, which the worker answers by activating (or replaying) the workflow; at 100 ms
// they cost three scenario files ~15 % more CPU for ~2 % less wall time (2026-11-28).

export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const { timeoutMs = 30_000, everyMs = 250 } = opts;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${messages(lastError)})` : '';
      throw new Error(`${what}: not within ${timeoutMs} ms${cause}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** An error's message and its causes' (a client error's cause says what the server answered). */
function messages(err: Error): string {
  const parts = [err.message];
  for (let cause = err.cause; cause instanceof Error && parts.length < 4; cause = cause.cause) parts.push(cause.message);
  return parts.join(': ');
}

/**
 * Until the clock reads `at` (epoch ms). For scenarios whose event is an instant of their own making (a
 * timer falling due while its worker or server is down, a schedule's firing time), never to guess how
 * long something takes: that is waitUntil's job.
 */
export async function untilTime(at: number): Promise<void> {
  const ms = at - Date.now();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}
