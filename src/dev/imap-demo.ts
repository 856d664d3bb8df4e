// `npm run dev -- --imap`: a second demo mailbox, beside the Gmail emulator's, on a real Dovecot
// and Postfix. The servers (mail-servers/, as the IMAP tests run them) listen on loopback with a CA of
// their own; the demo user's mailbox is connected as `accounts connect --imap` connects one, and a
// few demo messages arrive through the servers' MX port, as mail from the Internet would. The
// demo's senders have mailboxes too, so what the product sends them arrives. The servers and their
// mail live for one run (a temporary directory); the account row stays, and the next run's servers
// are a new mailbox, which the sync reads from the start (a new UIDVALIDITY).
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PrismaClient } from '../db/client.js';
import type { TokenVault } from '../accounts/token-vault.js';
import type { ImapServers } from '../accounts/imap-accounts.js';
import { registerImapAccount } from '../sync/connect.js';
import { notifySync, type SyncTarget } from '../sync/notify.js';
import { ImapMailbox } from '../imap/imap-mailbox.js';
import { imapMailboxSettings } from '../accounts/imap-accounts.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { CORRESPONDENT, startMailServers, type MailServers } from '../../mail-servers/index.js';
import { DEMO_AGENT_SENDER, DEMO_AUTO_REPLY_SENDER, ensureDemoRules } from './demo.js';

/** Not the Gmail demo's address: one address is one account, on one provider. */
export const IMAP_DEMO_EMAIL = 'demo-imap@durable-inbox.test';
const DEMO_PASSWORD = 'demo-app-password';

export interface ImapDemo {
  servers: MailServers;
  email: string;
  accountId: string;
  /** What the banner says: where the mailbox is and how to open it in a mail client. */
  lines: string[];
  close(): Promise<void>;
}

export interface ImapDemoDeps {
  prisma: PrismaClient;
  vault: TokenVault;
  sync: SyncTarget;
  dataDir: string;
  log?: (line: string) => void;
}

const DEMO_MAIL: { from: string; subject: string; text: string }[] = [
  {
    from: `Alice Martin <${DEMO_AUTO_REPLY_SENDER}>`,
    subject: 'Can we move our call to Thursday?',
    text: 'Hi,\n\nWould Thursday at 15:00 work instead of Wednesday for our weekly call?\n\nThanks,\nAlice',
  },
  {
    from: `Bob Okafor <${DEMO_AGENT_SENDER}>`,
    subject: 'Re-scheduling our meeting',
    text: 'Hello,\n\nSomething came up on Tuesday. Could we meet on Wednesday morning instead?\n\nBob',
  },
  {
    from: `Chloé Dupont <${CORRESPONDENT.address}>`,
    subject: 'Quarterly numbers',
    text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Chloé',
  },
];

export async function startImapDemo(deps: ImapDemoDeps): Promise<ImapDemo> {
  await ensureDemoRules(deps.prisma);
  const servers = await startMailServers({
    user: { address: IMAP_DEMO_EMAIL, password: DEMO_PASSWORD },
    others: [
      { address: DEMO_AUTO_REPLY_SENDER, password: randomUUID() },
      { address: DEMO_AGENT_SENDER, password: randomUUID() },
    ],
    ...(deps.log ? { log: deps.log } : {}),
  });
  try {
    const caFile = join(deps.dataDir, 'imap-demo-ca.pem');
    await writeFile(caFile, servers.caPem);
    const address = { host: servers.host, ca: servers.caPem };
    const account: ImapServers = {
      imap: { server: { ...address, port: servers.imap.implicitTlsPort, tls: 'implicit' }, user: IMAP_DEMO_EMAIL },
      smtp: { server: { ...address, port: servers.smtp.submissionPort, tls: 'starttls' }, user: IMAP_DEMO_EMAIL },
    };
    const registered = await registerImapAccount(deps, { address: IMAP_DEMO_EMAIL, servers: account, secret: { password: DEMO_PASSWORD } });
    for (const mail of DEMO_MAIL) {
      await deliverFromOutside(servers, { ...mail, to: IMAP_DEMO_EMAIL, messageId: `<${randomUUID()}@demo.durable-inbox.test>` });
    }
    // Once the mail is in the INBOX (LMTP follows the SMTP answer), the sync is told, as the poll
    // would tell it: the IDLE watch takes up a new account within a minute, which a demo should not wait for.
    const mailbox = await ImapMailbox.open(imapMailboxSettings(IMAP_DEMO_EMAIL, account, { password: DEMO_PASSWORD }));
    try {
      for (let tries = 0; tries < 100; tries++) {
        if ((await mailbox.searchMessages({ in: 'INBOX', since: new Date(0) })).messages.length >= DEMO_MAIL.length) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await mailbox.close();
    }
    await notifySync(deps.sync, registered.id, { source: 'poll' });
    return {
      servers,
      email: IMAP_DEMO_EMAIL,
      accountId: registered.id,
      lines: [
        `  IMAP demo mailbox: ${IMAP_DEMO_EMAIL} / ${DEMO_PASSWORD} on Dovecot ${servers.versions.dovecot} and Postfix ${servers.versions.postfix}`,
        `    IMAP ${servers.host}:${servers.imap.implicitTlsPort} (TLS), SMTP ${servers.host}:${servers.smtp.submissionPort} (STARTTLS); CA: ${caFile}`,
        `    mail to it from outside: SMTP ${servers.host}:${servers.smtp.mxPort}, no login (its mail lives for this run)`,
      ],
      close: () => servers.stop(),
    };
  } catch (err) {
    await servers.stop();
    throw err;
  }
}
