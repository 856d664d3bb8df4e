// The IMAP side of the tests that run one body on both providers (core scenarios, the crash, spoofed
// senders, the SpamAssassin sample): a private Dovecot and Postfix (mail-servers), the user's account
// stored as `accounts connect --imap` stores it, the product on it (the inbox harness, or the app
// server around one), and the user's own client on the mailbox. And mail from outside as an MTA
// hands it over: raw bytes to the MX port, found in the INBOX, checked for what the MTA changed.
import type { ImapFlow } from 'imapflow';
import { imapMailboxSettings, type ImapServers } from '../../src/accounts/imap-accounts.js';
import { readMessageId } from '../../src/gmail/mime.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { messageIdOf } from '../../src/imap/mail-ids.js';
import { rawHeader, withoutHeader } from '../../src/imap/raw-headers.js';
import { outsideMta } from '../../mail-servers/deliver.js';
import { startMailServers, type MailAccount, type MailServerOptions, type MailServers } from '../../mail-servers/index.js';
import type { HarnessOptions } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { imapAddress, imapClient, submissionAddress } from './mail-test-clients.js';

/** What the inbox harness needs to serve the world's account (HarnessOptions.imap). */
export type ImapHarnessAccount = NonNullable<HarnessOptions['imap']>;

export interface ImapWorld<T> {
  servers: MailServers;
  /** The account's servers as stored: IMAP over implicit TLS, submission with STARTTLS. */
  account: ImapServers;
  /** What `start` made of the account: the inbox harness (workers started), or an app server around one. */
  product: T;
  /** The user's own client on the mailbox (not the workers'): what they see and what they do. */
  user: ImapMailbox;
  /** Closes the user's client, then the product, then stops the servers. */
  close(): Promise<void>;
}

/**
 * Starts the mail servers with these mailboxes (`user` is the product's account: give it an address
 * of the test file's own, the database is shared) and then `start(account)`. A failure part-way
 * stops what was started.
 */
