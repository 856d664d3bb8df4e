// Fixed-window buckets like Discord's: a window starts with the first request after the last one
// ended; requests answered 429 do not use up the bucket. Times in epoch milliseconds.
import { createHash } from 'node:crypto';
import type { WindowLimit } from './config.js';

export interface BucketState {
  limit: number;
  remaining: number;
  /** Epoch ms at which the bucket refills. */
  resetAt: number;
}

export interface TakeResult extends BucketState {
  ok: boolean;
  /** Seconds until a request can succeed again; 0 when ok. */
  retryAfter: number;
}

interface Window {
  count: number;
  resetAt: number;
}

export class FixedWindowLimiter {
  private readonly windows = new Map<string, Window>();

  /** Uses one request of `key`'s bucket if one is left. */
  take(key: string, limit: WindowLimit, now: number): TakeResult {
    const w = this.current(key, limit, now);
    if (w.count >= limit.limit) {
      return { ok: false, limit: limit.limit, remaining: 0, resetAt: w.resetAt, retryAfter: (w.resetAt - now) / 1000 };
    }
    w.count++;
    return { ok: true, limit: limit.limit, remaining: limit.limit - w.count, resetAt: w.resetAt, retryAfter: 0 };
  }

  /** Whether `key` has a request left, without using it. */
  peek(key: string, limit: WindowLimit, now: number): TakeResult {
    const w = this.current(key, limit, now);
    const ok = w.count < limit.limit;
    return {
      ok,
      limit: limit.limit,
      remaining: Math.max(0, limit.limit - w.count),
      resetAt: w.resetAt,
      retryAfter: ok ? 0 : (w.resetAt - now) / 1000,
    };
  }

  clear(): void {
    this.windows.clear();
  }

  private current(key: string, limit: WindowLimit, now: number): Window {
    let w = this.windows.get(key);
    if (!w || now >= w.resetAt) {
      w = { count: 0, resetAt: now + limit.windowSeconds * 1000 };
      this.windows.set(key, w);
    }
    return w;
  }
}

/** X-RateLimit-Bucket: one opaque id per route, the same for every webhook (it excludes top-level resources). */
export function bucketId(route: string): string {
  return createHash('sha1').update(`discord-emulator:${route}`).digest('hex').slice(0, 32);
}

/** The X-RateLimit-* headers of a bucket after a request. */
export function rateLimitHeaders(state: BucketState, route: string, now: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': (state.resetAt / 1000).toFixed(3),
    'x-ratelimit-reset-after': (Math.max(0, state.resetAt - now) / 1000).toFixed(3),
    'x-ratelimit-bucket': bucketId(route),
  };
}
