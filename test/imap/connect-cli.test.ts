// `npm run cli -- accounts connect --imap` against a real Dovecot and Postfix and the test database:
// the account stored with its servers and its password sealed (never in clear), the sync started;
// a wrong password, a certificate nobody vouched for and a closed port each one sentence and exit 1.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runAccountsCli } from '../../src/cli/accounts.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { cliRunner } from '../helpers/run-cli.js';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';

const run = randomUUID().slice(0, 8);
const tokenKey = randomBytes(32);
const taskQueue = `connect-imap-${run}`;
let servers: MailServers;
let prisma: PrismaClient;
let dir: string;
let connection: Connection;
const cli = cliRunner(runAccountsCli, {
  TOKEN_ENCRYPTION_KEY: tokenKey.toString('base64'),
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_TASK_QUEUE: taskQueue,
});

beforeAll(async () => {
  servers = await startMailServers({ user: { address: `connect-${run}@inbox.test`, password: 'the-app-password' } });
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
