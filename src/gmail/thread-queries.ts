// Pure questions about a ThreadSnapshot that the per-thread workflow asks between Gmail calls.

import { sameAddress } from './addresses.js';
import type { ThreadMessage, ThreadSnapshot } from '../mail/message.js';

function isFrom(message: ThreadMessage, userEmails: string[]): boolean {
  return userEmails.some((email) => sameAddress(message.from?.address, email));
}

function asList(userEmail: string | string[]): string[] {
  return Array.isArray(userEmail) ? userEmail : [userEmail];
}

/**
 * The reply the user sent after our draft was created, if any: a SENT (not DRAFT) message from the user in
 * the thread with internalDate ≥ afterInternalDate. Sending a draft gives the message a new id, so this looks
 * at the thread's SENT messages rather than at the draft's message id. When the draft is gone and this
 * returns null, the user discarded the draft. Pass every send-as address of the account as userEmail.
 */
export function findSentReplyAfter(thread: ThreadSnapshot, afterInternalDate: number, userEmail: string | string[]): ThreadMessage | null {
  const emails = asList(userEmail);
  // An IMAP server keeps INTERNALDATE to the second: a reply sent in the second the draft was written counts.
  const after = Math.floor(afterInternalDate / 1000) * 1000;
  const sent = thread.messages.filter(
    (m) => m.labelIds.includes('SENT') && !m.isDraft && m.internalDate >= after && isFrom(m, emails),
  );
  if (sent.length === 0) return null;
  return sent.reduce((earliest, m) => (m.internalDate < earliest.internalDate ? m : earliest));
}

/** The newest message someone else sent into the thread (not a draft, not SENT, not from the user). */
export function latestInboundMessage(thread: ThreadSnapshot, userEmail: string | string[]): ThreadMessage | null {
  const emails = asList(userEmail);
  let latest: ThreadMessage | null = null;
  for (const message of thread.messages) {
    if (message.isDraft || message.labelIds.includes('SENT') || isFrom(message, emails)) continue;
    if (!latest || message.internalDate >= latest.internalDate) latest = message;
  }
  return latest;
}
