// Per-account Gmail access for activities: loads the account's sealed tokens from Postgres,
// builds a googleapis client, saves refreshed tokens back (sealed), and flags the account
// needs_reauth when Google says the grant is gone.
import type { PrismaClient } from '../db/client.js';
import { createGmailClient } from '../gmail/client.js';
import { GmailService, type GmailCallGate } from '../gmail/gmail-service.js';
import { GmailAuthError } from '../gmail/errors.js';
import { createLogger } from '../shared/log.js';
import type { StoredTokens, TokenVault } from './token-vault.js';

export interface GmailOAuthSettings {
  clientId: string;
  clientSecret: string;
  tokenUrl?: string;
  /** OAuth revoke endpoint (disconnecting an account). Default: Google's. */
  revokeUrl?: string;
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

/** A Gmail-only step (a Pub/Sub watch, inserting a message with Gmail's labels) asked of an IMAP account. */
export class NotAGmailAccountError extends Error {
  constructor(accountId: string, provider: string) {
    super(`account ${accountId} is served over ${provider.toUpperCase()}, and this step needs the Gmail API (docs/imap.md says what IMAP accounts do not have yet)`);
    this.name = 'NotAGmailAccountError';
  }
}

const log = createLogger('gmail-accounts');

/**
 * The account was connected again (a new grant) while a call ran with the client of the old one:
 * retryable, the next attempt opens a client with the new grant.
 */
export class GrantReplacedError extends Error {
  constructor(accountId: string) {
    super(`account ${accountId} was connected again while this call ran: retrying with the new grant`);
    this.name = 'GrantReplacedError';
  }
}

interface CachedAccount extends AccountGmail {
  /** The grant this client was opened with. */
  refreshToken: string;
}

export class GmailAccounts {
  private readonly cache = new Map<string, Promise<CachedAccount>>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly vault: TokenVault,
    private readonly oauth: GmailOAuthSettings,
    /** Meters each call of an account (the shared quota limiter); callers that meter themselves leave it out. */
    private readonly gateFor?: (accountId: string) => GmailCallGate,
  ) {}

  /** The account's Gmail service; throws AccountNotConnectedError for an account that needs reauth. */
  forAccount(accountId: string): Promise<AccountGmail> {
    return this.openCached(accountId);
  }

  private openCached(accountId: string): Promise<CachedAccount> {
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
    const opened = await this.openCached(accountId);
    try {
      return await fn(opened.gmail, opened.email);
    } catch (err) {
      if (err instanceof GmailAuthError && err.revoked) {
        this.cache.delete(accountId);
        const current = await this.currentGrant(accountId);
        // A client opened before the user connected the account again holds the old, revoked grant;
        // with no grant stored (disconnected) the error stands, and the account stays as it is.
        if (current !== null && current !== opened.refreshToken) throw new GrantReplacedError(accountId);
        if (current !== null) await this.markNeedsReauth(accountId, err.message);
      }
      throw err;
    }
  }

  /** The refresh token stored for the account now; null when it has none (disconnected). */
  private async currentGrant(accountId: string): Promise<string | null> {
    const row = await this.prisma.account.findUnique({ where: { id: accountId }, select: { encryptedTokens: true } });
    return row?.encryptedTokens ? this.vault.open(row.encryptedTokens).refresh_token : null;
  }

  async markNeedsReauth(accountId: string, reason: string): Promise<void> {
    this.cache.delete(accountId);
    // Only an active account: one the user disconnected (grant revoked on purpose) stays disconnected.
    await this.prisma.account.updateMany({ where: { id: accountId, status: 'active' }, data: { status: 'needs_reauth' } });
    log.warn(`account ${accountId} needs to be reconnected: ${reason}`);
  }

  /** Forgets cached clients (after a reconnect). */
  forget(accountId: string): void {
    this.cache.delete(accountId);
  }

  private async open(accountId: string): Promise<CachedAccount> {
    const account = await this.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    if (account.provider !== 'gmail') throw new NotAGmailAccountError(accountId, account.provider);
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
        const grant = tokens.refresh_token;
        Object.assign(tokens, next);
        this.saveRefreshed(accountId, grant, next).catch((err: unknown) =>
          log.warn(`saving refreshed tokens of ${accountId} failed: ${String(err)}`),
        );
      },
    });
    return { email: account.email, gmail: new GmailService(gmail, 'me', this.gateFor?.(accountId)), refreshToken: tokens.refresh_token };
  }

  /** Stores refreshed tokens, unless the account has another grant by now (reconnected) or none (disconnected). */
  private async saveRefreshed(accountId: string, grant: string, next: StoredTokens): Promise<void> {
    if ((await this.currentGrant(accountId)) !== grant) return;
    await this.prisma.account.update({ where: { id: accountId }, data: { encryptedTokens: this.vault.seal(next) } });
  }
}
