// Connection failures of imapflow and nodemailer, each turned into one sentence a person can act on
// (the CLI prints it and exits non-zero). Server texts are not part of the sentence: they are kept,
// made display-safe and cut short, in `serverText` for logs.
import type { MailProtocol, MailServerFailureKind, TlsMode, TlsRefusal } from './contracts.js';
import { displaySafe } from '../shared/display-text.js';

export interface MailServerErrorFields {
  kind: MailServerFailureKind;
  protocol: MailProtocol;
  host: string;
  port: number;
  /** For 'tls-untrusted'. */
  tlsRefusal?: TlsRefusal;
  /** For 'missing-extension', e.g. 'STARTTLS'. */
  extension?: string;
  /** The library's error code (Node's, imapflow's or nodemailer's). */
  code?: string;
  /** What the server said, display-safe and at most 200 characters. */
  serverText?: string;
}

export class MailServerError extends Error {
  override readonly name = 'MailServerError';
  readonly kind: MailServerFailureKind;
  readonly protocol: MailProtocol;
  readonly host: string;
  readonly port: number;
  readonly tlsRefusal?: TlsRefusal;
  readonly extension?: string;
  readonly code?: string;
  readonly serverText?: string;

  constructor(message: string, fields: MailServerErrorFields) {
    super(message);
    this.kind = fields.kind;
    this.protocol = fields.protocol;
    this.host = fields.host;
    this.port = fields.port;
    this.tlsRefusal = fields.tlsRefusal;
    this.extension = fields.extension;
    this.code = fields.code;
    this.serverText = fields.serverText;
  }

  /** Trying again later can help (the server was away), unlike a wrong password or a missing extension. */
  get retryable(): boolean {
    return this.kind === 'unreachable' || this.kind === 'timeout';
  }
}

export interface FailureContext {
  protocol: MailProtocol;
  host: string;
  port: number;
  tls: TlsMode;
  user: string;
  /** XOAUTH2 rather than a password. */
  oauth: boolean;
  /** The certificate name checked (servername, else host). */
  servername: string;
  timeoutMs: number;
}

/** Why the product needs each extension it may refuse a server for. */
const NEEDED_FOR: Record<string, string> = {
  STARTTLS: 'to encrypt the connection before the password is sent (or use the implicit-TLS port)',
  'AUTH=XOAUTH2': 'to log in with an OAuth access token (connect with an app password instead)',
};

export function missingExtension(ctx: FailureContext, extension: string, serverText?: string): MailServerError {
  const why = NEEDED_FOR[extension] ?? 'to work with this account';
  return new MailServerError(
    `The ${label(ctx)} server ${where(ctx)} does not support ${extension}, which durable-inbox needs ${why}.`,
    { kind: 'missing-extension', extension, ...fields(ctx), ...(serverText ? { serverText: clip(serverText) } : {}) },
  );
}

/** An imapflow error (from connect, login, or a command) as a MailServerError. */
export function imapFailure(err: unknown, ctx: FailureContext): MailServerError {
  if (err instanceof MailServerError) return err;
  const e = (err ?? {}) as ImapFlowErrorLike;
  const serverText = e.responseText ? clip(e.responseText) : undefined;
  if (e.authenticationFailed || e.serverResponseCode === 'AUTHENTICATIONFAILED') {
    return badCredentials(ctx, e.serverResponseCode, serverText);
  }
  if (e.message === 'Unsupported authentication mechanism')
    return missingExtension(ctx, ctx.oauth ? 'AUTH=XOAUTH2' : 'AUTH=PLAIN');
  if (/does not support STARTTLS/i.test(e.message ?? '')) return missingExtension(ctx, 'STARTTLS');
  if (e.code === 'GREETING_TIMEOUT' && ctx.tls === 'starttls') {
    return new MailServerError(
      `The IMAP server ${where(ctx)} sent no greeting within ${seconds(ctx.timeoutMs)}: if this port expects TLS from the first byte (usually 993), connect with implicit TLS instead of STARTTLS.`,
      { kind: 'tls-mode', ...fields(ctx), code: e.code },
    );
  }
  return transportFailure(e, ctx) ?? protocolFailure(ctx, e.code, e.message, serverText);
}

