// The one polling helper of the tests: ask `probe` until it answers, or fail naming what was awaited.
// An answer is any value but undefined and false; a probe that throws counts as no answer yet.

export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const { timeoutMs = 30_000, everyMs = 100 } = opts;
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
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what}: not within ${timeoutMs} ms${cause}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
