// Posting to a Discord webhook (Execute Webhook, ?wait=true): approval requests and backfill alerts.
import { ApplicationFailure } from '@temporalio/common';

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
