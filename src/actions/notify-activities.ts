// Telling the user an action waits for approval: a Discord webhook message (Execute Webhook,
// ?wait=true) with a short summary and a signed link to the approvals page. The summary holds the
// action's kind and argument, whom it sends to, the account's address and the policy's reasons:
// never mail content, tokens or the webhook URL. Control characters and bidi overrides are dropped. The message id is journaled in the action's result, so a retried
// activity posts once; only a crash between Discord's answer and that write can post twice.
import { ApplicationFailure } from '@temporalio/common';
import type { ApprovalsSettings, JournaledAction } from './contracts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { ApprovalNotifyActivities } from './activity-contracts.js';
import { approvalLink, type ApprovalKeys } from './approval-links.js';
import { accountEmail, reasonText, recipientsText } from './approval-request.js';
import { loadAction, transitionAction } from './journal.js';
import { code, plain, postNoticeOnce } from '../shared/discord-webhook.js';

export interface ApprovalNotifyDeps {
  db: SqlExecutor;
  /** Link keys, resolved on first use. */
  keys(): Promise<ApprovalKeys>;
  settings: Pick<ApprovalsSettings, 'discordWebhookUrl' | 'publicBaseUrl' | 'linkTtlMs'>;
  now?: () => number;
}


export function approvalMessage(action: JournaledAction, account: string | null, link: string): string {
  const lines = [
    `**Approval needed:** ${code(action.kind)}${action.argument !== undefined ? ` ${code(action.argument)}` : ''}` +
      ` in ${code(account ?? action.accountId)}`,
    ...(recipientsText(action) ? [`To ${code(recipientsText(action))}`] : []),
    `Proposed by ${plain(reasonText(action.reason))}`,
    ...action.because.slice(0, 5).map((b) => `• ${plain(b)}`),
    ...(action.expiresAt ? [`Expires <t:${Math.floor(Date.parse(action.expiresAt) / 1000)}:R>`] : []),
    // Angle brackets: no link preview, so Discord fetches nothing from the page.
    `Approve or reject: <${link}>`,
  ];
  return lines.join('\n');
}

/** A reminder or a follow-up that fell due: which thread, in which account; the user's note (never mail content). */
export function timerMessage(action: JournaledAction, account: string | null): string {
  const what = action.kind === 'follow_up' ? '**Follow up:** no answer yet' : '**Reminder**';
  const link = `https://mail.google.com/mail/u/${encodeURIComponent(account ?? '')}/#all/${encodeURIComponent(action.threadId)}`;
  return [
    `${what} in ${code(account ?? action.accountId)}, thread ${code(action.threadId)}`,
    ...(action.note ? [`Note: ${plain(action.note)}`] : []),
    `<${link}>`,
  ].join('\n');
}

export function createApprovalNotifyActivities(deps: ApprovalNotifyDeps): ApprovalNotifyActivities {
  const now = deps.now ?? Date.now;
  const load = async (actionId: string) => {
    const action = await loadAction(deps.db, actionId);
    if (!action) throw ApplicationFailure.nonRetryable(`no action ${actionId}`, 'ActionNotFound');
    return action;
  };
  // The message id goes into the action's result, its state unchanged.
  const recordOn = (action: JournaledAction) => async (messageId: string) => {
    await transitionAction(deps.db, { id: action.id, from: [action.state], to: action.state, result: { discordMessageId: messageId } });
  };
  return {
    async notifyTimer({ actionId }) {
      if (!deps.settings.discordWebhookUrl) return { notified: false };
      const action = await load(actionId);
      const notified = await postNoticeOnce(deps.settings.discordWebhookUrl, {
        posted: async () => !!action.result?.discordMessageId,
        content: async () => timerMessage(action, await accountEmail(deps.db, action.accountId)),
        record: recordOn(action),
      });
      return notified ? { notified, channel: 'discord' } : { notified };
    },

    async notifyApproval({ actionId }) {
      if (!deps.settings.discordWebhookUrl) return { notified: false };
      const action = await load(actionId);
      const notified = await postNoticeOnce(deps.settings.discordWebhookUrl, {
        posted: async () => !!action.result?.discordMessageId,
        content: async () => {
          if (action.state !== 'awaiting_approval') return null; // decided or expired meanwhile
          const link = approvalLink(await deps.keys(), deps.settings.publicBaseUrl, action.id, deps.settings.linkTtlMs, now());
          return approvalMessage(action, await accountEmail(deps.db, action.accountId), link);
        },
        record: recordOn(action),
      });
      return notified ? { notified, channel: 'discord' } : { notified };
    },
  };
}
