// Delivering a backfill alert where a person sees it: the Discord webhook (when configured) and
// an email put into the account's own inbox (messages.insert; at most one per kind and level per
// account within the rate limit). What was sent is journaled on the alert's row before the next
// channel is tried, so a retried activity sends each at most once; only a crash between a
// channel's answer and that write can send twice. A channel that refuses for good (webhook
// deleted, grant revoked) is noted on the row and does not hold the backfill up.
import { ApplicationFailure } from '@temporalio/common';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { needsReconnect } from '../accounts/mailbox-failures.js';
import { buildPlainTextMessage, toRaw } from '../gmail/mime.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { executeWebhook } from '../shared/discord-webhook.js';
import { createLogger } from '../shared/log.js';
import type { BackfillAlertDeliveryActivities } from './activity-contracts.js';
import { finishDelivery, lastAlertEmail, loadAlert, saveDiscordDelivery, saveEmailDelivery, type BackfillAlertRow } from './alert-journal.js';
import type { AlertKind } from './contracts.js';

const log = createLogger('backfill-alerts');

export interface AlertDeliveryDeps {
  db: SqlExecutor;
  /** Gmail access for the email into the account's inbox. */
  accounts: MailboxAccess;
  discordWebhookUrl?: string;
  /** At most one email per account, kind and level within this long. */
  emailEveryMs: number;
  now?: () => number;
}

const KIND_TITLE: Record<AlertKind, string> = {
  bad_rate: 'bad-message rate',
  bad_spike: 'bad-message spike',
  metadata: 'metadata budget',
};

export function alertTitle(alert: Pick<BackfillAlertRow, 'kind' | 'level'>): string {
  return `Backfill ${alert.level}: ${KIND_TITLE[alert.kind]}`;
}

export function alertText(alert: Pick<BackfillAlertRow, 'kind' | 'level' | 'detail'>, email: string): string {
  return [
    `The mailbox import (backfill) of ${email} raised a ${alert.level} alert: ${KIND_TITLE[alert.kind]}.`,
    alert.detail,
    `Details: npm run cli -- backfill status ${email}; the messages it could not store are in bad_messages.`,
  ].join('\n');
}

export function createAlertDeliveryActivities(deps: AlertDeliveryDeps): BackfillAlertDeliveryActivities {
  const now = deps.now ?? Date.now;
  return {
    async backfillDeliverAlert({ alertId }) {
      let alert = await loadAlert(deps.db, alertId);
      if (!alert) throw ApplicationFailure.nonRetryable(`no backfill alert ${alertId}`, 'BackfillAlertNotFound');
      if (alert.deliveredAt) return { discord: alert.discordMessageId !== null, email: alert.emailMessageId !== null };
      const [account] = await deps.db.query<{ email: string }>(`SELECT email FROM accounts WHERE id = $1`, [alert.accountId]);
      const email = account?.email ?? alert.accountId;
      const notes: string[] = [];

      if (!deps.discordWebhookUrl) notes.push('discord: no webhook configured');
      else if (!alert.discordMessageId) {
        try {
          const content = `**${alertTitle(alert)}** in \`${email}\`\n${alertText(alert, email)}`;
          await saveDiscordDelivery(deps.db, alert.id, await executeWebhook(deps.discordWebhookUrl, { content, allowed_mentions: { parse: [] } }));
        } catch (err) {
          if (!(err instanceof ApplicationFailure && err.nonRetryable)) throw err;
          notes.push(`discord: ${err.message}`);
        }
      }

      alert = (await loadAlert(deps.db, alertId))!;
      if (!alert.emailMessageId) {
        const last = await lastAlertEmail(deps.db, alert.accountId, alert.kind, alert.level);
        if (last && now() - last.getTime() < deps.emailEveryMs) {
          notes.push(`email: rate-limited (one per ${Math.round(deps.emailEveryMs / 60_000)} min per kind and level; last ${last.toISOString()})`);
        } else {
          try {
            const rfc2822 = buildPlainTextMessage({
              from: { name: 'durable-inbox', address: email },
              to: [{ address: email }],
              subject: `[durable-inbox] ${alertTitle(alert)}`,
              body: alertText(alert, email),
              date: new Date(now()),
              // Marks it machine-made: the rules take it as automated mail, never one to answer.
              extraHeaders: { 'Auto-Submitted': 'auto-generated', 'X-Durable-Inbox-Alert': alert.id },
            });
            const inserted = await deps.accounts.call(alert.accountId, (mailbox) => mailbox.insertMessage(toRaw(rfc2822), ['INBOX', 'UNREAD']));
            await saveEmailDelivery(deps.db, alert.id, inserted.id);
          } catch (err) {
            if (!needsReconnect(err)) throw err;
            notes.push(`email: ${err.message}`);
          }
        }
      }
      await finishDelivery(deps.db, alert.id, notes);
      if (notes.length > 0) log.warn(`backfill alert ${alert.id} (${alert.kind} ${alert.level}) for ${email}: ${notes.join('; ')}`);
      const done = (await loadAlert(deps.db, alertId))!;
      return { discord: done.discordMessageId !== null, email: done.emailMessageId !== null };
    },
  };
}
