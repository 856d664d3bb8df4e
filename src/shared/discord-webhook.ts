// Posting to a Discord webhook (Execute Webhook, ?wait=true): approval requests, lessons, reminders,
// briefs and backfill alerts; a notice posted once whatever retries; values shown literally.
import { ApplicationFailure } from '@temporalio/common';
import { displaySafe } from './display-text.js';

/**
 * POSTs a message; returns its id. A 429 is retried after Discord's retry_after, other 4xx are
 * final (the webhook was deleted, the message is invalid), 5xx and network errors are retried.
 * Errors name the status and Discord's message, never the URL (its token is the credential).
 */
export async function executeWebhook(webhookUrl: string, body: Record<string, unknown>): Promise<string> {
  const url = new URL(webhookUrl);
  url.searchParams.set('wait', 'true');
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw ApplicationFailure.retryable(`Discord webhook unreachable (${err instanceof Error ? err.name : 'error'}${cause})`, 'DiscordUnavailable');
  }
  const answer = (await res.json().catch(() => ({}))) as { id?: unknown; message?: unknown; code?: unknown; retry_after?: unknown };
  if (res.ok && typeof answer.id === 'string') return answer.id;
  const said = `${typeof answer.message === 'string' ? answer.message : res.statusText}${typeof answer.code === 'number' ? ` (code ${answer.code})` : ''}`;
  if (res.status === 429) {
    const seconds = typeof answer.retry_after === 'number' ? answer.retry_after : Number(res.headers.get('retry-after') ?? 1);
    const delayMs = Math.max(1, Math.ceil((Number.isFinite(seconds) ? seconds : 1) * 1000));
    throw ApplicationFailure.create({
      message: `Discord rate limit: retry after ${delayMs} ms`,
      type: 'DiscordRateLimited',
      nextRetryDelay: delayMs,
    });
  }
  if (res.status >= 400 && res.status < 500) {
    throw ApplicationFailure.nonRetryable(`Discord refused the message: ${res.status} ${said}`, 'DiscordWebhookRejected');
  }
  throw ApplicationFailure.retryable(`Discord answered ${res.status} ${said}`, 'DiscordUnavailable');
}

/** A notice that goes out once: the journal of whoever posts it says whether it went, and keeps its message id. */
export interface DiscordNotice {
  /** Whether an earlier attempt posted it (its message id is on record): a retry posts nothing. */
  posted(): Promise<boolean>;
  /** The message, or null when it is no longer wanted (decided meanwhile). */
  content(): Promise<string | null>;
  /** Records the posted message's id. Only a crash between Discord's answer and this write can post twice. */
  record(messageId: string): Promise<void>;
}

/** Posts the notice unless it was posted before; false when the notice is no longer wanted. */
export async function postNoticeOnce(webhookUrl: string, notice: DiscordNotice): Promise<boolean> {
  if (await notice.posted()) return true;
  const content = await notice.content();
  if (content === null) return false;
  await notice.record(await executeWebhook(webhookUrl, { content, allowed_mentions: { parse: [] } }));
  return true;
}

const MAX_FIELD = 200;

function clip(text: string, max = MAX_FIELD): string {
  const safe = displaySafe(text);
  return safe.length <= max ? safe : `${safe.slice(0, max - 1)}…`;
}

/** A value as Discord markdown shows it literally (mentions are off through allowed_mentions), clipped and display-safe. */
export function plain(text: string): string {
  return clip(text).replace(/[\\`*_~|>#[\]]/g, (c) => `\\${c}`);
}

/** A value as inline code, clipped and display-safe. */
export function code(text: string): string {
  return `\`${clip(text).replace(/`/g, "'")}\``;
}