export async function startImapWorld<T extends { close(): Promise<void> }>(
  mail: MailServerOptions & { user: MailAccount },
  start: (account: ImapHarnessAccount) => Promise<T>,
): Promise<ImapWorld<T>> {
  const servers = await startMailServers(mail);
  const account: ImapServers = {
    imap: { server: imapAddress(servers), user: servers.user.address },
    smtp: { server: submissionAddress(servers), user: servers.user.address },
  };
  let product: T | undefined;
  let user: ImapMailbox | undefined;
  const close = async () => {
    await user?.close();
    await product?.close();
    await servers.stop();
  };
  try {
    product = await start({ address: servers.user.address, password: servers.user.password, servers: account });
    user = await ImapMailbox.open(imapMailboxSettings(servers.user.address, account, { password: servers.user.password }));
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  return { servers, account, product, user, close };
}

/** A message from outside as it reached the user's INBOX, with the product's ids for it. */
export interface ReceivedMail {
  messageId: string;
  threadId: string;
  /** What the MTA changed on the way, beside adding its trace headers on top; [] when nothing. */
  mtaChanges: string[];
}

// Postfix drops these on the way in (its drop_headers default): a Return-Path is written at final
// delivery (RFC 5321 4.4), a Bcc never travels.
const DROPPED_BY_POSTFIX = ['return-path', 'content-length', 'bcc', 'resent-bcc'];
// What the MX (Postfix) and the final delivery (Dovecot's LMTP) put on top of a message.
const TRACE_HEADERS = new Set(['return-path', 'delivered-to', 'received']);
// RFC 5322's line limit: an MTA breaks longer lines (Postfix with CRLF SPACE, its smtp_line_length_limit).
const MAX_LINE = 998;

/**
 * Mail from outside into the user's INBOX: the raw bytes to the MX port, as another MTA hands them
 * over; the message then found in the INBOX by a plain IMAP client (one connection, INBOX selected),
 * its bytes compared with what was sent, and the product's ids read through the user's client.
 */
export class MailFromOutside {
  private constructor(
    private readonly servers: MailServers,
    private readonly user: ImapMailbox,
    private readonly inbox: ImapFlow,
    private readonly mta: ReturnType<typeof outsideMta>,
  ) {}

  static async open(world: ImapWorld<unknown>): Promise<MailFromOutside> {
    const inbox = await imapClient(world.servers, world.servers.user);
    await inbox.mailboxOpen('INBOX');
    return new MailFromOutside(world.servers, world.user, inbox, outsideMta(world.servers));
  }

  /** Rejects with RefusedByMta (Postfix's reply) when the MX refuses the message. */
  async deliver(raw: Buffer, envelopeFrom: string): Promise<ReceivedMail> {
    const messageIdHeader = readMessageId(rawHeader(raw, 'message-id'));
    // The product's id of a message with a Message-ID is 'm' + it (docs/imap.md, Message ids); the
    // corpus and the hostile mail all have one, so no other way of finding it is needed here.
    if (!messageIdHeader) throw new Error('MailFromOutside finds mail by its Message-ID, and this message has none');
    try {
      await this.mta.deliver({ envelope: { from: envelopeFrom, to: [this.servers.user.address] }, raw });
    } catch (err) {
      throw new RefusedByMta(err as Error);
    }
    const inner = messageIdHeader.replace(/^<|>$/g, '');
    const uid = await waitUntil(
      `${messageIdHeader} in the INBOX`,
      async () => {
        const uids = (await this.inbox.search({ header: { 'message-id': inner } }, { uid: true })) || [];
        return uids.length > 0 && Math.max(...uids);
      },
      { everyMs: 25 },
    );
    const arrived = await this.inbox.fetchOne(String(uid), { source: true }, { uid: true });
    if (!arrived || !arrived.source) throw new Error(`${messageIdHeader}: found in the INBOX, but its source could not be read`);
    const { threadId } = await this.user.getMessage(messageIdOf(messageIdHeader));
    return { messageId: messageIdOf(messageIdHeader), threadId, mtaChanges: mtaChanges(raw, arrived.source) };
  }

  async close(): Promise<void> {
    this.mta.close();
    await this.inbox.logout();
  }
}

/** The MX did not take the message: its decision (its reply in the message), not the product's. */
export class RefusedByMta extends Error {
  constructor(cause: Error) {
    super(`the MX refused it: ${cause.message}`, { cause });
    this.name = 'RefusedByMta';
  }
}

/** What Postfix is known to change on a message from outside (mtaChanges's words), judged from the sent bytes alone. */
export function expectedMtaChanges(sent: Buffer): string[] {
  const changes = DROPPED_BY_POSTFIX.filter((name) => rawHeader(sent, name) !== undefined).map((name) => `its ${name} header dropped`);
  if (sent.toString('latin1').split('\r\n').some((line) => line.length > MAX_LINE)) changes.push(`its lines over ${MAX_LINE} characters broken with CRLF SPACE`);
  return changes;
}

/** What an MTA changed between `sent` and `arrived`, beside its trace headers on top. */
export function mtaChanges(sent: Buffer, arrived: Buffer): string[] {
  const changes: string[] = [];
  let expected = Buffer.from(sent);
  for (const name of DROPPED_BY_POSTFIX) {
    if (rawHeader(expected, name) === undefined) continue;
    expected = Buffer.from(withoutHeader(expected, name));
    changes.push(`its ${name} header dropped`);
  }
  let added: Buffer;
  if (arrived.length >= expected.length && arrived.subarray(arrived.length - expected.length).equals(expected)) {
    added = arrived.subarray(0, arrived.length - expected.length);
  } else {
    const unfold = (b: Buffer) => b.toString('latin1').replaceAll('\r\n ', '');
    const hasLongLine = expected.toString('latin1').split('\r\n').some((l) => l.length > MAX_LINE);
    if (!(hasLongLine && unfold(arrived).endsWith(unfold(expected)))) return [...changes, firstDifference(expected, arrived)];
    changes.push(`its lines over ${MAX_LINE} characters broken with CRLF SPACE`);
    added = arrived.subarray(0, arrived.indexOf(expected.subarray(0, Math.min(expected.length, 200))));
  }
  for (const line of added.toString('latin1').split('\r\n')) {
    const name = /^([^\s:]+):/.exec(line)?.[1]?.toLowerCase();
    if (name && !TRACE_HEADERS.has(name)) changes.push(`a ${name} header added`);
  }
  return changes;
}

function firstDifference(expected: Buffer, arrived: Buffer): string {
  const start = arrived.indexOf(expected.subarray(0, Math.min(expected.length, 60)));
  if (start < 0) return 'its start is not in what arrived';
  let at = 0;
  while (at < expected.length && start + at < arrived.length && expected[at] === arrived[start + at]) at++;
  const around = (b: Buffer, from: number) => JSON.stringify(b.subarray(Math.max(0, from - 30), from + 30).toString('latin1'));
  return `changed at byte ${at}: sent ${around(expected, at)}, arrived ${around(arrived, start + at)}`;
}
