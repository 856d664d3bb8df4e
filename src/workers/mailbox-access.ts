// Mailbox access for a worker process's activities: for a Gmail account its sealed tokens from
// Postgres and an OAuth client (when metered, every call drawing from the shared quota bucket); for
// an IMAP account its servers and sealed password, one connection per account and process.
import { GmailAccounts } from '../accounts/gmail-accounts.js';
import { ImapAccounts } from '../accounts/imap-accounts.js';
import { MailboxAccounts } from '../accounts/mailbox-accounts.js';
import { TokenVault } from '../accounts/token-vault.js';
import { gmailOAuthSettings } from '../config/settings.js';
import type { GmailCallGate } from '../gmail/gmail-service.js';
import { createLogger } from '../shared/log.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import type { WorkerContext } from './context.js';

/** One set of IMAP connections per process, closed with the worker context. */
const imapByContext = new WeakMap<WorkerContext, ImapAccounts>();

/**
 * With `metered`, every Gmail call waits for its units in the process's quota limiter; the backfill
 * activities meter their batches themselves and take an unmetered one.
 */
export async function createGmailAccounts(ctx: WorkerContext, opts: { metered: boolean }): Promise<GmailAccounts> {
  const gateFor = opts.metered
    ? (accountId: string): GmailCallGate =>
        (method, call) =>
          ctx.quota.run(accountId, method, call)
    : undefined;
  return new GmailAccounts(ctx.prisma, new TokenVault(await resolveTokenKey(ctx.cfg)), gmailOAuthSettings(ctx.cfg), gateFor);
}

export async function createMailboxAccounts(ctx: WorkerContext, opts: { metered: boolean }): Promise<MailboxAccounts> {
  let imap = imapByContext.get(ctx);
  if (!imap) {
    const opened = new ImapAccounts(ctx.prisma, new TokenVault(await resolveTokenKey(ctx.cfg)), { log: createLogger('imap') });
    imap = imapByContext.get(ctx) ?? opened;
    if (imap === opened) {
      imapByContext.set(ctx, imap);
      ctx.onClose(() => opened.close());
    }
  }
  return new MailboxAccounts(ctx.prisma, await createGmailAccounts(ctx, opts), imap);
}
