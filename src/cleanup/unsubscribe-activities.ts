// The unsubscribe's activities (Gmail task queue): finding how a sender says to unsubscribe, judging
// and journaling it, and carrying it out through the one-click client (src/outbound) or the user's
// own mailbox (either provider, through MailboxAccess). Each is idempotent by the journal.
import { ApplicationFailure } from '@temporalio/activity';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { ACTION_MARKER_HEADER, type JournaledAction } from '../actions/contracts.js';
import { loadAction, proposeActions, transitionAction } from '../actions/journal.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { canonicalAddress, sameAddress } from '../gmail/addresses.js';
import { buildPlainTextMessage, toRaw } from '../gmail/mime.js';
import { mailtoUnsubscribe, unsubscribeMethodOf, type UnsubscribeMethod } from '../mail/list-unsubscribe.js';
import { searchableAddress, type Mailbox } from '../mail/mailbox.js';
import type { ThreadMessage } from '../mail/message.js';
import type { OneClickClient } from '../outbound/one-click.js';
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import type { CleanupGmailActivities } from './activity-contracts.js';

/** How many of the sender's newest messages are read looking for a List-Unsubscribe header. */
const MESSAGES_LOOKED_AT = 10;

export function createUnsubscribeActivities(deps: { accounts: MailboxAccess; db: SqlExecutor; oneClick: OneClickClient }): CleanupGmailActivities {
  const { accounts, db, oneClick } = deps;

  const withMailbox = async <T>(accountId: string, fn: (mailbox: Mailbox, email: string) => Promise<T>): Promise<T> => {
    try {
      return await heartbeatWhile(() => accounts.call(accountId, fn));
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  /**
   * The sender's newest message that says how to unsubscribe, and how. A provider's from: search
   * matches display names too (Gmail's and IMAP's): a message counts as the sender's only when the
   * reader's one sender of it is that address, so mallory's mail dressed as the sender cannot hand
   * over his List-Unsubscribe.
   */
  async function newestWithMethod(mailbox: Mailbox, sender: string): Promise<{ message: ThreadMessage; method: UnsubscribeMethod } | undefined> {
    const list = await mailbox.searchMessages({ from: sender, in: 'ALL', maxResults: MESSAGES_LOOKED_AT });
    for (const ref of list.messages) {
      const message = await mailbox.getMessage(ref.id);
      if (!sameAddress(message.from?.address, sender)) continue;
      const method = unsubscribeMethodOf(message.headers);
      if (method) return { message, method };
    }
    return undefined;
  }

  /** Journals the outcome of an unsubscribe that ended (done, or failed for good). */
  async function settle(action: JournaledAction, to: 'done' | 'failed', note: string | undefined, extra: { status?: number; sentMessageId?: string }): Promise<JournaledAction> {
    const unsubscribe = { ...action.result!.unsubscribe!, ...(extra.status !== undefined ? { status: extra.status } : {}) };
    const moved = await transitionAction(db, {
      id: action.id,
      from: ['queued', 'approved'],
      to,
      ...(note ? { note } : {}),
      result: { unsubscribe, ...(extra.sentMessageId ? { sentMessageId: extra.sentMessageId } : {}) },
    });
    return moved?.action ?? action;
  }

  async function byMail(action: JournaledAction): Promise<JournaledAction> {
    const mail = mailtoUnsubscribe(action.result?.unsubscribe?.uri ?? '');
    if (!mail || !action.recipients.includes(mail.to)) {
      return settle(action, 'failed', 'the mailto: address is not the one the policy judged', {});
    }
    const sentId = await withMailbox(action.accountId, async (mailbox, email) => {
      // Look before sending: a worker killed after the send and before the journal finds its mail.
      const sent = await mailbox.searchMessages({ to: mail.to, in: 'SENT', maxResults: 20 });
      for (const ref of sent.messages) {
        const message = await mailbox.getMessage(ref.id);
        if (message.headers[ACTION_MARKER_HEADER.toLowerCase()] === action.id) return message.id;
      }
      const raw = buildPlainTextMessage({
        from: { address: email },
        to: [{ address: mail.to }],
        subject: mail.subject,
        body: mail.body,
        extraHeaders: { [ACTION_MARKER_HEADER]: action.id },
      });
      return (await mailbox.sendMessage(toRaw(raw))).id;
    });
    return settle(action, 'done', undefined, { sentMessageId: sentId });
  }

  async function byOneClick(action: JournaledAction): Promise<JournaledAction> {
    const outcome = await oneClick.post(action.result?.unsubscribe?.uri ?? '');
    switch (outcome.outcome) {
      case 'done':
        return settle(action, 'done', undefined, { status: outcome.status });
      case 'refused':
        return settle(action, 'failed', `refused: ${outcome.reason}`, {});
      case 'failed':
        if (!outcome.retryable) return settle(action, 'failed', outcome.reason, outcome.status !== undefined ? { status: outcome.status } : {});
        throw ApplicationFailure.create({ type: 'UnsubscribeRetryableError', message: outcome.reason });
    }
  }

  return {
    async proposeUnsubscribe({ accountId, sender, reason, workflowId, approvalExpiryMs }) {
      const address = canonicalAddress(sender);
      if (!searchableAddress(address)) return { action: null, why: `${sender} is not an address` };
      const found = await withMailbox(accountId, (mailbox) => newestWithMethod(mailbox, address));
      if (!found) return { action: null, why: `none of the newest ${MESSAGES_LOOKED_AT} messages from ${address} says how to unsubscribe (one-click or mailto:)` };
      const { message, method } = found;
      const [action] = await proposeActions(db, {
        accountId,
        threadId: message.threadId,
        messageId: message.id,
        sender: address,
        recipients: method.method === 'mailto' ? [method.to] : [],
        subject: message.subject,
        workflowId,
        actions: [
          {
            kind: 'unsubscribe',
            argument: address,
            reason,
            result: { unsubscribe: { method: method.method, uri: method.uri, ...(method.method === 'mailto' ? { to: method.to } : {}) } },
          },
        ],
        pausedByLabel: false,
        approvalExpiryMs,
      });
      return { action: action! };
    },

    async performUnsubscribe({ actionId }) {
      const action = await loadAction(db, actionId);
      if (!action || action.kind !== 'unsubscribe') throw ApplicationFailure.create({ type: 'ActionNotFoundError', message: `no unsubscribe ${actionId}`, nonRetryable: true });
      if (action.state === 'done' || action.state === 'failed') return action;
      if (action.state !== 'queued' && action.state !== 'approved') {
        throw ApplicationFailure.create({ type: 'ActionStateError', message: `unsubscribe ${actionId} is ${action.state}`, nonRetryable: true });
      }
      return action.result?.unsubscribe?.method === 'mailto' ? byMail(action) : byOneClick(action);
    },
  };
}
