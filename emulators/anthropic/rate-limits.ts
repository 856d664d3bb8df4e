// The organisation's rate limits as the API reports them (platform.claude.com/docs/en/api/rate-limits):
// token buckets for requests, input tokens and output tokens per minute, refilled continuously; every
// response carries anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}
// (reset: RFC 3339, when the bucket is full again). When enforced, a request the buckets cannot take is
// answered 429 rate_limit_error with retry-after (seconds).

export interface RateLimits {
  requestsPerMinute: number;
  inputTokensPerMinute: number;
  outputTokensPerMinute: number;
}

/** What the headers show when no limits are configured (nothing is enforced then). */
export const NOMINAL_LIMITS: RateLimits = { requestsPerMinute: 4000, inputTokensPerMinute: 2_000_000, outputTokensPerMinute: 400_000 };

class Bucket {
  private level: number;
  private at: number;

  constructor(
    readonly limit: number,
    now: number,
  ) {
    this.level = limit;
    this.at = now;
  }

  private refill(now: number): void {
    this.level = Math.min(this.limit, this.level + ((now - this.at) / 60_000) * this.limit);
    this.at = now;
  }

  remaining(now: number): number {
    this.refill(now);
    return Math.max(0, Math.floor(this.level));
  }

  /** Milliseconds until `amount` fits (0: now). */
  waitFor(amount: number, now: number): number {
    this.refill(now);
    const need = Math.min(amount, this.limit) - this.level;
    return need <= 0 ? 0 : Math.ceil((need / this.limit) * 60_000);
  }

  take(amount: number, now: number): void {
    this.refill(now);
    this.level -= amount;
  }

  /** When the bucket is full again. */
  resetAt(now: number): Date {
    this.refill(now);
    return new Date(now + Math.ceil(((this.limit - this.level) / this.limit) * 60_000));
  }
}

export class RateLimiter {
  private readonly requests: Bucket;
  private readonly input: Bucket;
  private readonly output: Bucket;

  /** `limits` null: report NOMINAL_LIMITS and never refuse. */
  constructor(
    private readonly limits: RateLimits | null,
    now = Date.now(),
  ) {
    const l = limits ?? NOMINAL_LIMITS;
    this.requests = new Bucket(l.requestsPerMinute, now);
    this.input = new Bucket(l.inputTokensPerMinute, now);
    this.output = new Bucket(l.outputTokensPerMinute, now);
  }

  /** Takes one request and its input tokens; or, when enforced and they do not fit, the wait in ms. */
  admit(inputTokens: number, now = Date.now()): { ok: true } | { ok: false; retryAfterMs: number } {
    if (this.limits) {
      const wait = Math.max(this.requests.waitFor(1, now), this.input.waitFor(inputTokens, now), this.output.waitFor(1, now));
      if (wait > 0) return { ok: false, retryAfterMs: wait };
    }
    this.requests.take(1, now);
    this.input.take(inputTokens, now);
    return { ok: true };
  }

  recordOutput(outputTokens: number, now = Date.now()): void {
    this.output.take(outputTokens, now);
  }

  headers(now = Date.now()): Record<string, string> {
    const out: Record<string, string> = {};
    const put = (name: string, limit: number, remaining: number, reset: Date) => {
      out[`anthropic-ratelimit-${name}-limit`] = String(limit);
      out[`anthropic-ratelimit-${name}-remaining`] = String(remaining);
      // Whole seconds, rounded up: never earlier than the bucket is full again.
      out[`anthropic-ratelimit-${name}-reset`] = new Date(Math.ceil(reset.getTime() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    };
    put('requests', this.requests.limit, this.requests.remaining(now), this.requests.resetAt(now));
    put('input-tokens', this.input.limit, this.input.remaining(now), this.input.resetAt(now));
    put('output-tokens', this.output.limit, this.output.remaining(now), this.output.resetAt(now));
    // tokens-*: the most restrictive of the token limits in effect.
    const tighter = this.input.remaining(now) / this.input.limit <= this.output.remaining(now) / this.output.limit ? this.input : this.output;
    put('tokens', tighter.limit, tighter.remaining(now), tighter.resetAt(now));
    return out;
  }
}
