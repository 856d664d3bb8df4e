// `accounts connect --imap` without --imap-host: the servers of the provider that hosts the
// address's domain, from nodemailer's well-known services (SMTP) and the reference's IMAP hosts.
import { describe, expect, it } from 'vitest';
import { imapServersOf } from '../../src/cli/accounts.js';
import { wellKnownServers } from '../../src/imap/well-known-servers.js';

describe('well-known servers', () => {
  it("finds a provider's IMAP and submission servers from the address's domain", () => {
    expect(wellKnownServers('you@fastmail.com')).toMatchObject({
      provider: 'FastMail',
      imap: { host: 'imap.fastmail.com', port: 993, tls: 'implicit' },
      smtp: { host: 'smtp.fastmail.com', port: 465, tls: 'implicit' },
    });
    // iCloud submits on 587 with STARTTLS; its other domains and any case find it too.
    expect(wellKnownServers('Someone@ME.com')).toMatchObject({
      provider: 'iCloud Mail',
      imap: { host: 'imap.mail.me.com', port: 993, tls: 'implicit' },
      smtp: { host: 'smtp.mail.me.com', port: 587, tls: 'starttls' },
    });
    expect(wellKnownServers('a@googlemail.com')?.imap.host).toBe('imap.gmail.com');
    expect(wellKnownServers('a@hotmail.com')?.note).toMatch(/OAuth/);
  });

  it('knows nothing of other domains, nor of a service name that is not a domain', () => {
    expect(wellKnownServers('me@example.org')).toBeUndefined();
    expect(wellKnownServers('me@gmail')).toBeUndefined();
    expect(wellKnownServers('gmail.com')).toBeUndefined();
    // A provider nodemailer knows only for SMTP: no IMAP host is guessed.
    expect(wellKnownServers('me@gmx.de')).toBeUndefined();
  });
});

describe('the servers connect uses', () => {
  it("takes the well-known provider's when no host is given, with a port or TLS mode given kept", () => {
    const { servers, known } = imapServersOf({ email: 'you@fastmail.com', password: 'p' });
    expect(known?.provider).toBe('FastMail');
    expect(servers).toEqual({
      imap: { server: { host: 'imap.fastmail.com', port: 993, tls: 'implicit' }, user: 'you@fastmail.com' },
      smtp: { server: { host: 'smtp.fastmail.com', port: 465, tls: 'implicit' }, user: 'you@fastmail.com' },
    });
    const onSubmission = imapServersOf({ email: 'you@fastmail.com', smtpPort: 587, user: 'login' }).servers;
    expect(onSubmission.smtp).toEqual({
      server: { host: 'smtp.fastmail.com', port: 587, tls: 'starttls' },
      user: 'login',
    });
  });

  it('takes the given host as it is, for any domain', () => {
    const { servers, known } = imapServersOf({
      email: 'you@fastmail.com',
      imapHost: 'mail.example.org',
      smtpPort: 465,
    });
    expect(known).toBeUndefined();
    expect(servers.imap.server).toEqual({ host: 'mail.example.org', port: 993, tls: 'implicit' });
    expect(servers.smtp.server).toEqual({ host: 'mail.example.org', port: 465, tls: 'implicit' });
  });

  it('says what to give for a domain it does not know', () => {
    expect(() => imapServersOf({ email: 'you@example.org' })).toThrow(
      'no IMAP server is known for "example.org": give --imap-host (and --smtp-host when mail is submitted elsewhere), as your provider\'s help pages name them',
    );
  });
});
