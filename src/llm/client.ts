// The one place an Anthropic client is made.
import Anthropic from '@anthropic-ai/sdk';
import { tracedFetch } from '../temporal/tracing.js';
import type { RateLimitGate } from './rate-gate.js';

export interface LlmClientOptions {
  apiKey: string;
  /** The API root, e.g. the local emulator's url; the SDK default (or ANTHROPIC_BASE_URL) when omitted. */
  baseURL?: string;
  /** Per-request timeout; keep it below the activity's startToCloseTimeout. */
  timeoutMs?: number;
  /** Paces the Messages calls by the API's rate-limit headers (rate-gate.ts). */
  rateGate?: RateLimitGate;
}

/**
 * An SDK client with its own retries turned off (`maxRetries: 0`). Our LLM calls run inside Temporal
 * activities, whose retry policy owns retrying: it is durable across worker restarts, visible in the
 * workflow history, honours Retry-After through `nextRetryDelay`, and counts attempts against one budget.
 * SDK retries inside an attempt would hide failures from that policy, multiply attempts and stretch a
 * single attempt past its timeout.
 */
export function createLlmClient(opts: LlmClientOptions): Anthropic {
  return new Anthropic({
    apiKey: opts.apiKey,
    baseURL: opts.baseURL,
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 60_000,
    // Each HTTP call a span when tracing is on (inside the activity's span).
    fetch: opts.rateGate ? opts.rateGate.fetch(tracedFetch('anthropic')) : tracedFetch('anthropic'),
  });
}
