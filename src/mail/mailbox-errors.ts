// The two answers of a mailbox the product acts on whichever provider gives them: the thing an id
// names is not there (Gmail's 404, a message in no IMAP folder), and the change cursor is void
// (Gmail's expired history id, an IMAP folder's new UIDVALIDITY): read the mailbox again.

/** The message, draft, thread or label an id names is not in the mailbox (any more). */
export interface NotInMailbox {
  readonly notInMailbox: true;
  readonly resource: string;
}

/** Whether `err` says the thing is not in the mailbox; `resource` narrows it (thread, message, draft…). */
export function isNotInMailbox(err: unknown, resource?: string): err is Error & NotInMailbox {
  const e = err as Partial<NotInMailbox> | null;
  return err instanceof Error && e?.notInMailbox === true && (resource === undefined || e.resource === resource);
}

/** The sync's cursor is void: the mailbox must be read again from the start (a full scan). */
export class MailboxCursorExpiredError extends Error {
  override readonly name: string = 'MailboxCursorExpiredError';
  readonly retryable = false;
}
