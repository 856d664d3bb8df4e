// Errors of the LLM service and the mapping of SDK errors to what an activity should do about them.
import type Anthropic from '@anthropic-ai/sdk';
import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';

/**
 * The model answered, but not in the shape we asked for (schema violation, no tool call, empty draft).
 * Retryable: another sample usually fits. The class name is the Temporal error type; keep it stable.
 */
export interface OutputIssue {
  /** The field that failed, e.g. `category`; `tool_use` or `body` when nothing usable came back. */
  path: string;
  message: string;
}

export class LlmOutputInvalidError extends Error {
  /** The first field that failed. */
  readonly field: string;

  constructor(readonly issues: readonly [OutputIssue, ...OutputIssue[]]) {
    super(`LLM output invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'LlmOutputInvalidError';
    this.field = issues[0].path;
  }
}

/**
 * The model declined (stop_reason `refusal`, handling-stop-reasons): not retried with the same prompt,
 * never used as output. The class name is the Temporal error type; keep it stable.
 */
export class LlmRefusedError extends Error {
  constructor(
    readonly category: string | null,
    readonly explanation: string | null,
  ) {
    super(`the model declined${category ? ` (${category})` : ''}${explanation ? `: ${explanation}` : ''}`);
    this.name = 'LlmRefusedError';
  }
}

/** A forced tool call stopped at max_tokens again after one retry with a larger budget: its input is partial. */
export class LlmOutputTruncatedError extends Error {
  constructor(readonly maxTokens: number) {
    super(`the answer was cut off at max_tokens again after a retry with ${maxTokens} tokens; a partial answer is not used`);
    this.name = 'LlmOutputTruncatedError';
  }
}

/** The refusal in a response, if the model declined. */
export function refusalOf(response: Pick<Anthropic.Message, 'stop_reason' | 'stop_details'>): LlmRefusedError | undefined {
  if (response.stop_reason !== 'refusal') return undefined;
  return new LlmRefusedError(response.stop_details?.category ?? null, response.stop_details?.explanation ?? null);
}

export type AnthropicErrorKind =
  /** 429: retry after `retryAfterMs` (from Retry-After) or with backoff. */
  | { kind: 'rate_limited'; retryAfterMs: number | undefined; status: number; message: string }
  /** 529 (or 503): the API is overloaded; retry later. */
  | { kind: 'overloaded'; retryAfterMs: number | undefined; status: number; message: string }
  /** 401/403, or 402 billing: the key or account is unusable; retrying will not help. */
  | { kind: 'auth'; status: number; message: string }
  /** 404 for the model named: it does not exist (or was retired); an operator must configure another. */
  | { kind: 'model_not_found'; status: number; message: string }
  /** 400/404/413/422: the request itself is wrong; retrying will not help. */
  | { kind: 'bad_request'; status: number; message: string }
  /** Other 5xx, 408/409, timeouts and connection failures (status undefined): transient, retry with backoff. */
  | { kind: 'server'; status: number | undefined; message: string };

/** Retry-After as milliseconds: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * What kind of failure an Anthropic SDK error is, for the activity to choose retry or give up. Returns
 * undefined for anything that is not an SDK API error (our own errors, bugs) and for an aborted request
 * (the activity was cancelled): callers rethrow those as is.
 */
export function classifyAnthropicError(err: unknown): AnthropicErrorKind | undefined {
  if (err instanceof APIUserAbortError) return undefined;
  if (err instanceof APIConnectionError) return { kind: 'server', status: undefined, message: err.message };
  if (!(err instanceof APIError)) return undefined;
  const status = err.status;
  const message = err.message;
  if (status === undefined) return { kind: 'server', status, message };
  if (status === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs(err.headers), status, message };
  if (status === 529 || status === 503) {
    return { kind: 'overloaded', retryAfterMs: retryAfterMs(err.headers), status, message };
  }
  if (status === 401 || status === 402 || status === 403) return { kind: 'auth', status, message };
  if (status === 408 || status === 409 || status >= 500) return { kind: 'server', status, message };
  if (status === 404 && err.type === 'not_found_error' && /^model:/.test(err.apiMessage ?? '')) return { kind: 'model_not_found', status, message };
  return { kind: 'bad_request', status, message };
}
