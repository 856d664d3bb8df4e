// Gmail access for a worker process's activities: the account's sealed tokens from Postgres, an
// OAuth client per account, and (when metered) every call drawing from the shared quota bucket.
import { GmailAccounts } from '../accounts/gmail-accounts.js';
import { TokenVault } from '../accounts/token-vault.js';
import { gmailOAuthSettings } from '../config/settings.js';
import type { GmailCallGate } from '../gmail/gmail-service.js';
import { resolveTokenKey } from '../temporal/encryption-keys.js';
import type { WorkerContext } from './context.js';

/**
 * With `metered`, every call waits for its units in the process's quota limiter; the backfill
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
