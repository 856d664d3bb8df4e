// The IMAP/SMTP connection layer (src/imap) against real Dovecot and Postfix: what it reports for a
// good account, and the one sentence for each way connecting fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { checkImapAccount } from '../../src/imap/connect.js';
import { checkSmtpSubmission } from '../../src/imap/smtp.js';
import { MailServerError } from '../../src/imap/errors.js';
import type { MailCredentials, MailServerAddress } from '../../src/imap/contracts.js';
import { freePort } from '../../src/shared/free-port.js';
import { imapAddress, submissionAddress } from './mail-test-clients.js';

// Dovecot's capabilities less one extension, through its imap_capability setting.
const DOVECOT_CAPABILITIES =
  'IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE NAMESPACE UIDPLUS MOVE LITERAL+ SPECIAL-USE CONDSTORE QRESYNC';
const without = (extension: string) =>
  DOVECOT_CAPABILITIES.split(' ')
    .filter((c) => c !== extension)
    .join(' ');

let servers: MailServers;
let noCondstore: MailServers;
let noIdle: MailServers;
let user: MailCredentials;

beforeAll(async () => {
  [servers, noCondstore, noIdle] = await Promise.all([
    startMailServers(),
    startMailServers({ postfix: false, imapCapability: without('CONDSTORE') }),
    startMailServers({ postfix: false, imapCapability: without('IDLE') }),
  ]);
  user = { user: servers.user.address, password: servers.user.password };
});

afterAll(async () => {
  await Promise.all([servers?.stop(), noCondstore?.stop(), noIdle?.stop()]);
});

