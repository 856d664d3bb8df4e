// `npm run cli -- accounts connect --imap` against a real Dovecot and Postfix and the test database:
// the account stored with its servers and its password sealed (never in clear), the sync started;
// a wrong password, a certificate nobody vouched for and a closed port each one sentence and exit 1.
// And OAuth (XOAUTH2): the Dovecot of this file also takes access tokens, checked at the Gmail
// emulator's tokeninfo endpoint (an oauth2 passdb), so connect takes a refresh token from the
// emulator's token endpoint, the account reads and sends with access tokens, an expired one is
// refreshed, and a revoked grant turns the account needs_reauth.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { runAccountsCli } from '../../src/cli/accounts.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { cliRunner } from '../helpers/run-cli.js';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { DEFAULT_CLIENT } from '../../emulators/gmail/oauth.js';
import { ImapAccounts, imapMailboxSettings } from '../../src/accounts/imap-accounts.js';
import { MailServerError } from '../../src/imap/errors.js';
import { checkImapAccount } from '../../src/imap/connect.js';
import { AccessTokenCache, refreshAccessToken } from '../../src/imap/oauth-token.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { waitUntil } from '../helpers/wait-until.js';
import { freePort } from '../../src/shared/free-port.js';
import { receivedInInbox } from './mail-test-clients.js';
import { startImapWatch } from '../../src/sync/imap-watch.js';

const run = randomUUID().slice(0, 8);
const tokenKey = randomBytes(32);
const taskQueue = `connect-imap-${run}`;
let servers: MailServers;
let prisma: PrismaClient;
let dir: string;
let connection: Connection;
let emulator: RunningGmailEmulator;
let refreshToken: string;
const cli = cliRunner(runAccountsCli, {
  TOKEN_ENCRYPTION_KEY: tokenKey.toString('base64'),
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_TASK_QUEUE: taskQueue,
});

beforeAll(async () => {
  emulator = await startGmailEmulator({ quota: false });
  const base = emulator.url.replace(/\/+$/, '');
  servers = await startMailServers({
    user: { address: `connect-${run}@inbox.test`, password: 'the-app-password' },
    oauth2: { tokeninfoUrl: `${base}/tokeninfo?access_token=` },
  });
  refreshToken = (await emulator.control.createAccount({ email: servers.user.address })).refreshToken;
  prisma = createPrismaClient(inject('databaseUrl'));
  dir = mkdtempSync(join(tmpdir(), 'connect-imap-'));
  writeFileSync(join(dir, 'ca.pem'), servers.caPem);
  writeFileSync(join(dir, 'password'), `${servers.user.password}\n`);
  writeFileSync(join(dir, 'wrong'), 'not-the-password\n');
  connection = await Connection.connect({ address: inject('temporalAddress') });
});

