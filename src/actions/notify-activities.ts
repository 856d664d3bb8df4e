// Telling the user an action waits for approval: a Discord webhook message (Execute Webhook,
// ?wait=true) with a short summary and a signed link to the approvals page. The summary holds the
// action's kind and argument, the account's address and the policy's reasons: never mail content,
// tokens or the webhook URL. The message id is journaled in the action's result, so a retried
// activity posts once; only a crash between Discord's answer and that write can post twice.
import { ApplicationFailure } from '@temporalio/common';
import type { ApprovalsSettings } from '../config.js';
import type { SqlExecutor } from '../quota/sql.js';
import type { ApprovalNotifyActivities } from './activity-contracts.js';
import { approvalLink, type ApprovalKeys } from './approval-links.js';
import { accountEmail, reasonText } from './approval-request.js';
import type { JournaledAction } from './contracts.js';
import { loadAction, transitionAction } from './journal.js';

export interface ApprovalNotifyDeps {
  db: SqlExecutor;
  /** Link keys, resolved on first use. */
  keys(): Promise<ApprovalKeys>;
  settings: Pick<ApprovalsSettings, 'discordWebhookUrl' | 'publicBaseUrl' | 'linkTtlMs'>;
  now?: () => number;
}


const MAX_FIELD = 200;

function clip(text: string, max = MAX_FIELD): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A value as Discord markdown shows it literally (mentions are off through allowed_mentions). */
function plain(text: string): string {
  return clip(text).replace(/[\\`*_~|>#[\]]/g, (c) => `\\${c}`);
}

function code(text: string): string {
  return `\`${clip(text).replace(/`/g, "'")}\``;
}

export function approvalMessage(action: JournaledAction, account: string | null, link: string): string {
  const lines = [
    `**Approval needed:** ${code(action.kind)}${action.argument !== undefined ? ` ${code(action.argument)}` : ''}` +
      ` in ${code(account ?? action.accountId)}`,
    `Proposed by ${plain(reasonText(action.reason))}`,
    ...action.because.slice(0, 5).map((b) => `• ${plain(b)}`),
    ...(action.expiresAt ? [`Expires <t:${Math.floor(Date.parse(action.expiresAt) / 1000)}:R>`] : []),
    // Angle brackets: no link preview, so Discord fetches nothing from the page.
    `Approve or reject: <${link}>`,
  ];
  return lines.join('\n');
}

export function createApprovalNotifyActivities(deps: ApprovalNotifyDeps): ApprovalNotifyActivities {
  const now = deps.now ?? Date.now;
  return {
    async notifyApproval({ actionId }) {
      const webhookUrl = deps.settings.discordWebhookUrl;
      if (!webhookUrl) return { notified: false };
      const action = await loadAction(deps.db, actionId);
      if (!action) throw ApplicationFailure.nonRetryable(`no action ${actionId}`, 'ActionNotFound');
      if (action.result?.discordMessageId) return { notified: true, channel: 'discord' };
      if (action.state !== 'awaiting_approval') return { notified: false }; // decided or expired meanwhile

      const link = approvalLink(await deps.keys(), deps.settings.publicBaseUrl, action.id, deps.settings.linkTtlMs, now());
      const content = approvalMessage(action, await accountEmail(deps.db, action.accountId), link);
      const messageId = await executeWebhook(webhookUrl, { content, allowed_mentions: { parse: [] } });
      await transitionAction(deps.db, {
        id: action.id,
        from: ['awaiting_approval'],
        to: 'awaiting_approval',
        result: { discordMessageId: messageId },
      });
      return { notified: true, channel: 'discord' };
    },
  };
}

/**
 * POSTs a message; returns its id. A 429 is retried after Discord's retry_after, other 4xx are
 * final (the webhook was deleted, the message is invalid), 5xx and network errors are retried.
 * Errors name the status and Discord's message, never the URL (its token is the credential).
 */
async function executeWebhook(webhookUrl: string, body: Record<string, unknown>): Promise<string> {
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
