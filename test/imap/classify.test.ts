// The parts of src/imap that a local Dovecot cannot show: servers whose folders carry no special-use
// attribute or that take no keywords (Exchange), and failures of Node's TLS and DNS that need a
// public server (self-signed leaf, expired certificate, unknown host name).
import { describe, expect, it } from 'vitest';
import { describeCapabilities, findSpecialFolders } from '../../src/imap/capabilities.js';
import { imapFailure, smtpFailure, type FailureContext } from '../../src/imap/errors.js';

const imap: FailureContext = {
  protocol: 'imap',
  host: 'mail.example.org',
  port: 993,
  tls: 'implicit',
  user: 'bob@example.org',
  oauth: false,
  servername: 'mail.example.org',
  timeoutMs: 30_000,
};

describe('capabilities', () => {
  it('prefers a special-use attribute to a folder found by its usual name', () => {
    const folders = findSpecialFolders([
      { path: 'INBOX.Sent Items', specialUse: '\\Sent', specialUseSource: 'name' },
      { path: 'INBOX.Sent', specialUse: '\\Sent', specialUseSource: 'extension' },
      { path: 'INBOX.Deleted Items', specialUse: '\\Trash', specialUseSource: 'name' },
      { path: 'INBOX.Projects' },
    ]);
    expect(folders).toEqual({
      sent: { path: 'INBOX.Sent', found: 'attribute' },
      trash: { path: 'INBOX.Deleted Items', found: 'name' },
    });
  });

  it('keeps the state in folders when INBOX takes no new keywords (no \\* in PERMANENTFLAGS)', () => {
    const capabilities = describeCapabilities({
      advertised: ['IMAP4rev1', 'CONDSTORE', 'MOVE', 'UIDPLUS'],
      enabled: ['CONDSTORE'],
      folders: [{ path: 'INBOX', delimiter: '.' }],
      inbox: { path: 'INBOX', permanentFlags: new Set(['\\Seen', '\\Deleted']), highestModseq: 42n, uidValidity: 7n },
    });
    expect(capabilities).toMatchObject({
      keywords: false,
      stateIn: 'folders',
      idle: false,
      qresync: false,
      delimiter: '.',
    });
    expect(capabilities.inboxHighestModseq).toBe('42');
  });
});

describe('failure sentences', () => {
  it('names a self-signed certificate and how to trust it', () => {
    const err = imapFailure(
      Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      imap,
    );
    expect(err.message).toBe(
      'The TLS certificate of the IMAP server mail.example.org:993 was refused: it is self-signed; if you trust this server, give its CA certificate (a PEM file) with --ca.',
    );
  });

  it('names an expired certificate', () => {
    const err = imapFailure(
      Object.assign(new Error('certificate has expired'), {
        code: 'CERT_HAS_EXPIRED',
        cert: { valid_to: 'Jan  1 00:00:00 2020 GMT' },
      }),
      imap,
    );
    expect(err.tlsRefusal).toBe('expired');
    expect(err.message).toBe(
      "The TLS certificate of the IMAP server mail.example.org:993 was refused: it has expired (Jan  1 00:00:00 2020 GMT); the server's administrator must renew it, or this machine's clock is wrong.",
    );
  });

  it('reads the TLS reason from nodemailer STARTTLS messages that lost the code', () => {
    const err = smtpFailure(
      Object.assign(new Error('Error initiating TLS - self-signed certificate in certificate chain'), { code: 'ETLS' }),
      {
        ...imap,
        protocol: 'smtp',
        port: 587,
        tls: 'starttls',
      },
    );
    expect(err.kind).toBe('tls-untrusted');
    expect(err.tlsRefusal).toBe('untrusted-issuer');
  });

  it('says a host name does not resolve, and a timeout in seconds', () => {
    expect(imapFailure(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), imap).message).toBe(
      'The IMAP server name mail.example.org does not resolve to an address: check the host name.',
    );
    const timeout = imapFailure(Object.assign(new Error('timed out'), { code: 'CONNECT_TIMEOUT' }), imap);
    expect(timeout.kind).toBe('timeout');
    expect(timeout.message).toBe('The IMAP server mail.example.org:993 did not answer within 30 s.');
  });

  it('keeps what a server says out of the sentence, and control characters out of both', () => {
    const err = imapFailure(
      {
        authenticationFailed: true,
        serverResponseCode: 'AUTHENTICATIONFAILED',
        responseText: 'bad\u001b[2J\r\nforged line',
      },
      imap,
    );
    expect(err.message).not.toMatch(/bad|forged/);
    expect(err.serverText).toBe('bad[2J forged line');
  });
});
