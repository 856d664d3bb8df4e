// Typed Gmail failures. Temporal records a thrown error's `name` as the failure type, so every class pins
// its name to a string literal (stable under bundling/minification) and activity retry policies can match
// on it (`nonRetryableErrorTypes: ['GmailBadRequestError', ...]`).
//
// Messages carry the operation, HTTP status, Google's reason and Google's short error message only —
// never tokens, request bodies, or a raw response body (a 502 HTML page would otherwise end up in history).
// We deliberately do not attach the GaxiosError as `cause`: its config holds headers and request data.

import type { NotInMailbox } from '../mail/mailbox-errors.js';

export type GmailResource =
  | 'thread'
  | 'message'
  | 'draft'
  | 'label'
  | 'history'
  | 'attachment'
  | 'profile'
  | 'settings'
  | 'unknown';

export interface GmailErrorContext {
  /** The GmailService method (or Gmail call) that failed, e.g. 'threads.get'. */
  operation?: string;
  /** What a 404 refers to; inferred from the request URL when not given. */
  resource?: GmailResource;
}

export interface GmailErrorFields {
  operation: string;
  status?: number;
  /** First Google reason (`error.errors[0].reason`, or the OAuth `error` code for token failures). */
  reason?: string;
  reasons: string[];
  domain?: string;
  /** Google's canonical status, e.g. RESOURCE_EXHAUSTED. */
  googleStatus?: string;
}

/** JSON-safe summary, e.g. for ApplicationFailure details. */
export interface GmailErrorDetails extends GmailErrorFields {
  type: string;
  retryable: boolean;
  retryAfterMs?: number;
  resource?: GmailResource;
  revoked?: boolean;
  code?: string;
}

export abstract class GmailError extends Error {
  /** Advisory: whether trying the same call again later can succeed. */
  abstract readonly retryable: boolean;
  readonly operation: string;
  readonly status?: number;
  readonly reason?: string;
  readonly reasons: string[];
  readonly domain?: string;
  readonly googleStatus?: string;

  protected constructor(message: string, fields: GmailErrorFields) {
    super(message);
    this.operation = fields.operation;
    this.status = fields.status;
    this.reason = fields.reason;
    this.reasons = fields.reasons;
    this.domain = fields.domain;
    this.googleStatus = fields.googleStatus;
  }

  toDetails(): GmailErrorDetails {
    return {
      type: this.name,
      retryable: this.retryable,
      operation: this.operation,
      status: this.status,
      reason: this.reason,
      reasons: this.reasons,
      domain: this.domain,
      googleStatus: this.googleStatus,
    };
  }
}

/** 429, or 403 with a usageLimits reason. Back off at least `retryAfterMs`. */
export class GmailRateLimitError extends GmailError {
  override readonly name = 'GmailRateLimitError';
  readonly retryable = true;
  constructor(
    message: string,
    fields: GmailErrorFields,
    /** ≥ 1000 ms: Google asks for backoff starting at 1 s even when it names a shorter wait. */
    readonly retryAfterMs: number,
    /** Where retryAfterMs came from: the Retry-After header, a "Retry after <date>" message, or our 1 s floor. */
    readonly retryAfterSource: 'header' | 'message' | 'default',
  ) {
    super(message, fields);
  }
  override toDetails(): GmailErrorDetails {
    return { ...super.toDetails(), retryAfterMs: this.retryAfterMs };
  }
}

/**
 * 401 from the API (after google-auth-library's own refresh-and-retry-once), or a failed token refresh.
 * `revoked` means the refresh token is dead (invalid_grant): only the user re-consenting fixes it.
 */
export class GmailAuthError extends GmailError {
  override readonly name = 'GmailAuthError';
  readonly retryable: boolean;
  constructor(
    message: string,
    fields: GmailErrorFields,
    readonly revoked: boolean,
  ) {
    super(message, fields);
    // A plain 401 can be a clock skew or a token race; a revoked grant or a misconfigured client cannot heal.
    this.retryable = !revoked && fields.status === 401 && fields.reason !== 'invalid_client';
  }
  override toDetails(): GmailErrorDetails {
    return { ...super.toDetails(), revoked: this.revoked };
  }
}

/** 404: the thread, message, draft or label is gone, or (resource 'history') the start history id expired. */
export class GmailNotFoundError extends GmailError implements NotInMailbox {
  override readonly name = 'GmailNotFoundError';
  readonly retryable = false;
  readonly notInMailbox = true;
  constructor(
    message: string,
    fields: GmailErrorFields,
    readonly resource: GmailResource,
  ) {
    super(message, fields);
  }
  override toDetails(): GmailErrorDetails {
    return { ...super.toDetails(), resource: this.resource };
  }
}

/** 5xx and 408. */
export class GmailServerError extends GmailError {
  override readonly name = 'GmailServerError';
  readonly retryable = true;
  constructor(message: string, fields: GmailErrorFields) {
    super(message, fields);
  }
}

