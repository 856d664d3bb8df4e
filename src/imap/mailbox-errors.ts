// Failures of the IMAP mailbox's operations (after connecting): the connection layer's
// MailServerError for what the server or the network did, plus the two answers the product acts on
// like Gmail's 404s: a folder whose UIDVALIDITY changed (the sync's full rescan, as a Gmail history
// 404) and a message or thread that is not there.
import { MailServerError, imapFailure, type FailureContext } from './errors.js';
import { MailboxCursorExpiredError, type NotInMailbox } from '../mail/mailbox-errors.js';

/** A folder's UIDVALIDITY changed (or it was deleted): every id and cursor position in it is void. Rescan. */
export class MailboxResetError extends MailboxCursorExpiredError {
  override readonly name = 'MailboxResetError';
  constructor(
    readonly folder: string,
    readonly was: string,
    readonly now: string | undefined,
  ) {
    super(
      now === undefined
        ? `The IMAP folder ${JSON.stringify(folder)} no longer exists: the mailbox must be read again from the start.`
        : `The IMAP folder ${JSON.stringify(folder)} was reset by the server (UIDVALIDITY ${was} is now ${now}): the mailbox must be read again from the start.`,
    );
  }
}

/** The message, draft or thread an id names is not in the mailbox (any more). */
export class MailboxNotFoundError extends Error implements NotInMailbox {
  override readonly name = 'MailboxNotFoundError';
  readonly retryable = false;
  readonly notInMailbox = true;
  constructor(
    readonly resource: 'message' | 'thread' | 'draft',
    readonly id: string,
  ) {
    super(`The ${resource} ${id.slice(0, 120)} is not in the IMAP mailbox.`);
  }
}

/** A label change the account cannot keep (a server without keywords, in folders mode). */
export class MailboxUnsupportedError extends Error {
  override readonly name = 'MailboxUnsupportedError';
  readonly retryable = false;
}

const CLOSED_CODES = new Set(['NoConnection', 'EConnectionClosed', 'ECONNRESET', 'EPIPE', 'ETIMEOUT', 'ETIMEDOUT', 'ClosedAfterConnectText', 'ClosedAfterConnectTLS']);

/**
 * An imapflow failure during `operation` as a MailServerError: a dropped or refused connection is
 * 'unreachable' (retryable: the next call reconnects), a NO/BAD answer is 'protocol' (not retryable),
 * the server's words only in the display-safe `serverText`.
 */
export function imapOperationFailure(err: unknown, ctx: FailureContext, operation: string, connectionLost: boolean): Error {
  if (err instanceof MailServerError || err instanceof MailboxResetError || err instanceof MailboxNotFoundError || err instanceof MailboxUnsupportedError) return err;
  const e = (err ?? {}) as { code?: string; message?: string; responseText?: string; serverResponseCode?: string };
  const mapped = imapFailure(err, ctx);
  if (connectionLost || CLOSED_CODES.has(e.code ?? '')) {
    return new MailServerError(
      `The IMAP server ${ctx.host}:${ctx.port} closed the connection during ${operation}; the next attempt connects again.`,
      { kind: 'unreachable', protocol: 'imap', host: ctx.host, port: ctx.port, ...(e.code ? { code: e.code } : {}), ...(mapped.serverText ? { serverText: mapped.serverText } : {}) },
    );
  }
  if (mapped.kind === 'protocol') {
    return new MailServerError(
      `The IMAP server ${ctx.host}:${ctx.port} refused ${operation}${e.serverResponseCode && /^[A-Z][A-Z0-9-]{0,39}$/i.test(e.serverResponseCode) ? ` (${e.serverResponseCode})` : ''}.`,
      { kind: 'protocol', protocol: 'imap', host: ctx.host, port: ctx.port, ...(e.code ? { code: e.code } : {}), ...(mapped.serverText ? { serverText: mapped.serverText } : {}) },
    );
  }
  return mapped;
}
