// Which mailbox serves an account: the Gmail API or IMAP and SMTP (accounts.provider). Activities
// call the account's Mailbox through this and never ask which provider it is.
import type { PrismaClient } from '../db/client.js';
import type { Mailbox } from '../mail/mailbox.js';
import { GmailAccounts, type GmailOAuthSettings } from './gmail-accounts.js';
import { ImapAccounts } from './imap-accounts.js';
import type { TokenVault } from './token-vault.js';

/** One call on an account's mailbox, with the account's address. */
export interface MailboxAccess {
  call<T>(accountId: string, fn: (mailbox: Mailbox, email: string) => Promise<T>): Promise<T>;
}

export class MailboxAccounts implements MailboxAccess {
  /** A provider never changes for an account (a new provider is a new account), so it is read once. */
  private readonly providers = new Map<string, Promise<'gmail' | 'imap'>>();

  constructor(
    private readonly prisma: PrismaClient,
    readonly gmail: GmailAccounts,
    readonly imap: ImapAccounts,
  ) {}

  async call<T>(accountId: string, fn: (mailbox: Mailbox, email: string) => Promise<T>): Promise<T> {
    return (await this.providerOf(accountId)) === 'imap' ? this.imap.call(accountId, fn) : this.gmail.call(accountId, fn);
  }

  providerOf(accountId: string): Promise<'gmail' | 'imap'> {
    let provider = this.providers.get(accountId);
    if (!provider) {
      provider = this.prisma.account.findUniqueOrThrow({ where: { id: accountId }, select: { provider: true } }).then((a) => a.provider);
      provider.catch(() => this.providers.delete(accountId));
      this.providers.set(accountId, provider);
    }
    return provider;
  }

  async close(): Promise<void> {
    await this.imap.close();
  }
}

/** Both providers' access over one vault (CLI, tests); workers build theirs with metering (src/workers/mailbox-access.ts). */
export function mailboxAccounts(prisma: PrismaClient, vault: TokenVault, oauth: GmailOAuthSettings): MailboxAccounts {
  return new MailboxAccounts(prisma, new GmailAccounts(prisma, vault, oauth), new ImapAccounts(prisma, vault));
}
