// One e-mail of ours put into the user's own mailbox at most once: its Message-ID is the idempotency
// key, and a retry looks for it (anywhere, spam and trash included) before inserting, so a worker
// killed after the provider took the message and before anything was journaled does not put a second
// one there. Used by the reminders, the scheduled reports, the backfill's alerts and the weekly lessons e-mail.
import type { Mailbox } from './mailbox.js';

/** The message with `messageId` if the mailbox has it, else the one `insert` puts there. */
export async function insertOnce(
  mailbox: Mailbox,
  messageId: string,
  insert: () => Promise<{ id: string; threadId: string }>,
): Promise<{ id: string; threadId: string; inserted: boolean }> {
  const already = await mailbox.searchMessages({ messageId, in: 'ANYWHERE', maxResults: 1 });
  const found = already.messages[0];
  if (found) return { id: found.id, threadId: found.threadId, inserted: false };
  return { ...(await insert()), inserted: true };
}
