// Mailbox errors → Temporal failures. The failure type is the error's class name (stable), so
// workflows can tell a revoked grant from a throttle; Retry-After becomes nextRetryDelay. Gmail's
// errors and the IMAP/SMTP servers' say themselves whether a retry can help.
import { ApplicationFailure } from '@temporalio/activity';
import { AccountNotConnectedError, NotAGmailAccountError } from './gmail-accounts.js';
import { GmailAuthError, GmailError, GmailRateLimitError } from '../gmail/errors.js';
import { MailServerError } from '../imap/errors.js';
import { MailboxUnsupportedError } from '../imap/mailbox-errors.js';
import { isNotInMailbox, MailboxCursorExpiredError, SendOutcomeUnknownError } from '../mail/mailbox-errors.js';

export function toActivityFailure(err: unknown): unknown {
  if (err instanceof AccountNotConnectedError) {
    return ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true });
  }
  if (err instanceof MailServerError) {
    // A refused password is the account's (needs_reauth, the thread waits for a reconnect), as a revoked grant is.
    const type = err.kind === 'bad-credentials' ? AccountNotConnectedError.name : err.name;
    return ApplicationFailure.create({ type, message: err.message, nonRetryable: !err.retryable, details: [{ kind: err.kind, protocol: err.protocol }] });
  }
  if (err instanceof NotAGmailAccountError || err instanceof MailboxUnsupportedError || err instanceof SendOutcomeUnknownError || err instanceof MailboxCursorExpiredError || (isNotInMailbox(err) && !(err instanceof GmailError))) {
    return ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true });
  }
  if (!(err instanceof GmailError)) return err;
  if (err instanceof GmailRateLimitError) {
    return ApplicationFailure.create({
      type: err.name,
      message: err.message,
      nextRetryDelay: err.retryAfterMs,
      details: [err.toDetails()],
    });
  }
  return ApplicationFailure.create({
    type: err.name,
    message: err.message,
    nonRetryable: !err.retryable,
    details: [err.toDetails()],
  });
}

/**
 * Whether the mailbox cannot be reached until the user connects the account again (a grant revoked or
 * expired, a refused app password, a disconnected account): a delivery then notes it and goes on.
 */
export function needsReconnect(err: unknown): err is Error {
  return (
    err instanceof AccountNotConnectedError ||
    (err instanceof GmailAuthError && !err.retryable) ||
    (err instanceof MailServerError && err.kind === 'bad-credentials')
  );
}
