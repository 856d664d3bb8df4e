// The IMAP/SMTP connection layer (src/imap) against real Dovecot and Postfix: what it reports for a
// good account, and the one sentence for each way connecting fails.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { checkImapAccount } from '../../src/imap/connect.js';
import { checkSmtpSubmission } from '../../src/imap/smtp.js';
import { MailServerError } from '../../src/imap/errors.js';
import type { MailCredentials, MailServerAddress } from '../../src/imap/contracts.js';
import { freePort } from '../../src/shared/free-port.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { ImapAccounts, imapMailboxSettings } from '../../src/accounts/imap-accounts.js';
import { createPrismaClient } from '../../src/db/client.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { registerImapAccount } from '../../src/sync/connect.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { inMemoryLabelMemory } from '../../src/imap/label-memory.js';
import { imapAddress, imapClient, submissionAddress } from './mail-test-clients.js';

// Dovecot's capabilities less one extension, through its imap_capability setting.
const DOVECOT_CAPABILITIES =
  'IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE NAMESPACE UIDPLUS MOVE LITERAL+ SPECIAL-USE CONDSTORE QRESYNC';
const without = (...extensions: string[]) =>
  DOVECOT_CAPABILITIES.split(' ')
    .filter((c) => !extensions.includes(c))
    .join(' ');

const run = randomUUID().slice(0, 8);
let servers: MailServers;
let noCondstore: MailServers;
let noIdle: MailServers;
let user: MailCredentials;

beforeAll(async () => {
  [servers, noCondstore, noIdle] = await Promise.all([
    startMailServers(),
    // As Exchange: no CONDSTORE, so no QRESYNC either.
    // (With Postfix: connect checks the submission too. Its own address: the account goes into the shared database.)
    startMailServers({ imapCapability: without('CONDSTORE', 'QRESYNC'), user: { address: `nocondstore-${run}@inbox.test`, password: 'user-app-password' } }),
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

  it('takes a server without CONDSTORE (changes then come from a flag scan)', async () => {
    const capabilities = await checkImapAccount(imapAddress(noCondstore), { user: noCondstore.user.address, password: noCondstore.user.password });
    expect(capabilities).toMatchObject({ condstore: false, qresync: false, idle: true, inboxHighestModseq: '0' });
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

describe('changes on a server without CONDSTORE (UIDNEXT and a scan of every flag against the label memory)', () => {
  it('tells new mail, a keyword set and taken off, \\Seen and an expunge, each once, also to a mailbox opened afresh on the same memory', async () => {
    const settings = imapMailboxSettings(noCondstore.user.address, {
      imap: { server: imapAddress(noCondstore), user: noCondstore.user.address },
      // Never used here: no mail is sent.
      smtp: { server: imapAddress(noCondstore), user: noCondstore.user.address },
    }, { password: noCondstore.user.password });
    const memory = inMemoryLabelMemory();
    let mailbox = await ImapMailbox.open({ ...settings, memory });
    const other = await imapClient(noCondstore, noCondstore.user);
    try {
      expect(mailbox.capabilities.changes).toBe('idle');
      const start = await mailbox.getCursor();
      const message = (name: string) =>
        Buffer.from(`From: Alice <alice@example.test>\r\nTo: ${noCondstore.user.address}\r\nSubject: ${name}\r\nMessage-ID: <${name}-${randomUUID()}@example.test>\r\n\r\nHello.\r\n`);
      const first = await other.append('INBOX', message('first'));
      const second = await other.append('INBOX', message('second'));
      const uidOf = (appended: typeof first) => String((appended as { uid: number }).uid);

      const arrived = await mailbox.listChanges({ cursor: start });
      const added = arrived.records.flatMap((r) => r.messagesAdded);
      expect(added).toHaveLength(2);
      for (const m of added) expect(m.labelIds).toEqual(expect.arrayContaining(['INBOX', 'UNREAD']));
      const [firstId, secondId] = added.map((m) => m.id);
      // Nothing since: an empty page, the same cursor.
      const quiet = await mailbox.listChanges({ cursor: arrived.cursor });
      expect(quiet.records).toEqual([]);
      expect(quiet.cursor).toBe(arrived.cursor);

      // The user: Done and read on the first, the second deleted.
      await other.mailboxOpen('INBOX');
      await other.messageFlagsAdd(uidOf(first), ['$DI_Done', '\\Seen'], { uid: true });
      await other.messageDelete(uidOf(second), { uid: true });
      const changed = await mailbox.listChanges({ cursor: quiet.cursor });
      expect(changed.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: firstId }), labelIds: ['Done'] })]);
      expect(changed.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ labelIds: ['UNREAD'] })]);
      expect(changed.records.flatMap((r) => r.messagesDeleted)).toEqual([expect.objectContaining({ id: secondId })]);
      // Read again from the same cursor (its activity failed before the cursor was saved): the same page.
      const again = await mailbox.listChanges({ cursor: quiet.cursor });
      expect(again.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ labelIds: ['Done'] })]);
      expect(again.records.flatMap((r) => r.messagesDeleted)).toEqual([expect.objectContaining({ id: secondId })]);
      expect((await mailbox.listChanges({ cursor: changed.cursor })).records).toEqual([]);

      // The workers restart (a new mailbox, the memory kept, as in the database); meanwhile the user takes Done off.
      await mailbox.close();
      await other.messageFlagsRemove(uidOf(first), ['$DI_Done'], { uid: true });
      mailbox = await ImapMailbox.open({ ...settings, memory });
      const undone = await mailbox.listChanges({ cursor: changed.cursor });
      expect(undone.records.flatMap((r) => r.labelsRemoved)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: firstId }), labelIds: ['Done'] })]);
      expect(undone.records.flatMap((r) => [...r.labelsAdded, ...r.messagesAdded, ...r.messagesDeleted])).toEqual([]);
    } finally {
      await other.logout();
      await mailbox.close();
    }
  });
});

