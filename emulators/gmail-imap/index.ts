// A stand-in for Gmail's IMAP and SMTP (imap.gmail.com, smtp.gmail.com) in front of the tests' real
// Dovecot and Postfix (mail-servers, started with folders: 'gmail'). What it follows of Gmail and
// where it differs: README.md beside this file.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GMAIL_ALL_MAIL, GMAIL_ARCHIVED } from '../../mail-servers/dovecot.js';
import type { MailAccount, MailServersInfo } from '../../mail-servers/index.js';
import { startImapFront } from './imap-front.js';
import { SideSession } from './side-session.js';
import { startSmtpFront } from './smtp-front.js';

export interface GmailStandIn {
  host: '127.0.0.1';
  /** Like imap.gmail.com:993: implicit TLS, the servers' CA. */
  imapPort: number;
  /** Like smtp.gmail.com:465: implicit TLS, AUTH PLAIN/LOGIN with the account's password. */
  smtpPort: number;
  caPem: string;
  /** Every IMAP command line the clients sent, before the stand-in rewrote it (logins masked). */
  imapCommands: string[];
  close(): Promise<void>;
}

/** Starts the stand-in for `account` (a mailbox of `servers`, which must run with folders: 'gmail'). */
export async function startGmailStandIn(servers: MailServersInfo, account: MailAccount): Promise<GmailStandIn> {
  const [cert, key] = await Promise.all([readFile(join(servers.dir, 'server.pem'), 'utf8'), readFile(join(servers.dir, 'server.key'), 'utf8')]);
  const credentials = { user: account.address, password: account.password };
  const upstream = { host: servers.host, port: servers.imap.implicitTlsPort, ca: servers.caPem };
  const imap = await startImapFront({ upstream, account: credentials, allMail: GMAIL_ALL_MAIL, archived: GMAIL_ARCHIVED, cert, key });
  const side = await SideSession.open(upstream, credentials, GMAIL_ALL_MAIL);
  const relay = { host: servers.host, port: servers.smtp.submissionPort, ca: servers.caPem };
  const smtp = await startSmtpFront({ relay, account: credentials, sentFolder: '[Gmail]/Sent Mail', cert, key }, side).catch(async (err: unknown) => {
    await Promise.all([imap.close(), side.close()]);
    throw err;
  });
  return {
    host: '127.0.0.1',
    imapPort: imap.port,
    smtpPort: smtp.port,
    caPem: servers.caPem,
    imapCommands: imap.commands,
    close: async () => {
      await smtp.close();
      await side.close();
      await imap.close();
    },
  };
}
