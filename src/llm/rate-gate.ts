// Slowing down before a 429 instead of only reacting to it: every answer of the API carries the
// organisation's anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}
// (platform.claude.com/docs/en/api/rate-limits; token buckets refilled continuously, so the limit and
// what remains say when a call fits; the reset, when the bucket is full, is not needed). The gate keeps
// what the last answer said, takes each call's share from it (a request and the body's estimated
// input tokens), and when a limit has too little left, the call waits the time the bucket needs to
// refill that much (at most maxWaitMs) before it is sent. One gate per process (the LLM worker's).
import { setTimeout as sleep } from 'node:timers/promises';

const LIMITS = ['requests', 'input-tokens', 'output-tokens'] as const;
type Limit = (typeof LIMITS)[number];
const MARGIN_MS = 100;

interface Seen {
  limit: number;
  remaining: number;
  at: number;
}

export class RateLimitGate {
  private readonly seen = new Map<Limit, Seen>();
  /** Calls that waited, and how long in all (ms). */
  waited = 0;
  waitedMs = 0;

  constructor(private readonly maxWaitMs = 30_000) {}

  /** Takes the limits an answer (a 429 too) reports. */
  observe(headers: Headers, now = Date.now()): void {
    for (const name of LIMITS) {
      const limit = Number(headers.get(`anthropic-ratelimit-${name}-limit`));
      const remaining = Number(headers.get(`anthropic-ratelimit-${name}-remaining`));
      if (limit > 0 && headers.has(`anthropic-ratelimit-${name}-remaining`) && Number.isFinite(remaining)) this.seen.set(name, { limit, remaining, at: now });
    }
  }

  /** Reserves a call's share; answers how long it should wait first (0: go now). */
  reserve(inputTokens: number, now = Date.now()): number {
    const need: Record<Limit, number> = { requests: 1, 'input-tokens': inputTokens, 'output-tokens': 1 };
    let wait = 0;
    for (const name of LIMITS) {
      const s = this.seen.get(name);
      if (!s) continue;
      // What refilled since the answer that reported it.
      const left = Math.min(s.limit, s.remaining + ((now - s.at) / 60_000) * s.limit);
      s.remaining = left - need[name];
      s.at = now;
      // Short by k: the bucket refills k in k/limit minutes (and a little more, for the clocks' sake).
      if (s.remaining < 0) wait = Math.max(wait, Math.ceil((-s.remaining / s.limit) * 60_000) + MARGIN_MS);
    }
    return Math.min(wait, this.maxWaitMs);
  }

  /** A fetch that waits at the gate before each Messages call and tells it what each answer reports. */
  fetch(base: typeof fetch): typeof fetch {
    return async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (init?.method === 'POST' && /\/v1\/messages$/.test(new URL(url).pathname)) {
        const body = typeof init.body === 'string' ? init.body : '';
        const wait = this.reserve(Math.ceil(body.length / 4));
        if (wait > 0) {
          this.waited++;
          this.waitedMs += wait;
          await sleep(wait, undefined, init.signal ? { signal: init.signal } : {});
        }
      }
      const response = await base(input, init);
      this.observe(response.headers);
      return response;
    };
  }
}