afterAll(async () => {
  const account = await prisma?.account.findUnique({ where: { email: servers.user.address } });
  if (account) await new Client({ connection }).workflow.getHandle(syncWorkflowId(account.id)).terminate().catch(() => undefined);
  await prisma?.account.deleteMany({ where: { email: servers.user.address } });
  await prisma?.$disconnect();
  await connection?.close();
  await servers?.stop();
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

const connect = (...extra: string[]) =>
  cli(
    'connect', '--imap', '--email', servers.user.address,
    '--imap-host', servers.host, '--imap-port', String(servers.imap.implicitTlsPort), '--imap-tls', 'implicit',
    '--smtp-port', String(servers.smtp.submissionPort),
    ...extra,
  );

describe('accounts connect --imap', () => {
  it('refuses a wrong password in one sentence, with exit 1, and stores nothing', async () => {
    const refused = await connect('--password-file', join(dir, 'wrong'), '--ca-file', join(dir, 'ca.pem'));
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^durable-inbox accounts connect: The IMAP server 127\.0\.0\.1:\d+ refused the login of connect-\w+@inbox\.test: the user name or password is wrong \(accounts with 2-step verification need an app password\)\.$/);
    expect(await prisma.account.findUnique({ where: { email: servers.user.address } })).toBeNull();
  });

  it('without --imap-host, says what to give for a domain no well-known provider hosts, and stores nothing', async () => {
    const address = `nobody-${run}@unknown-provider.example`;
    const refused = await cli('connect', '--imap', '--email', address, '--password-file', join(dir, 'password'));
    expect(refused.code).toBe(2);
    expect(refused.out.split('\n')[0]).toBe(
      'durable-inbox accounts: no IMAP server is known for "unknown-provider.example": give --imap-host (and --smtp-host when mail is submitted elsewhere), as your provider\'s help pages name them',
    );
    expect(await prisma.account.findUnique({ where: { email: address } })).toBeNull();
  });

  it('refuses a server certificate no trusted CA signed', async () => {
    const refused = await connect('--password-file', join(dir, 'password'));
    expect(refused.code).toBe(1);
    expect(refused.out.split('\n')).toHaveLength(1);
    expect(refused.out).toMatch(/certificate/i);
  });

  it('says so when nothing listens on the SMTP port, after the IMAP login worked', async () => {
    const refused = await connect('--password-file', join(dir, 'password'), '--ca-file', join(dir, 'ca.pem'), '--smtp-port', '1');
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/SMTP/);
    expect(refused.out.split('\n')).toHaveLength(1);
  });

  it('connects: the servers stored, the password sealed and never in clear, the cursor set, the sync started', async () => {
    const connected = await connect('--password-file', join(dir, 'password'), '--ca-file', join(dir, 'ca.pem'));
    expect(connected.out).toMatch(new RegExp(`^Connected ${servers.user.address} over IMAP \\(account [0-9a-f-]+\\): changes pushed by IDLE, labels kept as IMAP keywords\\.$`));
    expect(connected.code).toBe(0);

    const account = await prisma.account.findUniqueOrThrow({ where: { email: servers.user.address } });
    expect(account).toMatchObject({ provider: 'imap', status: 'active' });
    expect(account.mailServers).toMatchObject({
      imap: { server: { host: servers.host, port: servers.imap.implicitTlsPort, tls: 'implicit' }, user: servers.user.address },
      smtp: { server: { host: servers.host, port: servers.smtp.submissionPort, tls: 'starttls' }, user: servers.user.address },
    });
    expect(account.historyId).toMatch(/^c1\./);
    const stored = Buffer.from(account.encryptedTokens!);
    expect(stored.includes(Buffer.from(servers.user.password))).toBe(false);
    expect(JSON.stringify(account.mailServers)).not.toContain(servers.user.password);
    expect(new TokenVault(tokenKey).openJson(stored)).toEqual({ password: servers.user.password });

    const sync = await new Client({ connection }).workflow.getHandle(syncWorkflowId(account.id)).describe();
    expect(sync.taskQueue).toBe(taskQueue);
  });
});