/** 400 (and 413): the request itself is wrong; retrying the same request cannot succeed. */
export class GmailBadRequestError extends GmailError {
  override readonly name = 'GmailBadRequestError';
  readonly retryable = false;
  constructor(message: string, fields: GmailErrorFields) {
    super(message, fields);
  }
}

/** 403 that is not a quota error: missing scope, the Gmail API disabled in the project, domain policy, mailbox not enabled for Gmail. */
export class GmailPermissionError extends GmailError {
  override readonly name = 'GmailPermissionError';
  readonly retryable = false;
  constructor(message: string, fields: GmailErrorFields) {
    super(message, fields);
  }
}

/** 409, e.g. labels.create for a name that exists (possibly created concurrently). */
export class GmailConflictError extends GmailError {
  override readonly name = 'GmailConflictError';
  readonly retryable = false;
  constructor(message: string, fields: GmailErrorFields) {
    super(message, fields);
  }
}

/** No HTTP response at all: timeout, connection refused/reset, DNS. */
export class GmailNetworkError extends GmailError {
  override readonly name = 'GmailNetworkError';
  readonly retryable = true;
  constructor(
    message: string,
    fields: GmailErrorFields,
    /** e.g. 'TimeoutError', 'ECONNRESET', 'ECONNREFUSED'. */
    readonly code: string | undefined,
  ) {
    super(message, fields);
  }
  override toDetails(): GmailErrorDetails {
    return { ...super.toDetails(), code: this.code };
  }
}

/** Anything else (an unexpected status, or a non-HTTP error). Retryable, like Temporal's default. */
export class GmailUnexpectedError extends GmailError {
  override readonly name = 'GmailUnexpectedError';
  readonly retryable = true;
  constructor(message: string, fields: GmailErrorFields) {
    super(message, fields);
  }
}

export const MIN_RETRY_AFTER_MS = 1000;

const QUOTA_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'dailyLimitExceeded', 'quotaExceeded']);
/** The API is not enabled in the OAuth client's Cloud project (legacy reason, and google.rpc.ErrorInfo's). */
const API_DISABLED_REASONS = new Set(['accessNotConfigured', 'SERVICE_DISABLED']);

/** Parse a Retry-After value: delay-seconds or an HTTP date. Returns ms from `now`, or undefined. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Turn whatever a googleapis call threw into one of the classes above. Never throws. */
export function mapGmailError(err: unknown, context: GmailErrorContext = {}): GmailError {
  if (err instanceof GmailError) return err;
  const operation = context.operation ?? 'request';

  if (!isGaxiosLike(err)) {
    const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    // google-auth-library throws plain Errors when it has nothing to refresh with.
    if (err instanceof Error && /no refresh token|no access, refresh token/i.test(err.message)) {
      return new GmailAuthError(`Gmail ${operation} failed: ${clip(err.message)}`, { operation, reason: 'no_credentials', reasons: ['no_credentials'] }, false);
    }
    return new GmailUnexpectedError(`Gmail ${operation} failed unexpectedly: ${clip(detail)}`, { operation, reasons: [] });
  }

  const response = err.response;
  if (!response || typeof response.status !== 'number') {
    const code = transportErrorCode(err);
    return new GmailNetworkError(
      `Gmail ${operation} failed without a response${code ? ` (${code})` : ''}`,
      { operation, reasons: [], reason: code },
      code,
    );
  }

  const status = response.status;
  const info = readErrorBody(response.data);
  const fields: GmailErrorFields = {
    operation,
    status,
    reason: info.reasons[0],
    reasons: info.reasons,
    domain: info.domain,
    googleStatus: info.googleStatus,
  };
  const summary = `Gmail ${operation} failed: HTTP ${status}${fields.reason ? ` ${fields.reason}` : ''}${info.message ? `: ${info.message}` : ''}`;

  // OAuth token endpoint failures ({error: 'invalid_grant', error_description}) come from the refresh, not Gmail.
  if (info.oauthError && status >= 400 && status < 500 && status !== 429) {
    return new GmailAuthError(summary, fields, info.oauthError === 'invalid_grant');
  }

  // The Gmail API disabled in the project is a 403 in the usageLimits domain too, but no wait ends it.
  const apiDisabled = info.reasons.some((r) => API_DISABLED_REASONS.has(r));
  const isQuota403 =
    status === 403 &&
    !apiDisabled &&
    (info.domain === 'usageLimits' || info.reasons.some((r) => QUOTA_REASONS.has(r)) || info.googleStatus === 'RESOURCE_EXHAUSTED');
  if (status === 429 || isQuota403) {
    const { ms, source } = retryAfterOf(response.headers, info.rawMessage);
    return new GmailRateLimitError(summary, fields, ms, source);
  }
  if (status === 401) return new GmailAuthError(summary, fields, false);
  if (status === 403) return new GmailPermissionError(summary, fields);
  if (status === 404) {
    return new GmailNotFoundError(summary, fields, context.resource ?? resourceFromUrl(err.config?.url));
  }
  if (status === 409) return new GmailConflictError(summary, fields);
  if (status === 400 || status === 413) return new GmailBadRequestError(summary, fields);
  if (status === 408 || status >= 500) return new GmailServerError(summary, fields);
  return new GmailUnexpectedError(summary, fields);
}