/** A nodemailer error (from verify() or sendMail()) as a MailServerError. */
export function smtpFailure(err: unknown, ctx: FailureContext): MailServerError {
  if (err instanceof MailServerError) return err;
  const e = (err ?? {}) as NodemailerErrorLike;
  const serverText = e.response ? clip(e.response) : undefined;
  if (e.code === 'EAUTH') {
    if (ctx.oauth && /mechanism/i.test(e.response ?? '')) return missingExtension(ctx, 'AUTH=XOAUTH2', serverText);
    return badCredentials(ctx, e.responseCode === undefined ? undefined : String(e.responseCode), serverText);
  }
  if (e.code === 'ETLS' && e.command === 'STARTTLS' && e.response) return missingExtension(ctx, 'STARTTLS', serverText);
  // Socket-level errors keep Node's code in originalCode. (An Error's message does not spread.)
  const underlying: ImapFlowErrorLike = {
    message: e.message,
    code: e.originalCode ?? e.code,
    reason: e.reason,
    cert: e.cert,
  };
  return transportFailure(underlying, ctx) ?? protocolFailure(ctx, e.code, e.message, serverText);
}

interface ImapFlowErrorLike {
  message?: string;
  code?: string;
  authenticationFailed?: boolean;
  serverResponseCode?: string;
  responseText?: string;
  reason?: string;
  cert?: { subjectaltname?: string; valid_to?: string };
}

interface NodemailerErrorLike extends ImapFlowErrorLike {
  originalCode?: string;
  response?: string;
  responseCode?: number;
  command?: string;
}

const TLS_REFUSALS: Record<string, TlsRefusal> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'untrusted-issuer',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'untrusted-issuer',
  UNABLE_TO_GET_ISSUER_CERT: 'untrusted-issuer',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'untrusted-issuer',
  CERT_UNTRUSTED: 'untrusted-issuer',
  ERR_TLS_CERT_ALTNAME_INVALID: 'name-mismatch',
  CERT_HAS_EXPIRED: 'expired',
  CERT_NOT_YET_VALID: 'not-yet-valid',
};

