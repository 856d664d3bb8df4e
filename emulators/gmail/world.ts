// The emulated world behind the HTTP surfaces: accounts and their mailboxes, mail moving
// between them, and the shared services (OAuth, quotas, faults, push, metrics, clock).
// Both the Gmail API handlers and the control API act through this.
import { badRequest, notFound } from './errors.js';
import { FaultInjector, NO_FAULTS, type FaultConfig } from './faults.js';
import { IdSource } from './ids.js';
import { importEml, importMbox, type ImportResult } from './import.js';
import { SigningKey } from './keys.js';
import { Mailbox, normalizeSubject, type MailboxSnapshot } from './mailbox.js';
import type { StoredMessage } from './message.js';
import { Metrics } from './metrics.js';
import { buildMessage, completeOutgoing, extractEmails, fromBase64Url, headerValue, parseTopHeaders, type Address, type Attachment } from './mime.js';
import { DEFAULT_CLIENT, FULL_SCOPE, OAuthServer, type OAuthClientRegistration, type OAuthSnapshot } from './oauth.js';
import { DEFAULT_PUSH, PushService, type PushConfig, type Watch } from './push.js';
import { QuotaLedger, type QuotaConfig } from './quota.js';
import { Random } from './random.js';
import { generateMailbox, type SeedOptions } from './seed.js';
import { Clock } from './clock.js';

export interface WorldOptions {
  seed: number;
  quota: Partial<QuotaConfig>;
  faults: Partial<FaultConfig>;
  push: Partial<PushConfig>;
  historyRetentionMs: number;
  accessTokenTtlSeconds: number;
  clients: OAuthClientRegistration[];
  /** Consent for an unknown login_hint creates that account (true) or is denied (false). */
  createAccountsOnConsent: boolean;
}

export interface Account {
  email: string;
  name: string;
  mailbox: Mailbox;
}

/** The world as plain data: what the emulator's state file holds (faults, quotas and metrics are not kept). */
export interface WorldSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  clockOffsetMs: number;
  ids: ReturnType<IdSource['snapshot']>;
  random: number;
  accounts: Array<{ email: string; name: string; mailbox: MailboxSnapshot }>;
  oauth: OAuthSnapshot;
  watches: Record<string, Watch>;
}

const SNAPSHOT_FORMAT = 1;

export interface CreatedAccount {
  email: string;
  name: string;
  refreshToken: string;
  clientId: string;
  clientSecret: string;
  historyId: string;
}

/** An incoming message described by fields (the control API's "deliver"). */
export interface IncomingMessage {
  from: Address | string;
  to?: Array<Address | string>;
  cc?: Array<Address | string>;
  subject?: string;
  text?: string;
  html?: string;
  headers?: Record<string, string>;
  attachments?: Array<{ filename: string; contentType: string; contentBase64: string }>;
  /** Reply into this thread of the recipient's mailbox (In-Reply-To/References are set). */
  threadId?: string;
  /** Label ids or names to add besides the defaults (INBOX, UNREAD, a category). */
  labelIds?: string[];
  /** Replaces the defaults entirely. */
  exactLabelIds?: string[];
  unread?: boolean;
  internalDate?: number;
  /** A complete RFC 2822 message (base64url) instead of the fields above. */
  raw?: string;
}

/** Gmail's inbox category guess for an incoming message. */
function categorize(headers: Record<string, string>, from: string): string {
  const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  if (has('list-unsubscribe') || /bulk|list/i.test(headers.Precedence ?? headers.precedence ?? '')) return 'CATEGORY_PROMOTIONS';
  if (has('auto-submitted') || /no-?reply|notifications?@/i.test(from)) return 'CATEGORY_UPDATES';
  return 'CATEGORY_PERSONAL';
}

export class GmailWorld {
  readonly clock = new Clock();
  readonly keys = new SigningKey();
  readonly metrics = new Metrics();
  readonly oauth: OAuthServer;
  readonly quota: QuotaLedger;
  readonly faults: FaultInjector;
  readonly push: PushService;
  private ids: IdSource;
  private random: Random;
  private readonly accounts = new Map<string, Account>();

