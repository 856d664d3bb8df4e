// The agent's mailbox activity (task queue durable-inbox-gmail): a search in the thread's own
// account, Gmail's syntax on either provider (IMAP reads what it can say of it). The account comes
// from the workflow, never from the model.
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import type { AgentGmailActivities } from './activity-contracts.js';

export function createAgentGmailActivities({ accounts }: { accounts: MailboxAccess }): AgentGmailActivities {
  return {
    async searchMailbox({ accountId, query, maxResults }) {
      try {
        return await heartbeatWhile(() => accounts.call(accountId, async (mailbox) => {
          const page = await mailbox.searchMessages({ query, maxResults });
          const hits = [];
          for (const ref of page.messages.slice(0, maxResults)) {
            const m = await mailbox.getMessage(ref.id);
            hits.push({ messageId: m.id, threadId: m.threadId, from: m.from?.address ?? '', subject: m.subject, date: m.date, snippet: m.snippet });
          }
          return hits;
        }));
      } catch (err) {
        throw toActivityFailure(err);
      }
    },
  };
}
