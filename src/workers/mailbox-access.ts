// Mailbox access for a worker process's activities: for a Gmail account its sealed tokens from
// Postgres and an OAuth client (when metered, every call drawing from the shared quota bucket); for
// an IMAP account its servers and sealed password, one connection per account and process.
import { GmailAccounts } from '../accounts/gmail-accounts.js';
import { ImapAccounts } from '../accounts/imap-accounts.js';
import { MailboxAccounts } from '../accounts/mailbox-accounts.js';
import { TokenVault } from '../accounts/token-vault.js';
import { gmailOAuthSettings, imapBackfillLimiterOptions } from '../config/settings.js';
import { QuotaLimiter, type QuotaLane } from '../quota/limiter.js';
import { createLogger } from '../shared/log.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import type { WorkerContext } from './context.js';

/** One set of IMAP connections per process, closed with the worker context. */
const imapByContext = new WeakMap<WorkerContext, ImapAccounts>();
/** The backfill's own IMAP connections per process (IMAP_BACKFILL_CONNECTIONS per account), closed with the worker context. */
const backfillImapByContext = new WeakMap<WorkerContext, ImapAccounts>();

/** With `metered`, every Gmail call waits for its units in the process's quota limiter, in `lane` (default live). */
export async function createGmailAccounts(ctx: WorkerContext, opts: { metered: boolean; lane?: QuotaLane }): Promise<GmailAccounts> {
  const gateFor = opts.metered ? ctx.quota.gateFor(opts.lane ?? 'live') : undefined;
  return new GmailAccounts(ctx.prisma, new TokenVault(await resolveTokenKey(ctx.cfg)), gmailOAuthSettings(ctx.cfg), gateFor);
}

/** `lane: 'bulk'`: the calls wait behind live mail for the account's slots (a clean-up's bulk work, like the backfill). */
export async function createMailboxAccounts(ctx: WorkerContext, opts: { metered: boolean; lane?: QuotaLane }): Promise<MailboxAccounts> {
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

/**
 * The backfill's mailboxes, every call in the bulk lane: a Gmail account's metered by the shared quota
 * limiter; an IMAP account's on connections of their own (IMAP_BACKFILL_CONNECTIONS per account, so a
 * backfill never queues the sync's and the threads' commands behind its own on one connection),
 * metered by a limiter of IMAP_BACKFILL_RATE operations per second per account.
 */
export async function createBackfillMailboxAccounts(ctx: WorkerContext): Promise<MailboxAccounts> {
  let imap = backfillImapByContext.get(ctx);
  if (!imap) {
    const limiter = new QuotaLimiter(ctx.sql, imapBackfillLimiterOptions(ctx.cfg));
    const opened = new ImapAccounts(ctx.prisma, new TokenVault(await resolveTokenKey(ctx.cfg)), { log: createLogger('imap') }, {
      connections: ctx.cfg.IMAP_BACKFILL_CONNECTIONS,
      gateFor: limiter.gateFor('bulk'),
      labelMemory: 'process',
    });
    imap = backfillImapByContext.get(ctx) ?? opened;
    if (imap === opened) {
      backfillImapByContext.set(ctx, imap);
      ctx.onClose(() => opened.close());
    }
  }
  return new MailboxAccounts(ctx.prisma, await createGmailAccounts(ctx, { metered: true, lane: 'bulk' }), imap);
}
