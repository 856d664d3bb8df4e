// IMAP's push: for each active IMAP account, one connection IDLEs on INBOX (RFC 2177); new mail, a
// flag or keyword set by the user (Done, Rework) and an expunge there wake the account's sync
// workflow, as Gmail's Pub/Sub push does. What IDLE says is only a nudge: the sync reads the changes
// from its cursor (CONDSTORE/QRESYNC), so a nudge lost or doubled loses or doubles nothing. A
// dropped connection (a server restart, a kick, a network stall) is opened again with backoff; each
// connection nudges once when it is up, for what happened while nobody watched (the connection down,
// the worker stopped); changes in Sent and Drafts come with the poll. A login refused for good (the
// password changed, the OAuth grant revoked) turns the account needs_reauth, as an activity's would,
// and its watcher stops: a reconnect (`accounts connect`, status active) is watched again at the next refresh.
import type { ImapFlow } from 'imapflow';
import type { PrismaClient } from '../db/client.js';
import { imapMailboxSettings, imapSecretSchema, imapServersSchema, markImapNeedsReauth, rotatingTokenAccess } from '../accounts/imap-accounts.js';
import { MailServerError } from '../imap/errors.js';
import type { TokenVault } from '../accounts/token-vault.js';
import { openImapSessionOf, type MailConnectDeps } from '../imap/connect.js';
import { createLogger } from '../shared/log.js';

export interface ImapWatchDeps {
  prisma: PrismaClient;
  vault: TokenVault;
  /** Wakes the account's sync (notifySync with source 'push'). */
  notify: (accountId: string) => Promise<void>;
  connect?: MailConnectDeps;
  /** How often the set of IMAP accounts is read again (connected, disconnected, needs_reauth). */
  refreshMs?: number;
  /** Events within this window wake the sync once. */
  debounceMs?: number;
  /** Only these accounts (sharding, tests). */
  accountIds?: readonly string[];
}

export interface ImapWatch {
  /** The accounts with an IDLE connection open now. */
  watching(): string[];
  /** The accounts it keeps a watcher for (connected, or reconnecting with backoff). */
  watched(): string[];
  close(): Promise<void>;
}

const log = createLogger('imap-watch');
const MAX_BACKOFF_MS = 60_000;

export function startImapWatch(deps: ImapWatchDeps): ImapWatch {
  const watchers = new Map<string, AccountWatcher>();
  /** Accounts already warned about as unreadable (warned once, not at every refresh). */
  const unreadable = new Set<string>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  async function refresh(): Promise<void> {
    if (closed) return;
    try {
      const accounts = await deps.prisma.account.findMany({
        where: { provider: 'imap', status: 'active', ...(deps.accountIds ? { id: { in: [...deps.accountIds] } } : {}) },
        select: { id: true, email: true, mailServers: true, encryptedTokens: true },
      });
      const wanted = new Set(accounts.map((a) => a.id));
      for (const [id, watcher] of watchers) {
        if (!wanted.has(id)) {
          watchers.delete(id);
          void watcher.stop();
        }
      }
      for (const account of accounts) {
        if (watchers.has(account.id) || !account.mailServers || !account.encryptedTokens) continue;
        // One account whose servers or sealed password cannot be read (a broken row, a password
        // sealed with another key) stays unwatched, its sync polling; it keeps no other from IDLE.
        try {
          const servers = imapServersSchema.parse(account.mailServers);
          const secret = imapSecretSchema.parse(deps.vault.openJson(account.encryptedTokens));
          const settings = imapMailboxSettings(account.email, servers, secret, { key: account.id, deps: rotatingTokenAccess(deps.prisma, deps.vault, account.id, secret) });
          const watcher: AccountWatcher = new AccountWatcher(account.id, () => openImapSessionOf(settings, deps.connect ?? {}), deps, () => {
            if (watchers.get(account.id) === watcher) watchers.delete(account.id);
          });
          watchers.set(account.id, watcher);
          unreadable.delete(account.id);
        } catch (err) {
          if (!unreadable.has(account.id)) log.warn(`IMAP account ${account.id} is not watched (its sync polls): ${err instanceof Error ? err.message : String(err)}`);
          unreadable.add(account.id);
        }
      }
    } catch (err) {
      log.warn(`reading the IMAP accounts failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    // unref: the watch never keeps a worker process alive after its worker has stopped.
    if (!closed) timer = setTimeout(() => void refresh(), deps.refreshMs ?? 60_000).unref();
  }
  void refresh();

  return {
    watching: () => [...watchers].filter(([, w]) => w.connected).map(([id]) => id),
    watched: () => [...watchers.keys()],
    async close() {
      closed = true;
      clearTimeout(timer);
      await Promise.all([...watchers.values()].map((w) => w.stop()));
      watchers.clear();
    },
  };
}

/** One account's IDLE connection, kept open until stop(). */
class AccountWatcher {
  private client: ImapFlow | undefined;
  private stopped = false;
  private pending: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(
    private readonly accountId: string,
    private readonly open: () => Promise<{ client: ImapFlow; close(): Promise<void> }>,
    private readonly deps: ImapWatchDeps,
    /** Called when the watcher gives up for good (the login refused): the watch forgets it. */
    private readonly gone: () => void,
  ) {
    void this.run();
  }

  get connected(): boolean {
    return this.client?.usable ?? false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pending);
    const client = this.client;
    this.client = undefined;
    if (client?.usable) await client.logout().catch(() => client.close());
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    try {
      const session = await this.open();
      if (this.stopped) return void (await session.close());
      const client = session.client;
      this.client = client;
      this.failures = 0;
      // imapflow IDLEs on the selected folder (INBOX, selected at open) whenever no command runs.
      for (const event of ['exists', 'flags', 'expunge'] as const) client.on(event, () => this.nudge());
      client.once('close', () => {
        if (this.client === client) this.client = undefined;
        if (!this.stopped) void this.retry();
      });
      // What happened while nobody watched (the connection down, the worker stopped) reaches the sync now.
      this.nudge();
      void client.idle().catch(() => undefined);
    } catch (err) {
      if (err instanceof MailServerError && err.kind === 'bad-credentials') {
        // Refused for good: trying again would be refused again (and a server may lock the account out).
        this.stopped = true;
        await markImapNeedsReauth(this.deps.prisma, this.accountId, err.message).catch((e: unknown) =>
          log.warn(`account ${this.accountId}: marking it needs_reauth failed: ${e instanceof Error ? e.message : String(e)}`),
        );
        this.gone();
        return;
      }
      log.warn(`account ${this.accountId}: ${err instanceof Error ? err.message : String(err)}`);
      await this.retry();
    }
  }

  private async retry(): Promise<void> {
    if (this.stopped) return;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.failures++);
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
    await this.run();
  }

  private nudge(): void {
    if (this.pending || this.stopped) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.deps.notify(this.accountId).catch((err: unknown) => log.warn(`waking the sync of ${this.accountId} failed: ${err instanceof Error ? err.message : String(err)}`));
    }, this.deps.debounceMs ?? 250).unref();
  }
}
