// Slowing down before a 429 instead of only reacting to it: every answer of the API carries the
// organisation's anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}
// (platform.claude.com/docs/en/api/rate-limits: token buckets, refilled continuously, holding at most
// a minute's worth). The gate schedules the calls of this process on the same buckets (GCRA): each
// limit has a time at which its bucket would be full again, pushed later by every call's share (a
// request, the body's estimated input tokens) and by what the answers report (other processes spend
// from the same buckets); a call whose share would overdraw the bucket waits until it fits. One gate
// per process (the LLM worker's).
import { setTimeout as sleep } from 'node:timers/promises';

const LIMITS = ['requests', 'input-tokens', 'output-tokens'] as const;
type Limit = (typeof LIMITS)[number];
const MINUTE_MS = 60_000;
/** A little slack for the two clocks and the rounding. */
const MARGIN_MS = 50;

interface Bucket {
  limit: number;
  /** When the bucket would be full again, counting every call scheduled so far. */
  fullAt: number;
}

export class RateLimitGate {
  private readonly buckets = new Map<Limit, Bucket>();
  /** Calls that waited, and how long in all (ms). */
  waited = 0;
  waitedMs = 0;

  constructor(private readonly maxWaitMs = MINUTE_MS) {}

  /** Takes the limits an answer (a 429 too) reports: the bucket is at least as empty as it says. */
  observe(headers: Headers, now = Date.now()): void {
    for (const name of LIMITS) {
      const limit = Number(headers.get(`anthropic-ratelimit-${name}-limit`));
      const remaining = Number(headers.get(`anthropic-ratelimit-${name}-remaining`));
      if (!(limit > 0) || !headers.has(`anthropic-ratelimit-${name}-remaining`) || !Number.isFinite(remaining)) continue;
      const reported = now + ((limit - Math.max(0, remaining)) / limit) * MINUTE_MS;
      const bucket = this.buckets.get(name);
      this.buckets.set(name, { limit, fullAt: bucket && bucket.limit === limit ? Math.max(bucket.fullAt, reported) : reported });
    }
  }

  /** Schedules a call's share; answers how long it should wait first (0: go now). */
  reserve(inputTokens: number, now = Date.now()): number {
    const need: Record<Limit, number> = { requests: 1, 'input-tokens': inputTokens, 'output-tokens': 1 };
    let wait = 0;
    for (const name of LIMITS) {
      const bucket = this.buckets.get(name);
      if (!bucket) continue;
      bucket.fullAt = Math.max(bucket.fullAt, now) + (Math.min(need[name], bucket.limit) / bucket.limit) * MINUTE_MS;
      // The bucket holds a minute's worth: the call fits once the bucket is within a minute of full.
      const overdrawn = bucket.fullAt - now - MINUTE_MS;
      if (overdrawn > 0) wait = Math.max(wait, Math.ceil(overdrawn) + MARGIN_MS);
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
