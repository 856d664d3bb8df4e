// The answers of a mailbox the product acts on whichever provider gives them: the thing an id names
// is not there (Gmail's 404, a message in no IMAP folder); the change cursor is void (Gmail's
// expired history id, an IMAP folder's new UIDVALIDITY): read the mailbox again; and a send whose
// outcome cannot be known (SMTP cut off after the message was handed over).

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

/**
 * A send whose outcome nobody can know: the message was handed to the server and its answer never
 * came (the worker died, the connection dropped). Sending again could send it twice and not sending
 * could lose it: the user decides. `trace` says where the interrupted copy is.
 */
export class SendOutcomeUnknownError extends Error {
  override readonly name = 'SendOutcomeUnknownError';
  readonly retryable = false;
  constructor(
    readonly messageId: string,
    trace: string,
  ) {
    super(`A send of ${messageId.slice(0, 120)} was cut off after the message was handed to the mail server, and whether the server took it is not known: ${trace}; ask the recipient, or send it again yourself.`);
  }
}
