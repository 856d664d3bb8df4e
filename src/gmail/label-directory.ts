// Label ids by name, per account, read once and created in Gmail when missing: label changes name
// labels, Gmail's calls take ids, and listing them on every change would cost a call each time.
import { GmailBadRequestError } from './errors.js';
import type { Mailbox } from '../mail/mailbox.js';

/** Label ids by name, per account; created in Gmail when missing. */
export class LabelDirectory {
  private readonly byAccount = new Map<string, Promise<Map<string, string>>>();

  async ids(accountId: string, gmail: Mailbox, names: string[]): Promise<Map<string, string>> {
    let known = this.byAccount.get(accountId);
    const cached = known ? await known.catch(() => undefined) : undefined;
    if (cached && names.every((n) => cached.has(n))) return cached;
    known = gmail.ensureLabels([...new Set([...(cached?.keys() ?? []), ...names])]);
    this.byAccount.set(accountId, known);
    known.catch(() => this.byAccount.delete(accountId));
    return known;
  }

  /**
   * Runs `use` with the names' ids. A label deleted in Gmail since it was read makes Gmail answer 400:
   * the account's labels are read again (the missing one created) and `use` runs once more.
   */
  async withIds<T>(accountId: string, gmail: Mailbox, names: string[], use: (ids: Map<string, string>) => Promise<T>): Promise<T> {
    try {
      return await use(await this.ids(accountId, gmail, names));
    } catch (err) {
      if (!(err instanceof GmailBadRequestError)) throw err;
      this.byAccount.delete(accountId);
      return use(await this.ids(accountId, gmail, names));
    }
  }
}
