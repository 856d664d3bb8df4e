// One e-mail of ours put into the user's own inbox (messages.insert) at most once: its Message-ID is
// the idempotency key, and a retry searches for it (rfc822msgid:) before inserting, so a worker
// killed after Gmail took the message and before anything was journaled does not put a second one
// there. Used by the reminders, the scheduled reports and the weekly lessons e-mail.
import type { GmailService } from './gmail-service.js';

/** The message with `messageId` if Gmail has it (spam and trash included), else the one `insert` puts there. */
export async function insertOnce(
  gmail: GmailService,
  messageId: string,
  insert: () => Promise<{ id: string; threadId: string }>,
): Promise<{ id: string; threadId: string; inserted: boolean }> {
  // The search takes the id without its angle brackets.
  const already = await gmail.listMessages({ q: `rfc822msgid:${messageId.replace(/^<|>$/g, '')}`, includeSpamTrash: true, maxResults: 1 });
  const found = already.messages[0];
  if (found) return { id: found.id, threadId: found.threadId, inserted: false };
  return { ...(await insert()), inserted: true };
}
