// The IMAP and SMTP servers of the well-known mail providers, found from the address's domain, so
// that `accounts connect --imap` needs only the address and an app password there. The submission
// server comes from nodemailer's list of well-known services (its domains and SMTP settings); the
// IMAP server of those services from ../shared/reference/imap-cleanup-llm.md, section 2.
import wellKnown from 'nodemailer/lib/well-known';
import type { MailServerAddress, TlsMode } from './contracts.js';

interface KnownImap {
  host: string;
  /** What the user should know before connecting (one sentence), when the provider has a catch. */
  note?: string;
}

/** By nodemailer's description of the service. */
const IMAP_OF_SERVICE: Record<string, KnownImap> = {
  Gmail: { host: 'imap.gmail.com', note: 'Gmail takes an app password (2-Step Verification on) or OAuth' },
  'Outlook.com / Hotmail': {
    host: 'outlook.office365.com',
    note: 'Microsoft refuses passwords over IMAP and SMTP: connect with OAuth (--oauth-token-url, docs/imap.md)',
  },
  'iCloud Mail': { host: 'imap.mail.me.com', note: 'iCloud takes an app-specific password' },
  FastMail: { host: 'imap.fastmail.com', note: 'Fastmail takes an app password' },
  'Yahoo Mail': { host: 'imap.mail.yahoo.com', note: 'Yahoo takes an app password' },
};

export interface WellKnownServers {
  /** The provider's name as the user knows it. */
  provider: string;
  imap: Pick<MailServerAddress, 'host' | 'port' | 'tls'>;
  smtp: Pick<MailServerAddress, 'host' | 'port' | 'tls'>;
  note?: string;
}

/** The servers of the provider that hosts `address`'s domain, when it is a well-known one. */
export function wellKnownServers(address: string): WellKnownServers | undefined {
  const at = address.lastIndexOf('@');
  const domain = address
    .slice(at + 1)
    .trim()
    .toLowerCase();
  // nodemailer also looks keys up by service name ("gmail"): only a domain counts here.
  if (at < 1 || !domain.includes('.')) return undefined;
  const smtp = wellKnown(domain);
  if (!smtp || !smtp.host || !smtp.description) return undefined;
  const imap = IMAP_OF_SERVICE[smtp.description];
  if (!imap) return undefined;
  const smtpPort = Number(smtp.port ?? (smtp.secure ? 465 : 587));
  const smtpTls: TlsMode = smtp.secure ? 'implicit' : 'starttls';
  return {
    provider: smtp.description,
    imap: { host: imap.host, port: 993, tls: 'implicit' },
    smtp: { host: smtp.host, port: smtpPort, tls: smtpTls },
    ...(imap.note ? { note: imap.note } : {}),
  };
}