  constructor(readonly options: WorldOptions) {
    const now = () => this.clock.now();
    this.ids = new IdSource(options.seed);
    this.random = new Random(options.seed);
    this.oauth = new OAuthServer(now, this.keys, options.accessTokenTtlSeconds, options.clients.length > 0 ? options.clients : [DEFAULT_CLIENT]);
    this.quota = new QuotaLedger(options.quota, now);
    this.faults = new FaultInjector({ seed: options.seed, ...options.faults });
    this.push = new PushService({ seed: options.seed, ...options.push }, this.keys, now, (email) => this.accounts.get(email)?.mailbox.historyId);
  }

  get defaultClient(): OAuthClientRegistration {
    return this.options.clients[0] ?? DEFAULT_CLIENT;
  }

  // ------------------------------------------------------------ accounts

  listAccounts(): Account[] {
    return [...this.accounts.values()];
  }

  findAccount(email: string): Account | undefined {
    return this.accounts.get(email.toLowerCase());
  }

  getAccount(email: string): Account {
    const account = this.findAccount(email);
    if (!account) throw notFound(`No such account: ${email}`);
    return account;
  }

  private ensureAccount(email: string, name?: string): Account {
    const key = email.toLowerCase();
    const existing = this.accounts.get(key);
    if (existing) return existing;
    const mailbox = new Mailbox(key, { ids: this.ids, now: () => this.clock.now(), historyRetentionMs: this.options.historyRetentionMs }, this.random.int(100_000, 9_000_000));
    mailbox.onChange = (record) => this.push.onChange(key, record);
    const account: Account = { email: key, name: name ?? key.split('@')[0] ?? key, mailbox };
    this.accounts.set(key, account);
    return account;
  }

  /** Creates (or finds) an account and grants the client offline access to it. */
  createAccount(input: { email: string; name?: string; clientId?: string; scopes?: string[] }): CreatedAccount {
    if (!/^[^@\s]+@[^@\s]+$/.test(input.email)) throw badRequest(`Invalid email address: ${input.email}`);
    const account = this.ensureAccount(input.email, input.name);
    const client = input.clientId ? this.oauth.getClient(input.clientId) : this.defaultClient;
    if (!client) throw badRequest(`Unknown OAuth client: ${input.clientId}`);
    const refreshToken = this.oauth.issueRefreshToken(account.email, client.clientId, input.scopes ?? [FULL_SCOPE]);
    return {
      email: account.email,
      name: account.name,
      refreshToken,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      historyId: String(account.mailbox.historyId),
    };
  }

  /** Which account a consent screen signs in: the login_hint, else the first account. */
  consentAccount(loginHint: string | undefined): string | undefined {
    if (loginHint) {
      if (this.findAccount(loginHint)) return loginHint.toLowerCase();
      return this.options.createAccountsOnConsent ? this.ensureAccount(loginHint).email : undefined;
    }
    return this.listAccounts()[0]?.email;
  }

  // ------------------------------------------------------------ mail flow

  private newRfc822Id(fromEmail: string): string {
    const domain = fromEmail.split('@')[1] ?? 'mail.gmail.com';
    return `<${this.random.hex(24)}@${domain}>`;
  }

