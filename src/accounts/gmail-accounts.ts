// Per-account Gmail access for activities: loads the account's sealed tokens from Postgres,
// builds a googleapis client, saves refreshed tokens back (sealed), and flags the account
// needs_reauth when Google says the grant is gone.
import type { PrismaClient } from '../db/client.js';
import { createGmailClient } from '../services/gmail/client.js';
import { GmailService, type GmailCallGate } from '../services/gmail/gmail-service.js';
import { GmailAuthError } from '../services/gmail/errors.js';
import { createLogger } from '../shared/log.js';
import type { TokenVault } from './token-vault.js';

export interface GmailOAuthSettings {
  clientId: string;
  clientSecret: string;
  tokenUrl?: string;
  /** The Gmail API root (the emulator in dev and tests). */
  rootUrl?: string;
}

export interface AccountGmail {
  email: string;
  gmail: GmailService;
}

export class AccountNotConnectedError extends Error {
  constructor(accountId: string, status: string) {
    super(`account ${accountId} is ${status}: reconnect it with \`npm run cli -- accounts connect\``);
    this.name = 'AccountNotConnectedError';
  }
}

const log = createLogger('gmail-accounts');

export class GmailAccounts {
  private readonly cache = new Map<string, Promise<AccountGmail>>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly vault: TokenVault,
    private readonly oauth: GmailOAuthSettings,
    /** Meters each call of an account (the shared quota limiter); callers that meter themselves leave it out. */
    private readonly gateFor?: (accountId: string) => GmailCallGate,
  ) {}

  /** The account's Gmail service; throws AccountNotConnectedError for an account that needs reauth. */
  forAccount(accountId: string): Promise<AccountGmail> {
    let entry = this.cache.get(accountId);
    if (!entry) {
      entry = this.open(accountId);
      entry.catch(() => this.cache.delete(accountId));
      this.cache.set(accountId, entry);
    }
    return entry;
  }

  /**
   * Runs one Gmail call for the account. An auth failure that means the grant is gone marks the
   * account needs_reauth (its sync pauses) before the error goes on to the activity.
   */
  async call<T>(accountId: string, fn: (gmail: GmailService, email: string) => Promise<T>): Promise<T> {
    const { gmail, email } = await this.forAccount(accountId);
    try {
      return await fn(gmail, email);
    } catch (err) {
      if (err instanceof GmailAuthError && err.revoked) await this.markNeedsReauth(accountId, err.message);
      throw err;
    }
  }

  async markNeedsReauth(accountId: string, reason: string): Promise<void> {
    this.cache.delete(accountId);
    await this.prisma.account.update({ where: { id: accountId }, data: { status: 'needs_reauth' } });
    log.warn(`account ${accountId} needs to be reconnected: ${reason}`);
  }

  /** Forgets cached clients (after a reconnect). */
  forget(accountId: string): void {
    this.cache.delete(accountId);
  }

  private async open(accountId: string): Promise<AccountGmail> {
    const account = await this.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    if (account.status !== 'active' || !account.encryptedTokens) {
      throw new AccountNotConnectedError(accountId, account.encryptedTokens ? account.status : 'not connected');
    }
    const tokens = this.vault.open(account.encryptedTokens);
    const { gmail } = createGmailClient({
      rootUrl: this.oauth.rootUrl,
      clientId: this.oauth.clientId,
      clientSecret: this.oauth.clientSecret,
      tokenUrl: this.oauth.tokenUrl,
      credentials: tokens,
      onTokens: (fresh) => {
        const next = {
          ...tokens,
          ...(fresh.refresh_token ? { refresh_token: fresh.refresh_token } : {}),
          ...(fresh.access_token ? { access_token: fresh.access_token } : {}),
          ...(fresh.expiry_date ? { expiry_date: fresh.expiry_date } : {}),
        };
        Object.assign(tokens, next);
        this.prisma.account
          .update({ where: { id: accountId }, data: { encryptedTokens: this.vault.seal(next) } })
          .catch((err: unknown) => log.warn(`saving refreshed tokens of ${accountId} failed: ${String(err)}`));
      },
    });
    return { email: account.email, gmail: new GmailService(gmail, 'me', this.gateFor?.(accountId)) };
  }
}