describe('accounts connect --imap with OAuth (XOAUTH2 against Dovecot\'s oauth2 passdb and the emulator\'s token endpoint)', () => {
  const oauthArgs = (tokenFile: string) => [
    '--ca-file', join(dir, 'ca.pem'),
    '--oauth-token-url', `${emulator.url.replace(/\/+$/, '')}/token`,
    '--oauth-client-id', DEFAULT_CLIENT.clientId,
    '--oauth-client-secret-file', join(dir, 'client-secret'),
    '--refresh-token-file', tokenFile,
  ];

  it('refuses a refresh token the token endpoint does not know in one sentence, with exit 1, and leaves the account as it was', async () => {
    writeFileSync(join(dir, 'client-secret'), `${DEFAULT_CLIENT.clientSecret}\n`);
    writeFileSync(join(dir, 'bad-refresh-token'), '1//0e-not-a-token\n');
    const before = await prisma.account.findUnique({ where: { email: servers.user.address } });
    const refused = await connect(...oauthArgs(join(dir, 'bad-refresh-token')));
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^durable-inbox accounts connect: The OAuth token endpoint 127\.0\.0\.1:\d+ refused the refresh token of connect-\w+@inbox\.test \(invalid_grant: expired or revoked\); connect the account again with a new refresh token\.$/);
    const after = await prisma.account.findUnique({ where: { email: servers.user.address } });
    expect(after?.encryptedTokens).toEqual(before?.encryptedTokens);
  });

  it('refuses a token endpoint that cannot be reached, and an OAuth client it does not know, each in one sentence with exit 1, the account as it was', async () => {
    writeFileSync(join(dir, 'refresh-token'), `${refreshToken}\n`);
    writeFileSync(join(dir, 'wrong-client-secret'), 'not-the-client-secret\n');
    const before = await prisma.account.findUnique({ where: { email: servers.user.address } });
    const closed = await freePort();
    const args = oauthArgs(join(dir, 'refresh-token'));
    const unreachable = await connect(...args.map((a) => (a.endsWith('/token') ? `http://127.0.0.1:${closed}/token` : a)));
    expect(unreachable.code).toBe(1);
    expect(unreachable.out).toMatch(new RegExp(`^durable-inbox accounts connect: The OAuth token endpoint 127\\.0\\.0\\.1:${closed} could not be reached, so no access token for connect-\\w+@inbox\\.test was issued; try again later\\.$`));
    const unknownClient = await connect(...args.map((a) => (a.endsWith('client-secret') ? join(dir, 'wrong-client-secret') : a)));
    expect(unknownClient.code).toBe(1);
    expect(unknownClient.out).toMatch(/^durable-inbox accounts connect: The OAuth token endpoint 127\.0\.0\.1:\d+ refused the OAuth client \(invalid_client\): check the client id and secret\.$/);
    expect((await prisma.account.findUnique({ where: { email: servers.user.address } }))?.encryptedTokens).toEqual(before?.encryptedTokens);
  });

  it("logs in with an access token issued for the user's address, and refuses one issued for another", async () => {
    const server = { host: servers.host, port: servers.imap.implicitTlsPort, tls: 'implicit' as const, ca: servers.caPem };
    const grant = (token: string) => ({ tokenUrl: `${emulator.url.replace(/\/+$/, '')}/token`, clientId: DEFAULT_CLIENT.clientId, refreshToken: token });
    const who = { protocol: 'imap' as const, user: servers.user.address };
    const own = await refreshAccessToken(grant(refreshToken), who);
    expect((await checkImapAccount(server, { user: servers.user.address, accessToken: own.accessToken })).inbox).toBe('INBOX');
    const other = await emulator.control.createAccount({ email: `other-${run}@inbox.test` });
    const foreign = await refreshAccessToken(grant(other.refreshToken), who);
    const refused = await checkImapAccount(server, { user: servers.user.address, accessToken: foreign.accessToken }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ kind: 'bad-credentials' });
    expect((refused as Error).message).toMatch(/did not accept the access token of connect-\w+@inbox\.test \(XOAUTH2\)/);
  });

  it('connects with a refresh token; the account reads and sends with access tokens, refreshes an expired one, and needs_reauth once the grant is revoked', async () => {
    writeFileSync(join(dir, 'refresh-token'), `${refreshToken}\n`);
    const connected = await connect(...oauthArgs(join(dir, 'refresh-token')));
    expect(connected.out).toMatch(/^(Re)?[Cc]onnected connect-\w+@inbox\.test over IMAP/);
    expect(connected.code).toBe(0);
    const account = await prisma.account.findUniqueOrThrow({ where: { email: servers.user.address } });
    const stored = Buffer.from(account.encryptedTokens!);
    expect(stored.includes(Buffer.from(refreshToken))).toBe(false);
    expect(new TokenVault(tokenKey).openJson(stored)).toEqual({
      oauth: { tokenUrl: `${emulator.url.replace(/\/+$/, '')}/token`, clientId: DEFAULT_CLIENT.clientId, clientSecret: DEFAULT_CLIENT.clientSecret, refreshToken },
    });

    // As the workers reach it: mail from outside read, a reply through submission reaching Alice.
    const accounts = new ImapAccounts(prisma, new TokenVault(tokenKey));
    const alice = await ImapMailbox.open(imapMailboxSettings(servers.correspondent.address, {
      imap: { server: { host: servers.host, port: servers.imap.implicitTlsPort, tls: 'implicit', ca: servers.caPem }, user: servers.correspondent.address },
      smtp: { server: { host: servers.host, port: servers.smtp.submissionPort, tls: 'starttls', ca: servers.caPem }, user: servers.correspondent.address },
    }, { password: servers.correspondent.password }));
    const exchange = async (n: number) => {
      await deliverFromOutside(servers, { from: servers.correspondent.address, to: servers.user.address, subject: `oauth question ${n} ${run}`, text: 'Over XOAUTH2?', messageId: `<q${n}.${run}@correspondent.test>` });
      const found = await waitUntil(`question ${n} in the user's INBOX`, () => accounts.call(account.id, async (mailbox) => (await mailbox.searchMessages({ subject: `oauth question ${n} ${run}` })).messages[0]));
      const reply = [`From: ${servers.user.address}`, `To: ${servers.correspondent.address}`, `Subject: Re: oauth question ${n} ${run}`, `Message-ID: <r${n}.${run}@inbox.test>`, `In-Reply-To: <q${n}.${run}@correspondent.test>`, '', 'Yes.', ''].join('\r\n');
      await accounts.call(account.id, (mailbox) => mailbox.sendMessage(Buffer.from(reply).toString('base64url'), found.threadId));
      await waitUntil(`reply ${n} in Alice's INBOX`, async () => (await alice.searchMessages({ subject: `Re: oauth question ${n} ${run}` })).messages.length > 0);
    };
    try {
      await exchange(1);
      const refreshes = emulator.world.oauth.refreshCount;

      // Two hours later at the provider: the cached access token has expired there. A new
      // connection is refused, the token refreshed once, and the call goes through.
      await emulator.control.advanceClock(2 * 3600_000);
      await servers.kickImapUser(servers.user.address);
      await exchange(2);
      expect(emulator.world.oauth.refreshCount).toBe(refreshes + 1);
      expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status).toBe('active');

      // Two hours more, the IMAP connection kept open: the read needs no login, the SMTP submission's
      // AUTH is refused, the token refreshed once, and the submission tried again (a refused AUTH sent nothing).
      await emulator.control.advanceClock(2 * 3600_000);
      await exchange(3);
      expect(emulator.world.oauth.refreshCount).toBe(refreshes + 2);
      await waitUntil("Postfix's queue empty", async () => (await servers.queuedMessages()) === 0);
      expect(await receivedInInbox(servers, servers.correspondent, { subject: `Re: oauth question 3 ${run}`, from: servers.user.address })).toBe(1);

      // The user revokes the app's access at the provider: the next login fails, the refresh is refused.
      await emulator.control.revoke(servers.user.address);
      await servers.kickImapUser(servers.user.address);
      // (A call made before the kicked connection is seen closed fails as a dropped connection: retried, as an activity is.)
      const failure = await waitUntil('the login refused', async () => {
        const err = await accounts.call(account.id, (mailbox) => mailbox.searchMessages({ subject: 'anything' })).then(() => undefined, (e: unknown) => e);
        return err instanceof MailServerError && err.kind === 'bad-credentials' ? err : undefined;
      });
      expect((failure as MailServerError).message).toMatch(/^The OAuth token endpoint 127\.0\.0\.1:\d+ refused the refresh token of connect-\w+@inbox\.test \(invalid_grant: expired or revoked\); connect the account again with a new refresh token\.$/);
      expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status).toBe('needs_reauth');
    } finally {
      await alice.close();
      await accounts.close();
    }
  });

  it('stores the refresh token a rotating provider answers, and goes on with the stored one', async () => {
    await emulator.control.setOAuth({ rotateRefreshTokens: true });
    try {
      const given = emulator.world.oauth.issueRefreshToken(servers.user.address, DEFAULT_CLIENT.clientId);
      writeFileSync(join(dir, 'rotating-token'), given);
      const connected = await connect(...oauthArgs(join(dir, 'rotating-token')));
      expect(connected.code).toBe(0);
      const account = await prisma.account.findUniqueOrThrow({ where: { email: servers.user.address } });
      const storedToken = async () => (new TokenVault(tokenKey).openJson((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).encryptedTokens!) as { oauth: { refreshToken: string } }).oauth.refreshToken;
      const atConnect = await storedToken();
      expect(atConnect).not.toBe(given);
      expect(account.status).toBe('active');

      // Two worker processes (each its own token cache): the first refreshes with the stored token
      // (the one given no longer works) and stores the next; the second, opened after, rotates again.
      const first = new ImapAccounts(prisma, new TokenVault(tokenKey), {}, { tokens: new AccessTokenCache() });
      const second = new ImapAccounts(prisma, new TokenVault(tokenKey), {}, { tokens: new AccessTokenCache() });
      const profile = (accounts: ImapAccounts) => accounts.call(account.id, async (mailbox) => (await mailbox.getProfile()).emailAddress);
      try {
        expect(await profile(first)).toBe(servers.user.address);
        const afterFirst = await storedToken();
        expect(afterFirst).not.toBe(atConnect);
        expect(await profile(second)).toBe(servers.user.address);
        expect(await storedToken()).not.toBe(afterFirst);
        // The first's access token expires; the refresh token it holds was rotated by the second:
        // refused, read again from the row, and the call goes through.
        await emulator.control.advanceClock(2 * 3600_000);
        await servers.kickImapUser(servers.user.address);
        await waitUntil('a call of the first process after the second rotated', () => profile(first));
        expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status).toBe('active');
        expect(emulator.world.oauth.snapshot().grants.find((g) => g.refreshToken === given)?.revoked).toBe(true);
      } finally {
        await first.close();
        await second.close();
      }
    } finally {
      await emulator.control.setOAuth({ rotateRefreshTokens: false });
    }
  });
  it('a token endpoint that cannot be reached while sending: one sentence, nothing submitted and no sent copy left; the retry sends once', async () => {
    const account = await prisma.account.findUniqueOrThrow({ where: { email: servers.user.address } });
    expect(account.status).toBe('active');
    const closed = await freePort();
    let laterMs = 0;
    let endpointDown = false;
    // The worker's clock runs two hours ahead once the endpoint is down: its cached access token has expired, a new one is needed.
    const accounts = new ImapAccounts(prisma, new TokenVault(tokenKey), {}, {
      tokens: new AccessTokenCache(),
      oauth: { now: () => Date.now() + laterMs, fetch: (url, init) => fetch(endpointDown ? `http://127.0.0.1:${closed}/token` : url, init) },
    });
    const subject = `oauth question 4 ${run}`;
    try {
      await deliverFromOutside(servers, { from: servers.correspondent.address, to: servers.user.address, subject, text: 'And now?', messageId: `<q4.${run}@correspondent.test>` });
      const found = await waitUntil('question 4 in the INBOX', () => accounts.call(account.id, async (mailbox) => (await mailbox.searchMessages({ subject })).messages[0]));
      const reply = Buffer.from([`From: ${servers.user.address}`, `To: ${servers.correspondent.address}`, `Subject: Re: ${subject}`, `Message-ID: <r4.${run}@inbox.test>`, `In-Reply-To: <q4.${run}@correspondent.test>`, '', 'Yes.', ''].join('\r\n')).toString('base64url');
      laterMs = 2 * 3600_000;
      endpointDown = true;
      const failure = await accounts.call(account.id, (mailbox) => mailbox.sendMessage(reply, found.threadId)).then(() => undefined, (err: unknown) => err);
      expect(failure).toBeInstanceOf(MailServerError);
      expect(failure).toMatchObject({ kind: 'unreachable', retryable: true });
      // (The sentence names the endpoint the account stores; this fetch sends its requests to a closed port.)
      expect((failure as Error).message).toBe(`The OAuth token endpoint ${new URL(emulator.url).host} could not be reached, so no access token for ${servers.user.address} was issued; try again later.`);
      // Nothing was submitted: the copy filed first is taken back, so the retry is not taken for a send in doubt.
      expect((await accounts.call(account.id, (mailbox) => mailbox.searchMessages({ subject: `Re: ${subject}`, in: 'SENT' }))).messages).toEqual([]);
      expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status).toBe('active');

      endpointDown = false;
      await accounts.call(account.id, (mailbox) => mailbox.sendMessage(reply, found.threadId));
      await waitUntil("Alice's reply 4 delivered", async () => (await receivedInInbox(servers, servers.correspondent, { subject: `Re: ${subject}`, from: servers.user.address })) > 0);
      await waitUntil("Postfix's queue empty", async () => (await servers.queuedMessages()) === 0);
      expect(await receivedInInbox(servers, servers.correspondent, { subject: `Re: ${subject}`, from: servers.user.address })).toBe(1);
    } finally {
      await accounts.close();
    }
  });

  it('an OAuth client the token endpoint no longer knows (its secret changed): the account needs_reauth with the sentence', async () => {
    const vault = new TokenVault(tokenKey);
    const account = await prisma.account.findUniqueOrThrow({ where: { email: servers.user.address } });
    const stored = vault.openJson(account.encryptedTokens!) as { oauth: Record<string, string> };
    // The client secret was rotated in the provider's console; the stored one is the old one.
    await prisma.account.update({ where: { id: account.id }, data: { encryptedTokens: vault.sealJson({ oauth: { ...stored.oauth, clientSecret: 'an-old-client-secret' } }) } });
    const accounts = new ImapAccounts(prisma, vault, {}, { tokens: new AccessTokenCache() });
    try {
      const failure = await accounts.call(account.id, (mailbox) => mailbox.getProfile()).then(() => undefined, (err: unknown) => err);
      expect(failure).toMatchObject({ kind: 'bad-credentials', code: 'invalid_client' });
      expect((failure as Error).message).toMatch(/^The OAuth token endpoint 127\.0\.0\.1:\d+ refused the OAuth client \(invalid_client\): check the client id and secret\.$/);
      expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status).toBe('needs_reauth');
    } finally {
      await accounts.close();
      // Connected again with the right client (as `accounts connect` would store it), for the next test.
      await prisma.account.update({ where: { id: account.id }, data: { encryptedTokens: account.encryptedTokens, status: 'active' } });
    }
  });

  it('the IDLE watch turns the account needs_reauth when the grant is revoked, with the sentence, and stops watching it', async () => {
    const account = await prisma.account.findUniqueOrThrow({ where: { email: servers.user.address } });
    expect(account.status).toBe('active');
    const logged: string[] = [];
    const stderr = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void logged.push(String(line)));
    const watch = startImapWatch({ prisma, vault: new TokenVault(tokenKey), notify: async () => {}, accountIds: [account.id], refreshMs: 100 });
    try {
      await waitUntil('the account watched', async () => watch.watching().includes(account.id));
      // The user revokes the app's access at the provider; the server drops the IDLE connection.
      await emulator.control.revoke(servers.user.address);
      expect(await servers.kickImapUser(servers.user.address)).toBeGreaterThan(0);
      await waitUntil('the account needs_reauth', async () => (await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).status === 'needs_reauth');
      await waitUntil('the watcher gone', async () => watch.watched().length === 0);
      const sentence = logged.filter((line) => line.includes(`account ${account.id} needs to be reconnected`));
      expect(sentence).toHaveLength(1);
      // `accounts list` says what to do, for an IMAP account (not Google's consent).
      const listed = await cli('list');
      expect(listed.out).toContain(`${servers.user.address} needs_reauth: its mail server or OAuth provider refused the login (a changed password, a revoked grant); its sync is paused. Reconnect: npm run cli -- accounts connect --imap --email ${servers.user.address}`);
      expect(sentence[0]).toMatch(/needs to be reconnected: The OAuth token endpoint 127\.0\.0\.1:\d+ refused the refresh token of connect-\w+@inbox\.test \(invalid_grant: expired or revoked\); connect the account again with a new refresh token\.$/);
    } finally {
      stderr.mockRestore();
      await watch.close();
    }
  });
});
