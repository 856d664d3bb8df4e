// Opening an IMAP connection with imapflow: TLS always (implicit, or STARTTLS that must succeed),
// a password or an OAuth access token (XOAUTH2), then the capability check the product depends on.
// Every failure becomes a MailServerError with one sentence (errors.ts).
import { rootCertificates } from 'node:tls';
import { ImapFlow, type ImapFlowOptions } from 'imapflow';
import type { ImapCapabilities, MailCredentials, MailServerAddress } from './contracts.js';
import { describeCapabilities } from './capabilities.js';
import { imapFailure, MailServerError, type FailureContext } from './errors.js';
import { withAccessToken, type AccessTokenSource } from './oauth-token.js';
import type { Logger } from '../shared/log.js';

export const DEFAULT_MAIL_TIMEOUT_MS = 30_000;

export interface MailConnectDeps {
  /** Sent in IMAP ID (Gmail asks clients to identify themselves). */
  clientInfo?: { name: string; version?: string; 'support-url'?: string };
  /** Connection problems imapflow reports (warn and error only: its info and debug lines quote commands). */
  log?: Logger;
  /** Budget for DNS, TCP, TLS and the greeting (default 30 s). */
  timeoutMs?: number;
}

export interface ImapSession {
  client: ImapFlow;
  capabilities: ImapCapabilities;
  /** LOGOUT, or just closes the socket when the server is gone. */
  close(): Promise<void>;
}

/** The imapflow options for an account: TLS required either way, system CAs plus `server.ca`. */
export function imapFlowOptions(
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
): ImapFlowOptions {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_MAIL_TIMEOUT_MS;
  return {
    host: server.host,
    port: server.port,
    secure: server.tls === 'implicit',
    ...(server.tls === 'starttls' ? { doSTARTTLS: true } : {}),
    ...(server.servername ? { servername: server.servername } : {}),
    tls: tlsOptions(server),
    auth:
      'accessToken' in credentials
        ? { user: credentials.user, accessToken: credentials.accessToken }
        : { user: credentials.user, pass: credentials.password },
    ...(deps.clientInfo ? { clientInfo: deps.clientInfo } : {}),
    // QRESYNC is enabled when offered: expunges then arrive as UIDs (VANISHED).
    qresync: true,
    // RFC 2177 asks to renew IDLE within 29 minutes; some servers drop it sooner.
    maxIdleTime: 10 * 60_000,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    logger: deps.log ? imapFlowLogger(deps.log) : false,
  };
}

export function tlsOptions(server: MailServerAddress): { ca?: string[]; minVersion: 'TLSv1.2'; servername?: string } {
  const extra = server.ca === undefined ? [] : Array.isArray(server.ca) ? server.ca : [server.ca];
  // Node's `ca` replaces its bundled roots; keep them so a public server still verifies.
  return {
    minVersion: 'TLSv1.2',
    ...(extra.length > 0 ? { ca: [...rootCertificates, ...extra] } : {}),
    ...(server.servername ? { servername: server.servername } : {}),
  };
}

export function failureContext(
  protocol: 'imap' | 'smtp',
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps,
): FailureContext {
  return {
    protocol,
    host: server.host,
    port: server.port,
    tls: server.tls,
    user: credentials.user,
    oauth: 'accessToken' in credentials,
    servername: server.servername ?? server.host,
    timeoutMs: deps.timeoutMs ?? DEFAULT_MAIL_TIMEOUT_MS,
  };
}

/**
 * Connects, logs in and checks the account: CONDSTORE or not, the special-use folders found,
 * INBOX selected (for PERMANENTFLAGS and HIGHESTMODSEQ). The session stays open for the caller;
 * it must listen for 'close' and 'error' (a dropped connection is not an error thrown here).
 */
export async function openImapSession(
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
): Promise<ImapSession> {
  const ctx = failureContext('imap', server, credentials, deps);
  const client = new ImapFlow(imapFlowOptions(server, credentials, deps));
  // Without a listener an 'error' event (a socket reset while idle) would throw from the emitter.
  client.on('error', (err: Error) => deps.log?.warn(`IMAP ${server.host}:${server.port}: ${err.message}`));
  const close = async () => {
    if (client.usable) await client.logout().catch(() => client.close());
    else client.close();
  };
  try {
    await client.connect();
    const advertised = [...client.capabilities.keys()];
    const folders = await client.list();
    const inboxPath = folders.find((f) => f.specialUse === '\\Inbox')?.path ?? 'INBOX';
    // SELECT, not EXAMINE: a read-only mailbox may report no PERMANENTFLAGS at all.
    // Without CONDSTORE (or with NOMODSEQ) changes are followed by a flag scan (capabilities.condstore).
    const inbox = await client.mailboxOpen(inboxPath);
    const capabilities = describeCapabilities({ advertised, enabled: client.enabled, folders, inbox });
    return { client, capabilities, close };
  } catch (err) {
    client.close();
    throw imapFailure(err, ctx);
  }
}

/**
 * openImapSession with the account's credentials; for an OAuth account (`accessToken`) with its
 * current access token, and once more with a fresh one when the server refuses it.
 */
export async function openImapSessionOf(
  settings: { imap: { server: MailServerAddress; credentials: MailCredentials }; accessToken?: AccessTokenSource },
  deps: MailConnectDeps = {},
): Promise<ImapSession> {
  const source = settings.accessToken;
  if (!source) return openImapSession(settings.imap.server, settings.imap.credentials, deps);
  const user = settings.imap.credentials.user;
  return withAccessToken(
    source,
    (accessToken) => openImapSession(settings.imap.server, { user, accessToken }, deps),
    (err) => err instanceof MailServerError && err.kind === 'bad-credentials',
  );
}

/** `accounts connect --imap`'s check: connect, describe, log out. Throws a MailServerError. */
export async function checkImapAccount(
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
): Promise<ImapCapabilities> {
  const session = await openImapSession(server, credentials, deps);
  await session.close();
  return session.capabilities;
}

function imapFlowLogger(log: Logger): NonNullable<ImapFlowOptions['logger']> {
  const text = (entry: unknown) =>
    typeof entry === 'object' && entry !== null && 'msg' in entry
      ? String((entry as { msg: unknown }).msg)
      : String(entry);
  const ignore = () => {};
  return {
    debug: ignore,
    info: ignore,
    warn: (entry: unknown) => log.warn(`imapflow: ${text(entry)}`),
    error: (entry: unknown) => log.error(`imapflow: ${text(entry)}`),
  };
}
