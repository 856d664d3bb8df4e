// `accounts doctor` and the checks inside `accounts connect`, against the Gmail emulator over HTTP
// through the official clients (google-auth-library's refresh, googleapis' Gmail calls) and the
// accounts in the real PostgreSQL: each set-up failure the emulator plays gets its one sentence and
// what to do, the account that is set up right gets none, and the CLI prints them and exits 1.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { projectNumberOf } from '../../emulators/gmail/oauth.js';
import { GMAIL_SCOPES } from '../../src/accounts/gmail-consent.js';
import { diagnoseGmailAccount, GmailSetupError, type DoctorFinding, type GmailDoctorSettings } from '../../src/accounts/gmail-doctor.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { connectCommand, runAccountsCli } from '../../src/cli/accounts.js';
import { loadConfig } from '../../src/config/env.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { cliRunner } from '../helpers/run-cli.js';

const TOPIC = 'projects/durable-inbox-doctor/topics/gmail';
const PUBLIC_BASE_URL = 'https://inbox.example.com';
const READONLY = 'https://www.googleapis.com/auth/gmail.readonly';
const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';
const COMPOSE = 'https://www.googleapis.com/auth/gmail.compose';
const HOUR = 3600_000;
const DAY = 24 * HOUR;

const tokenKey = randomBytes(32);
const vault = new TokenVault(tokenKey);
let emu: RunningGmailEmulator;
let prisma: PrismaClient;
let client: { clientId: string; clientSecret: string };
const accountIds: string[] = [];

beforeAll(async () => {
  emu = await startGmailEmulator({ port: 0, quota: false });
  client = (await emu.control.info()).defaultClient;
  prisma = createPrismaClient(inject('databaseUrl'));
});

afterEach(async () => {
  await emu.control.setFaults({ gmailApiDisabled: [], topicsWithoutPublisher: [] });
  await emu.control.setOAuth({ declineScopes: [] });
});

afterAll(async () => {
  await prisma?.account.deleteMany({ where: { id: { in: accountIds } } });
  await prisma?.$disconnect();
  await emu?.close();
});

function settings(overrides: Partial<GmailDoctorSettings> = {}, oauthClient = client): GmailDoctorSettings {
  return {
    oauth: { clientId: oauthClient.clientId, clientSecret: oauthClient.clientSecret, tokenUrl: `${emu.url}/token`, rootUrl: `${emu.url}/` },
    push: { topic: TOPIC, served: true, endpoint: `${PUBLIC_BASE_URL}/gmail/push` },
    pollEveryMs: 15 * 60_000,
    ...overrides,
  };
}

/** A mailbox in the emulator, granted to the client, and its account row as `accounts connect` leaves it. */
async function storedAccount(
  name: string,
  opts: { scopes?: string[]; clientId?: string; connectedAt?: Date; lastHistoryAt?: Date } = {},
): Promise<{ id: string; email: string }> {
  const email = `doctor-${name}-${randomUUID().slice(0, 8)}@example.com`;
  const created = await emu.control.createAccount({ email, scopes: opts.scopes ?? GMAIL_SCOPES, ...(opts.clientId ? { clientId: opts.clientId } : {}) });
  const row = await prisma.account.create({
    data: {
      email,
      encryptedTokens: vault.seal({ refresh_token: created.refreshToken }),
      historyId: created.historyId,
      ...(opts.connectedAt ? { connectedAt: opts.connectedAt } : {}),
      ...(opts.lastHistoryAt ? { lastHistoryAt: opts.lastHistoryAt } : {}),
    },
  });
  accountIds.push(row.id);
  return { id: row.id, email };
}

async function diagnose(accountId: string, s: GmailDoctorSettings = settings()): Promise<Record<DoctorFinding['check'], DoctorFinding>> {
  const report = await diagnoseGmailAccount({ prisma, vault, settings: s }, accountId);
  expect(report.findings.map((f) => f.check)).toEqual(['grant', 'scopes', 'gmail_api', 'push_topic', 'push_endpoint']);
  return Object.fromEntries(report.findings.map((f) => [f.check, f])) as Record<DoctorFinding['check'], DoctorFinding>;
}

const statuses = (findings: Record<string, DoctorFinding>) => Object.fromEntries(Object.entries(findings).map(([check, f]) => [check, f.status]));