/** The MailServerError a check throws (failing the test if it does not throw one). */
async function failure(check: Promise<unknown>): Promise<MailServerError> {
  const err = await check.then(
    () => new Error('the check passed'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MailServerError);
  return err as MailServerError;
}

describe('checkImapAccount', () => {
  it.each(['implicit', 'starttls'] as const)('describes a Dovecot account over %s TLS', async (tls) => {
    const capabilities = await checkImapAccount(imapAddress(servers, tls), user);
    expect(capabilities).toMatchObject({
      condstore: true,
      qresync: true,
      idle: true,
      move: true,
      uidplus: true,
      gmail: false,
      specialUseAdvertised: true,
      delimiter: '/',
      inbox: 'INBOX',
      keywords: true,
      stateIn: 'keywords',
      folders: {
        drafts: { path: 'Drafts', found: 'attribute' },
        sent: { path: 'Sent', found: 'attribute' },
        archive: { path: 'Archive', found: 'attribute' },
        junk: { path: 'Junk', found: 'attribute' },
        trash: { path: 'Trash', found: 'attribute' },
      },
    });
    expect(capabilities.advertised).toContain('CONDSTORE');
    expect(BigInt(capabilities.inboxHighestModseq)).toBeGreaterThan(0n);
    expect(BigInt(capabilities.inboxUidValidity)).toBeGreaterThan(0n);
  });

  it('takes a server without IDLE (the product polls instead)', async () => {
    const capabilities = await checkImapAccount(imapAddress(noIdle), user);
    expect(capabilities.idle).toBe(false);
    expect(capabilities.condstore).toBe(true);
  });

  it('refuses a wrong password in one sentence', async () => {
    const err = await failure(checkImapAccount(imapAddress(servers), { ...user, password: 'not-the-password' }));
    expect(err.kind).toBe('bad-credentials');
    expect(err.code).toBe('AUTHENTICATIONFAILED');
    expect(err.message).toBe(
      `The IMAP server 127.0.0.1:${servers.imap.implicitTlsPort} refused the login of user@inbox.test: the user name or password is wrong (accounts with 2-step verification need an app password).`,
    );
    expect(err.retryable).toBe(false);
  });

  it.each(['implicit', 'starttls'] as const)(
    'refuses a certificate from a CA it does not trust (%s TLS)',
    async (tls) => {
      const { ca: _trusted, ...untrusted } = imapAddress(servers, tls);
      const err = await failure(checkImapAccount(untrusted, user));
      expect(err.kind).toBe('tls-untrusted');
      expect(err.tlsRefusal).toBe('untrusted-issuer');
      expect(err.message).toBe(
        `The TLS certificate of the IMAP server 127.0.0.1:${untrusted.port} was refused: it is signed by a certificate authority this machine does not trust; if you trust this server, give its CA certificate (a PEM file) with --ca.`,
      );
    },
  );

  it('refuses a certificate issued for another name', async () => {
    const address: MailServerAddress = { ...imapAddress(servers), servername: 'imap.example.test' };
    const err = await failure(checkImapAccount(address, user));
    expect(err.tlsRefusal).toBe('name-mismatch');
    expect(err.message).toBe(
      `The TLS certificate of the IMAP server 127.0.0.1:${address.port} was refused: it is not issued for the name imap.example.test (it names DNS:localhost, IP Address:127.0.0.1); connect with a name it lists.`,
    );
  });

  it('refuses a server without CONDSTORE, naming it', async () => {
    const err = await failure(checkImapAccount(imapAddress(noCondstore), user));
    expect(err.kind).toBe('missing-extension');
    expect(err.extension).toBe('CONDSTORE');
    expect(err.message).toBe(
      `The IMAP server 127.0.0.1:${noCondstore.imap.implicitTlsPort} does not support CONDSTORE, which durable-inbox needs to follow changes to messages (RFC 7162 modification sequences).`,
    );
  });

  it('refuses an access token where the server offers no XOAUTH2', async () => {
    const err = await failure(checkImapAccount(imapAddress(servers), { user: user.user, accessToken: 'ya29.token' }));
    expect(err.kind).toBe('missing-extension');
    expect(err.extension).toBe('AUTH=XOAUTH2');
    expect(err.message).toMatch(
      /does not support AUTH=XOAUTH2, which durable-inbox needs to log in with an OAuth access token \(connect with an app password instead\)\.$/,
    );
  });

  it('says when implicit TLS meets a plain port, and when STARTTLS meets a TLS port', async () => {
    const tlsOnPlain = await failure(
      checkImapAccount({ ...imapAddress(servers), port: servers.imap.starttlsPort }, user),
    );
    expect(tlsOnPlain.kind).toBe('tls-mode');
    expect(tlsOnPlain.message).toMatch(
      /does not speak TLS from the first byte: connect to this port with STARTTLS \(usually 143\)/,
    );
    // The server waits for a TLS hello and never greets: what ends the wait is the client's greeting timeout.
    const plainOnTls = await failure(
      checkImapAccount({ ...imapAddress(servers, 'starttls'), port: servers.imap.implicitTlsPort }, user, {
        timeoutMs: 1_000,
      }),
    );
    expect(plainOnTls.kind).toBe('tls-mode');
    expect(plainOnTls.message).toMatch(
      /sent no greeting within 1 s: if this port expects TLS from the first byte \(usually 993\)/,
    );
  });

  it('says when nothing listens', async () => {
    const port = await freePort();
    const err = await failure(checkImapAccount({ ...imapAddress(servers), port }, user));
    expect(err.kind).toBe('unreachable');
    expect(err.message).toBe(`The IMAP server 127.0.0.1:${port} refused the connection: check the host and port.`);
    expect(err.retryable).toBe(true);
  });
});

describe('checkSmtpSubmission', () => {
  it.each(['starttls', 'implicit'] as const)('logs in to Postfix submission over %s TLS', async (tls) => {
    await expect(checkSmtpSubmission(submissionAddress(servers, tls), user)).resolves.toBeUndefined();
  });

  it('refuses a wrong password in one sentence', async () => {
    const address = submissionAddress(servers);
    const err = await failure(checkSmtpSubmission(address, { ...user, password: 'not-the-password' }));
    expect(err.kind).toBe('bad-credentials');
    expect(err.message).toBe(
      `The SMTP server 127.0.0.1:${address.port} refused the login of user@inbox.test: the user name or password is wrong (accounts with 2-step verification need an app password).`,
    );
    expect(err.serverText).toMatch(/^535 5\.7\.8/);
  });

  it.each(['starttls', 'implicit'] as const)(
    'refuses a certificate from a CA it does not trust (%s TLS)',
    async (tls) => {
      const { ca: _trusted, ...untrusted } = submissionAddress(servers, tls);
      const err = await failure(checkSmtpSubmission(untrusted, user));
      expect(err.kind).toBe('tls-untrusted');
      expect(err.tlsRefusal).toBe('untrusted-issuer');
      expect(err.message).toMatch(
        /^The TLS certificate of the SMTP server 127\.0\.0\.1:\d+ was refused: it is signed by a certificate authority/,
      );
    },
  );

  it('refuses an access token where the server offers no XOAUTH2', async () => {
    const err = await failure(
      checkSmtpSubmission(submissionAddress(servers), { user: user.user, accessToken: 'ya29.token' }),
    );
    expect(err.kind).toBe('missing-extension');
    expect(err.extension).toBe('AUTH=XOAUTH2');
  });

  it('says when implicit TLS meets a plain port', async () => {
    const err = await failure(
      checkSmtpSubmission({ ...submissionAddress(servers, 'implicit'), port: servers.smtp.submissionPort }, user),
    );
    expect(err.kind).toBe('tls-mode');
    expect(err.message).toMatch(/STARTTLS \(usually 587\), or to its implicit-TLS port \(usually 465\)\.$/);
  });
});