describe('connect on a server without CONDSTORE: the baseline', () => {
  it('a keyword the user sets after connect, before the first scan, is told once to the workers', async () => {
    const prisma = createPrismaClient(inject('databaseUrl'));
    const vault = new TokenVault(randomBytes(32));
    const address = noCondstore.user.address;
    const other = await imapClient(noCondstore, noCondstore.user);
    const accounts = new ImapAccounts(prisma, vault);
    try {
      // Mail already in the INBOX when the user connects; one message read, one not.
      const message = (name: string) =>
        Buffer.from(`From: Alice <alice@example.test>\r\nTo: ${address}\r\nSubject: ${name} ${run}\r\nMessage-ID: <${name}-${run}@example.test>\r\n\r\nHello.\r\n`);
      const old = (await other.append('INBOX', message('old'), ['\\Seen'])) as { uid: number };
      await other.append('INBOX', message('older'));
      const account = await registerImapAccount({ prisma, vault }, {
        address,
        servers: { imap: { server: imapAddress(noCondstore), user: address }, smtp: { server: submissionAddress(noCondstore), user: address } },
        secret: { password: noCondstore.user.password },
      });
      expect(account.historyId).toMatch(/^c1\./);

      // The user marks the old message Done (and unread) before the workers' first scan.
      await other.mailboxOpen('INBOX');
      await other.messageFlagsAdd(String(old.uid), ['$DI_Done'], { uid: true });
      await other.messageFlagsRemove(String(old.uid), ['\\Seen'], { uid: true });

      const scan = (cursor: string) => accounts.call(account.id, (mailbox) => mailbox.listChanges({ cursor }));
      const first = await scan(account.historyId);
      const oldId = `m${Buffer.from(`<old-${run}@example.test>`).toString('base64url')}`;
      expect(first.records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: oldId }), labelIds: ['UNREAD', 'Done'] })]);
      // Nothing else: the messages there at connect are not new mail, the other unchanged.
      expect(first.records.flatMap((r) => [...r.messagesAdded, ...r.messagesDeleted, ...r.labelsRemoved])).toEqual([]);
      // Read again from the connect cursor (the page's activity failed): the same change; from the next, nothing.
      expect((await scan(account.historyId)).records.flatMap((r) => r.labelsAdded)).toEqual([expect.objectContaining({ labelIds: ['UNREAD', 'Done'] })]);
      expect((await scan(first.cursor)).records).toEqual([]);
    } finally {
      await accounts.close();
      await other.logout();
      await prisma.account.deleteMany({ where: { email: address } });
      await prisma.$disconnect();
    }
  });
});
