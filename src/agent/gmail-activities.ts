// The agent's Gmail activity (task queue durable-inbox-gmail): a mailbox search in the thread's own
// account. The account comes from the workflow, never from the model.
import type { GmailAccounts } from '../accounts/gmail-accounts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import type { AgentGmailActivities } from './activity-contracts.js';

export function createAgentGmailActivities({ accounts }: { accounts: GmailAccounts }): AgentGmailActivities {
  return {
    async searchMailbox({ accountId, query, maxResults }) {
      try {
        return await heartbeatWhile(() => accounts.call(accountId, async (gmail) => {
          const page = await gmail.listMessages({ q: query, maxResults });
          const hits = [];
          for (const ref of page.messages.slice(0, maxResults)) {
            const m = await gmail.getMessage(ref.id, 'metadata', ['From', 'Subject', 'Date']);
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
