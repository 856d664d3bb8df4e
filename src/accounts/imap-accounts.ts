// Per-account IMAP/SMTP access for activities: the account's servers from Postgres, its app password
// or OAuth grant sealed beside them (as Gmail's tokens are), one ImapMailbox (one IMAP connection) per account and
// process, opened on first use. A refused password marks the account needs_reauth, as a revoked
// Gmail grant does; a dropped connection is opened again by the next call.
import { z } from 'zod';
import type { PrismaClient } from '../db/client.js';
import type { MailConnectDeps } from '../imap/connect.js';
import { MailServerError } from '../imap/errors.js';
import { ImapMailbox, type ImapCallGate } from '../imap/imap-mailbox.js';
import { createLogger } from '../shared/log.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { AccountNotConnectedError } from './gmail-accounts.js';
import { postgresLabelMemory } from './imap-label-memory.js';
import type { MailCredentials, MailServerAddress } from '../imap/contracts.js';
import { processAccessTokens, type AccessTokenCache, type AccessTokenSource, type OAuthTokenDeps } from '../imap/oauth-token.js';
import type { TokenVault } from './token-vault.js';

const serverSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535),
  tls: z.enum(['implicit', 'starttls']),
  ca: z.union([z.string(), z.array(z.string())]).optional(),
  servername: z.string().optional(),
});

/** What accounts.mail_servers holds for an IMAP account: the servers and user names, no secret. */
export const imapServersSchema = z.object({
  imap: z.object({ server: serverSchema, user: z.string().min(1) }),
  smtp: z.object({ server: serverSchema, user: z.string().min(1) }),
});
export type ImapServers = z.infer<typeof imapServersSchema>;

/** What encrypted_tokens holds for an IMAP account: an app password, or an OAuth grant (XOAUTH2). */
export const imapSecretSchema = z.union([
  z.object({ password: z.string().min(1), smtpPassword: z.string().min(1).optional() }),
  z.object({
    oauth: z.object({
      tokenUrl: z.string().min(1),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1).optional(),
      refreshToken: z.string().min(1),
    }),
  }),
]);
export type ImapSecret = z.infer<typeof imapSecretSchema>;

/** How an OAuth account's access tokens are had: the process's cache, keyed by account; a rotated refresh token is stored by `onRotated`. */
export interface ImapOAuthAccess {
  key: string;
  cache?: AccessTokenCache;
  deps?: OAuthTokenDeps;
}

const log = createLogger('imap-accounts');

interface OpenedImap {
  email: string;
  mailbox: ImapMailbox;
}

/** One of an account's connections: opened on first use, and how many calls it has now. */
interface Connection {
  opened: Promise<OpenedImap> | undefined;
  busy: number;
}

export interface ImapAccountsOptions {
  /** Connections per account in this process (default 1); a call takes the least busy one. */
  connections?: number;
  /** Runs each IMAP operation of an account (a limiter's metering, the backfill's). */
  gateFor?: (accountId: string) => ImapCallGate;
  /**
   * Where each mailbox remembers the labels it saw (default 'database': imap_label_memory, shared by
   * every process, kept across restarts); 'process' keeps nothing (the backfill's reads, which the
   * sync never diffs against, would write a row per message).
   */
  labelMemory?: 'database' | 'process';
  /** OAuth accounts: the token endpoint's fetch and clock (tests). */
  oauth?: Pick<OAuthTokenDeps, 'fetch' | 'now'>;
  /** Where access tokens are cached (default the process's). */
  tokens?: AccessTokenCache;
}

