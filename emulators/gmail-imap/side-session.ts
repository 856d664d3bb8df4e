// The stand-in's own session on Dovecot (as the account's user): what the front needs to answer the
// X-GM items, read fresh for each question, one question at a time.
import { ImapFlow } from 'imapflow';
import { gmailIds, headerValue, type GmailIds } from './gmail-ids.js';
import { FOLDER_LABELS, labelsOf } from './labels.js';

export interface Upstream {
  host: string;
  /** Dovecot's implicit-TLS IMAP port. */
  port: number;
  ca: string;
}

export interface Described extends GmailIds {
  labels: string[];
}

export class SideSession {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly client: ImapFlow,
    private readonly allMail: string,
  ) {}

  static async open(upstream: Upstream, account: { user: string; password: string }, allMail: string): Promise<SideSession> {
    const client = new ImapFlow({
      host: upstream.host,
      port: upstream.port,
      secure: true,
      tls: { ca: [upstream.ca] },
      auth: { user: account.user, pass: account.password },
      logger: false,
      disableAutoIdle: true,
    });
    client.on('error', () => {});
    await client.connect();
    return new SideSession(client, allMail);
  }

  /** X-GM-MSGID, X-GM-THRID and X-GM-LABELS of these UIDs of `folder` (Dovecot's name). */
  describe(folder: string, uids: number[]): Promise<Map<number, Described>> {
    return this.serial(async () => {
      const out = new Map<number, Described>();
      const found = await this.headersAndFlags(folder, uids.join(','));
      // A message seen through All Mail has the labels of the folder it really is in.
      const homes = folder === this.allMail ? await this.foldersByMessageId() : undefined;
      for (const m of found) {
        const home = homes ? homes.get(headerValue(m.headers, 'message-id') ?? '') : folder;
        out.set(m.uid, { ...gmailIds(m.headers), labels: labelsOf(home, m.flags) });
      }
      return out;
    });
  }

  /** UIDs of `folder` whose ids match. */
  uidsWhere(folder: string, match: (ids: GmailIds) => boolean): Promise<number[]> {
    return this.serial(async () => (await this.headersAndFlags(folder, '1:*')).filter((m) => match(gmailIds(m.headers))).map((m) => m.uid));
  }

  /**
   * Moves the messages these UIDs of `folder` show (by Message-ID) from the real folder `from` to the
   * real folder `to`: how \\Inbox is added (from the archive) or removed (into it) by label.
   */
  moveByMessageId(folder: string, uids: string, from: string, to: string): Promise<void> {
    return this.serial(async () => {
      const ids = (await this.headersAndFlags(folder, uids)).map((m) => headerValue(m.headers, 'message-id')).filter((id): id is string => !!id);
      await this.client.mailboxOpen(from);
      for (const id of ids) {
        const found = (await this.client.search({ header: { 'message-id': id.replace(/^<|>$/g, '') } }, { uid: true })) || [];
        if (found.length > 0) await this.client.messageMove(found.join(','), to, { uid: true });
      }
    });
  }

  append(folder: string, raw: Buffer, flags: string[]): Promise<void> {
    return this.serial(async () => {
      await this.client.append(folder, raw, flags);
    });
  }

  async close(): Promise<void> {
    await this.queue.catch(() => {});
    await this.client.logout().catch(() => this.client.close());
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  private async headersAndFlags(folder: string, range: string): Promise<Array<{ uid: number; headers: Buffer; flags: Set<string> }>> {
    // SELECT each time: a session's view of a folder it already has selected is as of its last command.
    await this.client.mailboxOpen(folder);
    if (!this.client.mailbox || this.client.mailbox.exists === 0) return [];
    const out: Array<{ uid: number; headers: Buffer; flags: Set<string> }> = [];
    const query = { uid: true, flags: true, headers: ['message-id', 'references', 'in-reply-to'] };
    for await (const m of this.client.fetch(range, query, { uid: true })) {
      out.push({ uid: m.uid, headers: m.headers ?? Buffer.alloc(0), flags: m.flags ?? new Set() });
    }
    return out;
  }

  private async foldersByMessageId(): Promise<Map<string, string>> {
    const homes = new Map<string, string>();
    for (const folder of Object.keys(FOLDER_LABELS)) {
      if (folder === '[Gmail]/Trash' || folder === '[Gmail]/Spam') continue;
      for (const m of await this.headersAndFlags(folder, '1:*')) {
        const id = headerValue(m.headers, 'message-id');
        if (id && !homes.has(id)) homes.set(id, folder);
      }
    }
    return homes;
  }
}