  /** Delivers a message into an account's inbox as if it came from the outside world. */
  deliver(email: string, incoming: IncomingMessage): StoredMessage {
    const account = this.getAccount(email);
    const mailbox = account.mailbox;
    const internalDate = incoming.internalDate ?? this.clock.now();
    let raw: Buffer;
    let headersForCategory: Record<string, string>;
    let fromText: string;
    let threadId = incoming.threadId;
    if (incoming.raw) {
      raw = this.withMessageId(fromBase64Url(incoming.raw));
      const top = parseTopHeaders(raw);
      headersForCategory = Object.fromEntries(top.map((h) => [h.name, h.value]));
      fromText = headerValue(top, 'from') ?? '';
    } else {
      const fromEmail = typeof incoming.from === 'string' ? (extractEmails(incoming.from)[0] ?? incoming.from) : incoming.from.email;
      let subject = incoming.subject ?? '(no subject)';
      let inReplyTo: string | undefined;
      let references: string[] | undefined;
      if (threadId) {
        const thread = mailbox.getThread(threadId);
        const last = thread[thread.length - 1] as StoredMessage;
        inReplyTo = last.rfc822MessageId || undefined;
        references = thread.map((m) => m.rfc822MessageId).filter(Boolean);
        if (incoming.subject === undefined) subject = `Re: ${(thread[0] as StoredMessage).subject.replace(/^(\s*re\s*:\s*)+/i, '')}`;
        else if (normalizeSubject(incoming.subject) !== normalizeSubject((thread[0] as StoredMessage).subject)) threadId = undefined;
      }
      const attachments: Attachment[] = (incoming.attachments ?? []).map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(a.contentBase64, 'base64') }));
      raw = buildMessage({
        from: incoming.from,
        to: incoming.to ?? [{ name: account.name, email: account.email }],
        ...(incoming.cc ? { cc: incoming.cc } : {}),
        subject,
        date: internalDate,
        messageId: this.newRfc822Id(fromEmail),
        ...(inReplyTo ? { inReplyTo } : {}),
        ...(references ? { references } : {}),
        ...(incoming.headers ? { headers: incoming.headers } : {}),
        ...(incoming.text !== undefined ? { text: incoming.text } : {}),
        ...(incoming.html !== undefined ? { html: incoming.html } : {}),
        attachments,
      });
      headersForCategory = incoming.headers ?? {};
      fromText = typeof incoming.from === 'string' ? incoming.from : incoming.from.email;
    }
    const labelIds = incoming.exactLabelIds
      ? this.resolveLabels(mailbox, incoming.exactLabelIds, true)
      : [
          'INBOX',
          ...(incoming.unread === false ? [] : ['UNREAD']),
          categorize(headersForCategory, fromText),
          ...this.resolveLabels(mailbox, incoming.labelIds ?? [], true),
        ];
    return mailbox.insert(raw, { labelIds, internalDate, threading: threadId ? 'exact' : 'incoming', ...(threadId ? { threadId } : {}) });
  }

  /**
   * Mail that reaches Gmail's MX without a Message-ID was given one (`…SMTPIN_ADDED_MISSING@mx.google.com`)
   * before Gmail began refusing such mail (550 5.7.1 "Messages missing a valid Message-ID header are not
   * accepted"); the emulator delivers it as Gmail did, so the mail can still be tested.
   */
  private withMessageId(raw: Buffer): Buffer {
    if (headerValue(parseTopHeaders(raw), 'message-id')?.trim()) return raw;
    const id = `<${this.random.hex(8)}.${this.random.hex(8)}.${this.random.hex(4)}.${this.random.hex(4)}SMTPIN_ADDED_MISSING@mx.google.com>`;
    return Buffer.concat([Buffer.from(`Message-ID: ${id}\r\n`, 'latin1'), raw]);
  }

  /** Label ids for ids or names; unknown names become new user labels when `create` is set. */
  resolveLabels(mailbox: Mailbox, idsOrNames: readonly string[], create: boolean): string[] {
    return idsOrNames.map((idOrName) => {
      const found = mailbox.labels.resolve(idOrName);
      if (found) return found.id;
      if (!create) throw badRequest(`Invalid label: ${idOrName}`);
      return mailbox.labels.create({ name: idOrName }).id;
    });
  }

  private completeRaw(account: Account, raw: Buffer): Buffer {
    return completeOutgoing(raw, {
      from: account.name && account.name !== account.email ? `${account.name} <${account.email}>` : account.email,
      date: this.clock.now(),
      messageId: this.newRfc822Id(account.email),
    });
  }

  /** Recipient addresses of an outgoing message; Gmail refuses a message with none. */
  private recipients(raw: Buffer): string[] {
    const headers = parseTopHeaders(raw);
    const all = ['to', 'cc', 'bcc'].flatMap((name) => extractEmails(headers.filter((h) => h.name.toLowerCase() === name).map((h) => h.value).join(', ')));
    if (all.length === 0) throw badRequest('Recipient address required', 'invalidArgument');
    return [...new Set(all)];
  }

  /** Copies of a sent message go to recipients that are mailboxes of this emulator. */
  private deliverLocally(sender: Account, raw: Buffer, recipients: string[]): void {
    for (const email of recipients) {
      const target = this.findAccount(email);
      if (!target || target === sender) continue;
      target.mailbox.insert(raw, { labelIds: ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'], threading: 'incoming' });
    }
  }

  /** messages.send: a SENT message (joining `threadId` only as Gmail allows). */
  send(account: Account, raw: Buffer, threadId: string | undefined): StoredMessage {
    const recipients = this.recipients(raw);
    const complete = this.completeRaw(account, raw);
    const toSelf = recipients.includes(account.email);
    const msg = account.mailbox.insert(complete, { labelIds: toSelf ? ['SENT', 'INBOX', 'UNREAD'] : ['SENT'], threading: 'api', threadId });
    this.deliverLocally(account, complete, recipients);
    return msg;
  }

  /** drafts.send (API) and "Send" in the Gmail UI: the draft is replaced by a new SENT message. */
  sendDraft(account: Account, draftId: string): StoredMessage {
    const draft = account.mailbox.getDraft(draftId);
    const recipients = this.recipients(account.mailbox.getMessage(draft.messageId).raw);
    const sent = account.mailbox.sendDraft(draftId, (raw) => this.completeRaw(account, raw));
    this.deliverLocally(account, sent.raw, recipients);
    return sent;
  }

  // ------------------------------------------------------------ bulk data

  seed(email: string, opts: Omit<SeedOptions, 'owner' | 'endDate'> & { endDate?: number }): { inserted: number; historyId: string } {
    const account = this.getAccount(email);
    const mailbox = account.mailbox;
    let inserted = 0;
    for (const item of generateMailbox({ ...opts, endDate: opts.endDate ?? this.clock.now(), owner: { email: account.email, name: account.name } })) {
      const labelIds = item.labelIds.map((l) => (l.startsWith('user:') ? this.resolveLabels(mailbox, [l.slice(5)], true)[0] as string : l));
      mailbox.insert(item.raw, { labelIds, internalDate: item.internalDate, threading: 'incoming', recordHistory: false });
      inserted++;
    }
    mailbox.expireHistory(); // seeded mail predates the retained history
    return { inserted, historyId: String(mailbox.historyId) };
  }

  importMessages(email: string, input: { format: 'eml' | 'mbox'; data: Buffer; labelIds?: string[] }): ImportResult {
    const account = this.getAccount(email);
    const defaults = this.resolveLabels(account.mailbox, input.labelIds ?? ['INBOX'], true);
    const result = input.format === 'eml' ? importEml(input.data) : importMbox(input.data);
    for (const item of result.messages) {
      const labelIds = item.labelNames ? this.resolveLabels(account.mailbox, item.labelNames, true) : defaults;
      account.mailbox.insert(item.raw, { labelIds, internalDate: item.internalDate ?? this.clock.now(), threading: 'incoming', recordHistory: false });
    }
    account.mailbox.expireHistory();
    return result;
  }

  // ------------------------------------------------------------ lifecycle

  snapshot(): WorldSnapshot {
    return {
      format: SNAPSHOT_FORMAT,
      clockOffsetMs: this.clock.offset,
      ids: this.ids.snapshot(),
      random: this.random.position,
      accounts: this.listAccounts().map((a) => ({ email: a.email, name: a.name, mailbox: a.mailbox.snapshot() })),
      oauth: this.oauth.snapshot(),
      watches: this.push.watches(),
    };
  }

  /** Replaces the world's accounts, mailboxes, grants and watches with a snapshot's; throws on one it cannot read. */
  restore(snapshot: WorldSnapshot): void {
    if (snapshot?.format !== SNAPSHOT_FORMAT) throw new Error(`unknown snapshot format ${String(snapshot?.format)} (expected ${SNAPSHOT_FORMAT})`);
    this.reset();
    try {
      this.clock.offset = snapshot.clockOffsetMs;
      for (const saved of snapshot.accounts) this.ensureAccount(saved.email, saved.name).mailbox.restore(saved.mailbox);
      this.oauth.restore(snapshot.oauth);
      this.push.restoreWatches(snapshot.watches);
      this.ids.restore(snapshot.ids);
      this.random.position = snapshot.random;
    } catch (err) {
      this.reset();
      throw err;
    }
  }

  reset(): void {
    this.accounts.clear();
    this.ids = new IdSource(this.options.seed);
    this.random = new Random(this.options.seed);
    this.oauth.reset();
    this.quota.reset(this.options.quota);
    this.faults.reset();
    this.faults.configure({ ...NO_FAULTS, seed: this.options.seed, ...this.options.faults });
    this.push.reset();
    this.push.configure({ ...DEFAULT_PUSH, seed: this.options.seed, ...this.options.push });
    this.metrics.reset();
    this.clock.reset();
  }

  close(): void {
    this.push.close();
  }
}