interface GaxiosLike {
  config?: { url?: unknown; signal?: unknown };
  response?: { status?: unknown; data?: unknown; headers?: unknown };
  code?: unknown;
  cause?: unknown;
}

// Our timeout is an AbortSignal.timeout(): fetch only reports a generic AbortError, the signal knows why.
function transportErrorCode(err: GaxiosLike): string | undefined {
  const reason = (err.config?.signal as { aborted?: boolean; reason?: { name?: unknown } } | undefined)?.reason;
  if (reason && reason.name === 'TimeoutError') return 'TimeoutError';
  if (typeof err.code === 'string' || typeof err.code === 'number') return String(err.code);
  const cause = err.cause as { code?: unknown; name?: unknown } | undefined;
  if (typeof cause?.code === 'string') return cause.code;
  return typeof cause?.name === 'string' ? cause.name : undefined;
}

// Duck-typed: googleapis and google-auth-library each bring their own gaxios copy, so instanceof is unreliable.
function isGaxiosLike(err: unknown): err is GaxiosLike {
  return typeof err === 'object' && err !== null && 'config' in err && typeof (err as { config: unknown }).config === 'object';
}

interface ErrorBodyInfo {
  reasons: string[];
  domain?: string;
  googleStatus?: string;
  /** Short, cleaned message suitable for an error message. */
  message?: string;
  /** Google's message as sent (for "Retry after <date>" parsing only). */
  rawMessage?: string;
  oauthError?: string;
}

function readErrorBody(data: unknown): ErrorBodyInfo {
  const info: ErrorBodyInfo = { reasons: [] };
  if (typeof data !== 'object' || data === null) return info; // string bodies (HTML error pages) are ignored on purpose
  const body = data as { error?: unknown; error_description?: unknown };
  if (typeof body.error === 'string') {
    info.oauthError = body.error;
    info.reasons.push(body.error);
    if (typeof body.error_description === 'string') info.message = clip(body.error_description);
    return info;
  }
  if (typeof body.error !== 'object' || body.error === null) return info;
  const error = body.error as { message?: unknown; status?: unknown; errors?: unknown; details?: unknown };
  if (typeof error.message === 'string') {
    info.rawMessage = error.message;
    info.message = clip(error.message);
  }
  if (typeof error.status === 'string') info.googleStatus = error.status;
  if (Array.isArray(error.errors)) {
    for (const item of error.errors as unknown[]) {
      if (typeof item !== 'object' || item === null) continue;
      const { reason, domain } = item as { reason?: unknown; domain?: unknown };
      if (typeof reason === 'string') info.reasons.push(reason);
      if (typeof domain === 'string' && info.domain === undefined) info.domain = domain;
    }
  }
  // Newer AIP-193 bodies carry google.rpc.ErrorInfo in `details`.
  if (Array.isArray(error.details)) {
    for (const item of error.details as unknown[]) {
      if (typeof item !== 'object' || item === null) continue;
      const { reason } = item as { reason?: unknown };
      if (typeof reason === 'string' && !info.reasons.includes(reason)) info.reasons.push(reason);
    }
  }
  return info;
}

function retryAfterOf(headers: unknown, message: string | undefined): { ms: number; source: 'header' | 'message' | 'default' } {
  const fromHeader = parseRetryAfter(readHeader(headers, 'retry-after'));
  if (fromHeader !== undefined) return { ms: Math.max(MIN_RETRY_AFTER_MS, fromHeader), source: 'header' };
  // Gmail's userRateLimitExceeded message says "User-rate limit exceeded.  Retry after 2026-11-20T10:00:00.000Z".
  const match = message ? /retry after (\S+)/i.exec(message) : null;
  const fromMessage = match?.[1] ? parseRetryAfter(match[1].replace(/\.$/, '')) : undefined;
  if (fromMessage !== undefined) return { ms: Math.max(MIN_RETRY_AFTER_MS, fromMessage), source: 'message' };
  return { ms: MIN_RETRY_AFTER_MS, source: 'default' };
}

function readHeader(headers: unknown, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  // gaxios 7 responses carry a fetch Headers object; older shapes are plain records.
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? String(value[0]) : String(value);
  }
  return undefined;
}

function resourceFromUrl(url: unknown): GmailResource {
  const path = typeof url === 'string' ? url : url instanceof URL ? url.pathname : '';
  if (/\/history(\?|$)/.test(path)) return 'history';
  if (/\/attachments\//.test(path)) return 'attachment';
  if (/\/drafts(\/|\?|$)/.test(path)) return 'draft';
  if (/\/threads(\/|\?|$)/.test(path)) return 'thread';
  if (/\/messages(\/|\?|$)/.test(path)) return 'message';
  if (/\/labels(\/|\?|$)/.test(path)) return 'label';
  if (/\/profile(\?|$)/.test(path)) return 'profile';
  return 'unknown';
}

function clip(text: string, max = 200): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