// nodemailer's STARTTLS path keeps only the message ("Error initiating TLS - ...").
const TLS_MESSAGES: [RegExp, TlsRefusal][] = [
  [/self[- ]signed certificate in certificate chain/i, 'untrusted-issuer'],
  [/self[- ]signed certificate/i, 'self-signed'],
  [/unable to (verify|get) (the first|local issuer|issuer)/i, 'untrusted-issuer'],
  [/does not match certificate's altnames/i, 'name-mismatch'],
  [/certificate has expired/i, 'expired'],
  [/certificate is not yet valid/i, 'not-yet-valid'],
];

function transportFailure(e: ImapFlowErrorLike, ctx: FailureContext): MailServerError | undefined {
  const code = e.code ?? '';
  const message = e.message ?? '';
  const refusal = TLS_REFUSALS[code] ?? TLS_MESSAGES.find(([re]) => re.test(message))?.[1];
  if (refusal) return tlsUntrusted(ctx, refusal, code, e.cert);
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(message)) {
    const plainPort = ctx.protocol === 'imap' ? '143' : '587';
    const tlsPort = ctx.protocol === 'imap' ? '993' : '465';
    return new MailServerError(
      `The ${label(ctx)} server ${where(ctx)} does not speak TLS from the first byte: connect to this port with STARTTLS (usually ${plainPort}), or to its implicit-TLS port (usually ${tlsPort}).`,
      { kind: 'tls-mode', ...fields(ctx), code },
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EDNS') {
    return new MailServerError(
      `The ${label(ctx)} server name ${safe(ctx.host)} does not resolve to an address: check the host name.`,
      {
        kind: 'unreachable',
        ...fields(ctx),
        code,
      },
    );
  }
  if (code === 'ECONNREFUSED') {
    return new MailServerError(
      `The ${label(ctx)} server ${where(ctx)} refused the connection: check the host and port.`,
      {
        kind: 'unreachable',
        ...fields(ctx),
        code,
      },
    );
  }
  if (['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN'].includes(code)) {
    return new MailServerError(
      `The ${label(ctx)} server ${where(ctx)} cannot be reached from this machine (no route to it).`,
      {
        kind: 'unreachable',
        ...fields(ctx),
        code,
      },
    );
  }
  if (
    [
      'ECONNRESET',
      'EPIPE',
      'NoConnection',
      'EConnectionClosed',
      'ECONNECTION',
      'ClosedAfterConnectText',
      'ClosedAfterConnectTLS',
    ].includes(code)
  ) {
    return new MailServerError(
      `The ${label(ctx)} server ${where(ctx)} closed the connection before the login was done.`,
      {
        kind: 'unreachable',
        ...fields(ctx),
        code,
      },
    );
  }
  if (['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT', 'ETIMEOUT', 'ETIMEDOUT'].includes(code)) {
    return new MailServerError(
      `The ${label(ctx)} server ${where(ctx)} did not answer within ${seconds(ctx.timeoutMs)}.`,
      {
        kind: 'timeout',
        ...fields(ctx),
        code,
      },
    );
  }
  return undefined;
}

function tlsUntrusted(
  ctx: FailureContext,
  refusal: TlsRefusal,
  code: string,
  cert?: ImapFlowErrorLike['cert'],
): MailServerError {
  const trustHint = 'if you trust this server, give its CA certificate (a PEM file) with --ca';
  const reasons: Record<TlsRefusal, string> = {
    'self-signed': `it is self-signed; ${trustHint}`,
    'untrusted-issuer': `it is signed by a certificate authority this machine does not trust; ${trustHint}`,
    'name-mismatch': `it is not issued for the name ${safe(ctx.servername)}${cert?.subjectaltname ? ` (it names ${clip(cert.subjectaltname, 120)})` : ''}; connect with a name it lists`,
    expired: `it has expired${cert?.valid_to ? ` (${safe(cert.valid_to)})` : ''}; the server's administrator must renew it, or this machine's clock is wrong`,
    'not-yet-valid': "it is not valid yet; this machine's clock may be wrong",
    other: trustHint,
  };
  return new MailServerError(
    `The TLS certificate of the ${label(ctx)} server ${where(ctx)} was refused: ${reasons[refusal]}.`,
    {
      kind: 'tls-untrusted',
      tlsRefusal: refusal,
      ...fields(ctx),
      code,
    },
  );
}

function badCredentials(
  ctx: FailureContext,
  code: string | undefined,
  serverText: string | undefined,
): MailServerError {
  const what = ctx.oauth
    ? `did not accept the access token of ${safe(ctx.user)} (XOAUTH2): it has expired or lacks the mail scope; connect the account again`
    : `refused the login of ${safe(ctx.user)}: the user name or password is wrong (accounts with 2-step verification need an app password)`;
  return new MailServerError(`The ${label(ctx)} server ${where(ctx)} ${what}.`, {
    kind: 'bad-credentials',
    ...fields(ctx),
    ...(code ? { code } : {}),
    ...(serverText ? { serverText } : {}),
  });
}

function protocolFailure(
  ctx: FailureContext,
  code: string | undefined,
  message: string | undefined,
  serverText?: string,
): MailServerError {
  return new MailServerError(
    `The ${label(ctx)} connection to ${where(ctx)} failed: ${clip(message || 'unknown error', 160)}${code ? ` (${safe(code)})` : ''}.`,
    { kind: 'protocol', ...fields(ctx), ...(code ? { code } : {}), ...(serverText ? { serverText } : {}) },
  );
}

const label = (ctx: FailureContext) => ctx.protocol.toUpperCase();
const where = (ctx: FailureContext) => `${safe(ctx.host)}:${ctx.port}`;
const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const fields = (ctx: FailureContext) => ({ protocol: ctx.protocol, host: ctx.host, port: ctx.port });
const safe = (text: string) => clip(text, 200);

function clip(text: string, max = 200): string {
  const flat = displaySafe(text).trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
