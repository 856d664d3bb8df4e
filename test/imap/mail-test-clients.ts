// IMAP and SMTP clients of the IMAP tests, on the real servers of mail-servers.
import { ImapFlow } from 'imapflow';
import type { MailAccount, MailServersInfo } from '../../mail-servers/index.js';
import type { MailServerAddress } from '../../src/imap/contracts.js';

export function imapAddress(servers: MailServersInfo, tls: 'implicit' | 'starttls' = 'implicit'): MailServerAddress {
  const port = tls === 'implicit' ? servers.imap.implicitTlsPort : servers.imap.starttlsPort;
  return { host: servers.host, port, tls, ca: servers.caPem };
}

export function submissionAddress(
  servers: MailServersInfo,
  tls: 'implicit' | 'starttls' = 'starttls',
): MailServerAddress {
  const port = tls === 'implicit' ? servers.smtp.submissionsPort : servers.smtp.submissionPort;
  return { host: servers.host, port, tls, ca: servers.caPem };
}

/** A logged-in imapflow client; 'error' events are kept (a dropped connection emits one). */
export async function imapClient(
  servers: MailServersInfo,
  account: MailAccount,
): Promise<ImapFlow & { errors: Error[] }> {
  const client = new ImapFlow({
    host: servers.host,
    port: servers.imap.implicitTlsPort,
    secure: true,
    tls: { ca: servers.caPem },
    auth: { user: account.address, pass: account.password },
    logger: false,
    qresync: true,
    disableAutoIdle: true,
  }) as ImapFlow & { errors: Error[] };
  client.errors = [];
  client.on('error', (err: Error) => client.errors.push(err));
  await client.connect();
  return client;
}

/** Resolves once the selected mailbox has at least `count` messages, from EXISTS while idling. */
export function existsAtLeast(client: ImapFlow, count: number): Promise<number> {
  const arrived = new Promise<number>((resolve, reject) => {
    const current = client.mailbox ? client.mailbox.exists : 0;
    if (current >= count) return resolve(current);
    const onExists = (event: { count: number }) => {
      if (event.count < count) return;
      cleanup();
      resolve(event.count);
    };
    const onClose = () => {
      cleanup();
      reject(new Error(`IMAP connection closed while waiting for ${count} messages`));
    };
    const cleanup = () => {
      client.off('exists', onExists);
      client.off('close', onClose);
    };
    client.on('exists', onExists);
    client.on('close', onClose);
    // IDLE makes the server push EXISTS (and reports what arrived before it began).
    client.idle().catch(() => {});
  });
  // A test that fails before awaiting it must not leave an unhandled rejection behind.
  arrived.catch(() => {});
  return arrived;
}

/** Resolves when the connection closes (the server dropped it). */
export function closed(client: ImapFlow): Promise<void> {
  return new Promise((resolve) => (client.usable ? client.once('close', () => resolve()) : resolve()));
}

/** How many messages with this subject from `from` are in `account`'s INBOX (what a correspondent received). */
export async function receivedInInbox(servers: MailServersInfo, account: MailAccount, mail: { subject: string; from: string }): Promise<number> {
  const client = await imapClient(servers, account);
  try {
    await client.mailboxOpen('INBOX');
    return ((await client.search(mail, { uid: true })) || []).length;
  } finally {
    await client.logout();
  }
}