export class ImapAccounts {
  private readonly cache = new Map<string, Connection[]>();
  private readonly connections: number;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly vault: TokenVault,
    private readonly connect: MailConnectDeps = {},
    private readonly options: ImapAccountsOptions = {},
  ) {
    this.connections = Math.max(1, options.connections ?? 1);
  }

  /** Runs `fn` on the account's mailbox. A refused login marks the account needs_reauth before the error goes on. */
  async call<T>(accountId: string, fn: (mailbox: ImapMailbox, email: string) => Promise<T>): Promise<T> {
    const connection = this.leastBusy(accountId);
    connection.busy++;
    try {
      const opened = await this.opened(accountId, connection);
      return await fn(opened.mailbox, opened.email);
    } catch (err) {
      if (err instanceof MailServerError && err.kind === 'bad-credentials') await this.markNeedsReauth(accountId, err.message);
      throw err;
    } finally {
      connection.busy--;
    }
  }

  /** Closes every open connection (worker shutdown). */
  async close(): Promise<void> {
    const opened = [...this.cache.values()].flat();
    this.cache.clear();
    await Promise.all(opened.map((c) => c.opened?.then((o) => o.mailbox.close()).catch(() => undefined)));
  }

  forget(accountId: string): void {
    const connections = this.cache.get(accountId) ?? [];
    this.cache.delete(accountId);
    for (const c of connections) void c.opened?.then((o) => o.mailbox.close()).catch(() => undefined);
  }

  private async markNeedsReauth(accountId: string, reason: string): Promise<void> {
    this.forget(accountId);
    await markImapNeedsReauth(this.prisma, accountId, reason);
  }

  private leastBusy(accountId: string): Connection {
    let connections = this.cache.get(accountId);
    if (!connections) {
      connections = Array.from({ length: this.connections }, () => ({ opened: undefined, busy: 0 }));
      this.cache.set(accountId, connections);
    }
    return connections.reduce((least, c) => (c.busy < least.busy ? c : least));
  }

  private opened(accountId: string, connection: Connection): Promise<OpenedImap> {
    if (!connection.opened) {
      const opened = this.open(accountId);
      opened.catch(() => {
        if (connection.opened === opened) connection.opened = undefined;
      });
      connection.opened = opened;
    }
    return connection.opened;
  }

  private async open(accountId: string): Promise<OpenedImap> {
    const account = await this.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    if (account.status !== 'active' || !account.encryptedTokens || !account.mailServers) {
      throw new AccountNotConnectedError(accountId, account.encryptedTokens ? account.status : 'not connected');
    }
    const servers = imapServersSchema.parse(account.mailServers);
    const secret = imapSecretSchema.parse(this.vault.openJson(account.encryptedTokens));
    const gate = this.options.gateFor?.(accountId);
    const memory = this.options.labelMemory === 'process' ? {} : { memory: postgresLabelMemory(prismaExecutor(this.prisma), accountId) };
    const oauth = { key: accountId, ...(this.options.tokens ? { cache: this.options.tokens } : {}), deps: { ...this.options.oauth, ...rotatingTokenAccess(this.prisma, this.vault, accountId, secret) } };
    const mailbox = await ImapMailbox.open({ ...imapMailboxSettings(account.email, servers, secret, oauth), ...(gate ? { gate } : {}), ...memory }, this.connect);
    return { email: account.email, mailbox };
  }
}

/**
 * A login the server or the token endpoint refused for good (a wrong password, a revoked grant): the
 * account turns needs_reauth (its sync and threads wait for `accounts connect` again) and the
 * sentence is logged once, by whoever saw it first (an activity, the IDLE watch).
 */
export async function markImapNeedsReauth(prisma: PrismaClient, accountId: string, reason: string): Promise<void> {
  const { count } = await prisma.account.updateMany({ where: { id: accountId, status: 'active' }, data: { status: 'needs_reauth' } });
  if (count > 0) log.warn(`account ${accountId} needs to be reconnected: ${reason}`);
}

/**
 * The mailbox settings of an account: its servers and its secret. An OAuth account's credentials
 * carry no token: every connection takes one from `accessToken` (keyed by `oauth.key`, default the address).
 */
export function imapMailboxSettings(
  address: string,
  servers: ImapServers,
  secret: ImapSecret,
  oauth: ImapOAuthAccess = { key: address },
): { address: string; imap: { server: MailServerAddress; credentials: MailCredentials }; smtp: { server: MailServerAddress; credentials: MailCredentials }; accessToken?: AccessTokenSource } {
  if ('oauth' in secret) {
    const grant = { ...secret.oauth };
    const accessToken = (oauth.cache ?? processAccessTokens).source(oauth.key, grant, { protocol: 'imap', user: servers.imap.user }, oauth.deps);
    return {
      address,
      imap: { server: servers.imap.server, credentials: { user: servers.imap.user, accessToken: '' } },
      smtp: { server: servers.smtp.server, credentials: { user: servers.smtp.user, accessToken: '' } },
      accessToken,
    };
  }
  return {
    address,
    imap: { server: servers.imap.server, credentials: { user: servers.imap.user, password: secret.password } },
    smtp: { server: servers.smtp.server, credentials: { user: servers.smtp.user, password: secret.smtpPassword ?? secret.password } },
  };
}

/**
 * A rotating provider's refresh token kept in the account's row: a new one the provider answers is
 * stored sealed, and a refused one is read again from the row (another process may have rotated it).
 */
export function rotatingTokenAccess(prisma: PrismaClient, vault: TokenVault, accountId: string, secret: ImapSecret): Pick<OAuthTokenDeps, 'onRotated' | 'storedRefreshToken'> {
  return {
    onRotated: async (refreshToken) => {
      if (!('oauth' in secret)) return;
      secret.oauth.refreshToken = refreshToken;
      await prisma.account.update({ where: { id: accountId }, data: { encryptedTokens: vault.sealJson(secret) } });
      log.info(`account ${accountId}: the provider rotated its refresh token; the new one is stored`);
    },
    storedRefreshToken: async () => {
      const row = await prisma.account.findUnique({ where: { id: accountId }, select: { encryptedTokens: true } });
      if (!row?.encryptedTokens) return undefined;
      const stored = imapSecretSchema.safeParse(vault.openJson(row.encryptedTokens));
      return stored.success && 'oauth' in stored.data ? stored.data.oauth.refreshToken : undefined;
    },
  };
}