describe('accounts doctor', () => {
  it('finds nothing wrong with an account that is set up right, and renews its watch', async () => {
    const { id, email } = await storedAccount('good');
    const found = await diagnose(id);
    expect(statuses(found)).toEqual({ grant: 'ok', scopes: 'ok', gmail_api: 'ok', push_topic: 'ok', push_endpoint: 'ok' });
    expect(found.grant.found).toBe(`Google refreshes the grant of ${email} (connected 0 hours ago).`);
    expect(found.scopes.found).toBe('The grant includes every scope the assistant needs (gmail.readonly, gmail.modify, gmail.compose).');
    expect(found.gmail_api.found).toBe(`The Gmail API answers for ${email} (0 messages).`);
    expect(found.push_endpoint.found).toBe(`Pub/Sub can push to ${PUBLIC_BASE_URL}/gmail/push (last push none yet).`);
    expect(Object.values(found).every((f) => f.todo === undefined)).toBe(true);
    const watch = (await emu.control.getState(email)).watch;
    expect(watch?.topicName).toBe(TOPIC);
    const row = await prisma.account.findUniqueOrThrow({ where: { id } });
    expect(row.watchExpiration?.getTime()).toBe(watch?.expiration);
    expect(found.push_topic.found).toBe(`Gmail publishes ${email}'s changes to ${TOPIC} (watch renewed until ${row.watchExpiration!.toISOString()}).`);
  });

  it('names the Gmail API not enabled in the project (403 accessNotConfigured) and where to enable it', async () => {
    const { id, email } = await storedAccount('api-off');
    await emu.control.setFaults({ gmailApiDisabled: [client.clientId] });
    const project = projectNumberOf(client.clientId);
    const found = await diagnose(id);
    expect(statuses(found)).toEqual({ grant: 'ok', scopes: 'ok', gmail_api: 'problem', push_topic: 'skipped', push_endpoint: 'ok' });
    expect(found.gmail_api).toEqual({
      check: 'gmail_api',
      status: 'problem',
      found: `The Gmail API is not enabled in Google Cloud project ${project} (403 accessNotConfigured), so every Gmail call for ${email} is refused.`,
      todo: `Enable it at https://console.developers.google.com/apis/api/gmail.googleapis.com/overview?project=${project}, wait a few minutes, and run accounts doctor again.`,
    });
    expect(found.push_topic.found).toBe('Not checked: the Gmail API does not answer.');
  });

  it('names a scope the grant lacks', async () => {
    const { id, email } = await storedAccount('scope', { scopes: [READONLY, COMPOSE] });
    const found = await diagnose(id);
    expect(statuses(found)).toEqual({ grant: 'ok', scopes: 'problem', gmail_api: 'ok', push_topic: 'ok', push_endpoint: 'ok' });
    expect(found.scopes).toEqual({
      check: 'scopes',
      status: 'problem',
      found: `${email}'s grant lacks gmail.modify (left unticked on Google's consent screen), so Gmail refuses the calls that need it (403 insufficientPermissions).`,
      todo: `Connect again and leave every box ticked on Google's consent screen: npm run cli -- accounts connect --login-hint ${email}.`,
    });
  });

  it('names a topic without gmail-api-push@system.gserviceaccount.com as publisher, and the command that grants it', async () => {
    const { id, email } = await storedAccount('publisher');
    await emu.control.setFaults({ topicsWithoutPublisher: [TOPIC] });
    const found = await diagnose(id);
    expect(statuses(found)).toEqual({ grant: 'ok', scopes: 'ok', gmail_api: 'ok', push_topic: 'problem', push_endpoint: 'ok' });
    expect(found.push_topic).toEqual({
      check: 'push_topic',
      status: 'problem',
      found: `Gmail may not publish to ${TOPIC}: gmail-api-push@system.gserviceaccount.com is not a Publisher on it (users.watch 403 "User not authorized to perform this action.").`,
      todo: `Grant it: gcloud pubsub topics add-iam-policy-binding ${TOPIC} --member=serviceAccount:gmail-api-push@system.gserviceaccount.com --role=roles/pubsub.publisher`,
    });
    expect((await emu.control.getState(email)).watch).toBeNull();
    expect((await prisma.account.findUniqueOrThrow({ where: { id } })).watchExpiration).toBeNull();
  });

  it('says the fallback poll carries the sync, and its delay, when there is no public push endpoint', async () => {
    const { id } = await storedAccount('no-push');
    const noTopic = await diagnose(id, settings({ push: undefined }));
    expect(statuses(noTopic)).toEqual({ grant: 'ok', scopes: 'ok', gmail_api: 'ok', push_topic: 'skipped', push_endpoint: 'note' });
    expect(noTopic.push_endpoint.found).toBe(
      'No Gmail push (GMAIL_PUSH_TOPIC unset), so the fallback poll every 15 minutes carries the sync and new mail waits up to 15 minutes.',
    );

    const loopback = await diagnose(id, settings({ push: { topic: TOPIC, served: true, endpoint: 'http://127.0.0.1:3000/gmail/push' }, pollEveryMs: 5 * 60_000 }));
    expect(loopback.push_endpoint).toEqual({
      check: 'push_endpoint',
      status: 'problem',
      found:
        'Pub/Sub cannot push to http://127.0.0.1:3000/gmail/push: it is a loopback address, so the fallback poll every 5 minutes carries the sync and new mail waits up to 5 minutes.',
      todo: 'Serve the app at a public HTTPS address (a reverse proxy or a tunnel), set PUBLIC_BASE_URL to it and point the push subscription at PUBLIC_BASE_URL/gmail/push.',
    });

    const unset = await diagnose(id, settings({ push: { topic: TOPIC, served: true } }));
    expect(unset.push_endpoint.found).toBe(
      'Pub/Sub cannot push to this app: PUBLIC_BASE_URL is unset (the app is only on its loopback address), so the fallback poll every 15 minutes carries the sync and new mail waits up to 15 minutes.',
    );
    const plainHttp = await diagnose(id, settings({ push: { topic: TOPIC, served: true, endpoint: 'http://inbox.example.com/gmail/push' } }));
    expect(plainHttp.push_endpoint.found).toMatch(/^Pub\/Sub cannot push to http:\/\/inbox\.example\.com\/gmail\/push: Pub\/Sub pushes only to HTTPS addresses, /);
    const notServed = await diagnose(id, settings({ push: { topic: TOPIC, served: false, endpoint: `${PUBLIC_BASE_URL}/gmail/push` } }));
    expect(notServed.push_endpoint.found).toBe(
      `Gmail publishes to ${TOPIC}, but this app serves no POST /gmail/push (PUSH_AUDIENCE or PUSH_SERVICE_ACCOUNT_EMAIL unset), so the fallback poll every 15 minutes carries the sync and new mail waits up to 15 minutes.`,
    );
  });

  it('notices pushes that do not arrive while the poll finds mail', async () => {
    const { id, email } = await storedAccount('silent');
    const lastPushAt = new Date(Date.now() - 2 * HOUR);
    const lastHistoryAt = new Date(Date.now() - 60_000);
    await prisma.account.update({ where: { id }, data: { lastPushAt, lastHistoryAt } });
    const found = await diagnose(id);
    expect(found.push_endpoint).toEqual({
      check: 'push_endpoint',
      status: 'problem',
      found: `Mail reached ${email} (last change ${lastHistoryAt.toISOString()}) but no push has arrived since ${lastPushAt.toISOString()}, so the fallback poll every 15 minutes carries the sync and new mail waits up to 15 minutes.`,
      todo: `Check that the push subscription of ${TOPIC} points at ${PUBLIC_BASE_URL}/gmail/push with the audience PUSH_AUDIENCE names (gcloud pubsub subscriptions describe <subscription>).`,
    });
  });

  it('tells a grant revoked days after the connect from an app in Testing, whose refresh tokens Google expires after 7 days', async () => {
    const testing = { clientId: '246813579024-testing.apps.googleusercontent.com', clientSecret: 'testing-secret' };
    await emu.control.registerClient({ ...testing, publishingStatus: 'testing' });
    const weekOld = await storedAccount('testing', { clientId: testing.clientId, connectedAt: new Date(Date.now() - 7 * DAY - HOUR) });
    // Connected with the same client two days ago, then the user removed the app's access.
    const revoked = await storedAccount('revoked', { clientId: testing.clientId, connectedAt: new Date(Date.now() - 2 * DAY) });
    await emu.control.revoke(revoked.email);
    // A month old and working until yesterday, then revoked: not the 7-day expiry either.
    const old = await storedAccount('old', { clientId: testing.clientId, connectedAt: new Date(Date.now() - 30 * DAY), lastHistoryAt: new Date(Date.now() - DAY) });
    await emu.control.revoke(old.email);
    // A week passes at Google too.
    await emu.control.advanceClock(7 * DAY + HOUR);

    const expired = await diagnose(weekOld.id, settings({}, testing));
    expect(statuses(expired)).toEqual({ grant: 'problem', scopes: 'skipped', gmail_api: 'skipped', push_topic: 'skipped', push_endpoint: 'ok' });
    expect(expired.grant).toEqual({
      check: 'grant',
      status: 'problem',
      found: `Google refused ${weekOld.email}'s grant (invalid_grant) 7.0 days after it was connected: the OAuth app is in Testing, where Google expires refresh tokens 7 days after the consent.`,
      todo: `Publish the app (Google Auth Platform → Audience → Publish app: In production; unverified is fine for your own accounts), then connect again: npm run cli -- accounts connect --login-hint ${weekOld.email}.`,
    });
    expect(expired.scopes.found).toBe('Not checked: Google refused the grant.');

    const early = await diagnose(revoked.id, settings({}, testing));
    expect(early.grant).toEqual({
      check: 'grant',
      status: 'problem',
      found: `Google refused ${revoked.email}'s grant (invalid_grant: Token has been expired or revoked.) 2.0 days after it was connected: the app's access was removed in the Google Account, its password changed, or a newer grant replaced it.`,
      todo: `Connect it again: npm run cli -- accounts connect --login-hint ${revoked.email}.`,
    });
    expect((await diagnose(old.id, settings({}, testing))).grant.found).toMatch(/\(invalid_grant: Token has been expired or revoked\.\) 30 days after it was connected: the app's access was removed/);
  });

  it('names a disconnected account, which has no grant to check', async () => {
    const { id, email } = await storedAccount('gone');
    await prisma.account.update({ where: { id }, data: { status: 'disconnected', encryptedTokens: null } });
    const found = await diagnose(id);
    expect(found.grant).toEqual({
      check: 'grant',
      status: 'problem',
      found: `${email} is disconnected: there is no grant to check.`,
      todo: `Connect it: npm run cli -- accounts connect --login-hint ${email}.`,
    });
    expect(statuses(found)).toMatchObject({ scopes: 'skipped', gmail_api: 'skipped', push_topic: 'skipped' });
  });
});

describe('npm run cli -- accounts doctor', () => {
  const env = () => ({
    GOOGLE_CLIENT_ID: client.clientId,
    GOOGLE_CLIENT_SECRET: client.clientSecret,
    GOOGLE_OAUTH_TOKEN_URL: `${emu.url}/token`,
    GMAIL_API_ROOT_URL: `${emu.url}/`,
    TOKEN_ENCRYPTION_KEY: tokenKey.toString('base64'),
    GMAIL_PUSH_TOPIC: TOPIC,
    PUSH_AUDIENCE: `${PUBLIC_BASE_URL}/gmail/push`,
    PUSH_SERVICE_ACCOUNT_EMAIL: 'push@durable-inbox-doctor.iam.gserviceaccount.com',
    PUBLIC_BASE_URL,
  });

  it('prints one sentence per problem and what to do, and exits 1; 0 when all is well; 2 for an unknown account', async () => {
    const { id, email } = await storedAccount('cli');
    const cli = cliRunner(runAccountsCli, env());
    const good = await cli('doctor', email.toUpperCase());
    expect(good.code).toBe(0);
    expect(good.out.split('\n').at(-1)).toBe('No problems found.');

    await emu.control.setFaults({ gmailApiDisabled: [client.clientId] });
    const project = projectNumberOf(client.clientId);
    const bad = await cli('doctor', id);
    expect(bad.code).toBe(1);
    expect(bad.out).toBe(
      [
        `Gmail set-up of ${email} (account ${id}):`,
        `  ok       OAuth grant    Google refreshes the grant of ${email} (connected 0 hours ago).`,
        '  ok       scopes         The grant includes every scope the assistant needs (gmail.readonly, gmail.modify, gmail.compose).',
        `  PROBLEM  Gmail API      The Gmail API is not enabled in Google Cloud project ${project} (403 accessNotConfigured), so every Gmail call for ${email} is refused.`,
        `                          → Enable it at https://console.developers.google.com/apis/api/gmail.googleapis.com/overview?project=${project}, wait a few minutes, and run accounts doctor again.`,
        '  skipped  push topic     Not checked: the Gmail API does not answer.',
        `  ok       push endpoint  Pub/Sub can push to ${PUBLIC_BASE_URL}/gmail/push (last push none yet).`,
        '1 problem found; docs/gmail-setup.md walks the set-up step by step.',
      ].join('\n'),
    );

    const unknown = await cli('doctor', 'nobody@example.com');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toMatch(/^durable-inbox accounts: no account nobody@example\.com/);
  });
});

describe('accounts connect', () => {
  const connect = async (loginHint: string, env: Record<string, string> = {}) => {
    const cfg = loadConfig({
      ...env,
      DATABASE_URL: inject('databaseUrl'),
      LOG_LEVEL: 'warn',
      GOOGLE_CLIENT_ID: client.clientId,
      GOOGLE_CLIENT_SECRET: client.clientSecret,
      GOOGLE_OAUTH_AUTH_URL: `${emu.url}/o/oauth2/v2/auth`,
      GOOGLE_OAUTH_TOKEN_URL: `${emu.url}/token`,
      GMAIL_API_ROOT_URL: `${emu.url}/`,
      TOKEN_ENCRYPTION_KEY: tokenKey.toString('base64'),
    });
    // The emulator's consent screen answers at once and redirects to the CLI's loopback server.
    return connectCommand({ cfg, prisma }, { out: () => {}, openUrl: async (url) => void (await fetch(url)) }, loginHint);
  };
  const setupError = async (run: Promise<unknown>): Promise<DoctorFinding> => {
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GmailSetupError);
    return (err as GmailSetupError).finding;
  };

  it('refuses a grant with a scope left unticked on the consent screen, before storing anything', async () => {
    const email = `doctor-unticked-${randomUUID().slice(0, 8)}@example.com`;
    await emu.control.setOAuth({ declineScopes: [MODIFY] });
    expect(await setupError(connect(email))).toEqual({
      check: 'scopes',
      status: 'problem',
      found: `${email}'s grant lacks gmail.modify (left unticked on Google's consent screen), so Gmail refuses the calls that need it (403 insufficientPermissions).`,
      todo: `Connect again and leave every box ticked on Google's consent screen: npm run cli -- accounts connect --login-hint ${email}.`,
    });
    expect(await prisma.account.findUnique({ where: { email } })).toBeNull();
  });

  it('explains the Gmail API not enabled instead of failing with Google’s raw 403', async () => {
    const email = `doctor-connect-api-${randomUUID().slice(0, 8)}@example.com`;
    await emu.control.setFaults({ gmailApiDisabled: [client.clientId] });
    const finding = await setupError(connect(email));
    expect(finding.check).toBe('gmail_api');
    expect(finding.found).toBe(
      `The Gmail API is not enabled in Google Cloud project ${projectNumberOf(client.clientId)} (403 accessNotConfigured), so every Gmail call for ${email} is refused.`,
    );
    expect(await prisma.account.findUnique({ where: { email } })).toBeNull();
  });

  it('explains a topic Gmail may not publish to; the account is connected, without a watch', async () => {
    const email = `doctor-connect-topic-${randomUUID().slice(0, 8)}@example.com`;
    await emu.control.setFaults({ topicsWithoutPublisher: [TOPIC] });
    const finding = await setupError(connect(email, { GMAIL_PUSH_TOPIC: TOPIC }));
    const row = await prisma.account.findUnique({ where: { email } });
    if (row) accountIds.push(row.id);
    expect(finding).toEqual({
      check: 'push_topic',
      status: 'problem',
      found: `Gmail may not publish to ${TOPIC}: gmail-api-push@system.gserviceaccount.com is not a Publisher on it (users.watch 403 "User not authorized to perform this action.").`,
      todo: `Grant it: gcloud pubsub topics add-iam-policy-binding ${TOPIC} --member=serviceAccount:gmail-api-push@system.gserviceaccount.com --role=roles/pubsub.publisher`,
    });
    expect(row).toMatchObject({ status: 'active', watchExpiration: null });
  });
});
