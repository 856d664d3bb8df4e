// SMTP submission through nodemailer: the transport for an account (TLS required either way, a
// password or an OAuth access token), and the connect-time check (EHLO, TLS, AUTH) with the same
// one-sentence failures as IMAP.
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { MailCredentials, MailServerAddress } from './contracts.js';
import { DEFAULT_MAIL_TIMEOUT_MS, failureContext, tlsOptions, type MailConnectDeps } from './connect.js';
import { smtpFailure } from './errors.js';

export type SmtpTransport = Transporter<SMTPTransport.SentMessageInfo, SMTPTransport.Options>;

export function smtpTransportOptions(
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
): SMTPTransport.Options {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_MAIL_TIMEOUT_MS;
  return {
    host: server.host,
    port: server.port,
    secure: server.tls === 'implicit',
    // STARTTLS or nothing: the password never crosses the wire in the clear.
    requireTLS: server.tls === 'starttls',
    ...(server.servername ? { servername: server.servername } : {}),
    tls: tlsOptions(server),
    auth:
      'accessToken' in credentials
        ? { type: 'OAuth2', user: credentials.user, accessToken: credentials.accessToken }
        : { user: credentials.user, pass: credentials.password },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: 2 * timeoutMs,
    logger: false,
  };
}

/** A transport for sending as the account. sendMail() failures go through smtpSendFailure(). */
export function createSmtpTransport(
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
): SmtpTransport {
  return createTransport(smtpTransportOptions(server, credentials, deps));
}

/** `accounts connect --imap`'s SMTP check: connects, upgrades to TLS, logs in. Throws a MailServerError. */
export async function checkSmtpSubmission(
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
): Promise<void> {
  const transport = createSmtpTransport(server, credentials, deps);
  try {
    await transport.verify();
  } catch (err) {
    throw smtpFailure(err, failureContext('smtp', server, credentials, deps));
  } finally {
    transport.close();
  }
}

/** A sendMail() failure of the account's transport, as a MailServerError. */
export function smtpSendFailure(
  err: unknown,
  server: MailServerAddress,
  credentials: MailCredentials,
  deps: MailConnectDeps = {},
) {
  return smtpFailure(err, failureContext('smtp', server, credentials, deps));
}
