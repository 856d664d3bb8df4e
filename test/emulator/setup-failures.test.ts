// The emulator's Cloud project set-up failures (docs/gmail-setup.md), as the official clients see
// them: the Gmail API disabled, a topic Gmail may not publish to, an app in Testing whose refresh
// tokens die after 7 days, and a consent screen on which the user left a scope unticked.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { projectNumberOf } from '../../emulators/gmail/oauth.js';
import { connect, failure, gmailClient, oauthClientFor, startEmulator, startRedirectReceiver } from '../helpers/googleapis-clients.js';

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';
const READONLY = 'https://www.googleapis.com/auth/gmail.readonly';
const DAY = 24 * 3600_000;

let emu: RunningGmailEmulator;

beforeAll(async () => {
  emu = await startEmulator();
});

afterAll(async () => {
  await emu.close();
});

afterEach(async () => {
  await emu.control.setFaults({ gmailApiDisabled: [], topicsWithoutPublisher: [] });
  await emu.control.setOAuth({ declineScopes: [] });
});

describe('the Gmail API disabled in the client’s project', () => {
  it('answers every Gmail call 403 accessNotConfigured with the project and the activation link; the token refresh still works', async () => {
    const { account, auth, gmail } = await connect(emu, 'disabled-api@example.com');
    await emu.control.setFaults({ gmailApiDisabled: [account.clientId] });
    const project = projectNumberOf(account.clientId);
    const activationUrl = `https://console.developers.google.com/apis/api/gmail.googleapis.com/overview?project=${project}`;

    const err = await failure(gmail.users.getProfile({ userId: 'me' }));
    expect(err.status).toBe(403);
    expect(err.data.error).toMatchObject({
      code: 403,
      status: 'PERMISSION_DENIED',
      message: `Gmail API has not been used in project ${project} before or it is disabled. Enable it by visiting ${activationUrl} then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.`,
      errors: [{ domain: 'usageLimits', reason: 'accessNotConfigured', extendedHelp: 'https://console.developers.google.com' }],
      details: expect.arrayContaining([
        expect.objectContaining({
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'SERVICE_DISABLED',
          metadata: expect.objectContaining({ consumer: `projects/${project}`, service: 'gmail.googleapis.com', activationUrl }),
        }),
      ]),
    });
    // OAuth is not the Gmail API: the refresh that preceded the call succeeded.
    expect(auth.credentials.access_token).toMatch(/^ya29\./);
    expect((await failure(gmail.users.labels.list({ userId: 'me' }))).status).toBe(403);

    await emu.control.setFaults({ gmailApiDisabled: [] });
    expect((await gmail.users.getProfile({ userId: 'me' })).data.emailAddress).toBe('disabled-api@example.com');
  });

  it('takes the project number from a Google-style client id', () => {
    expect(projectNumberOf('123456789012-abcdefg.apps.googleusercontent.com')).toBe('123456789012');
    expect(projectNumberOf('durable-inbox-emulator.apps.googleusercontent.com')).toMatch(/^\d{12}$/);
  });
});

describe('a topic without gmail-api-push@system.gserviceaccount.com as publisher', () => {
  it('refuses users.watch with 403 forbidden and watches nothing', async () => {
    const topic = 'projects/durable-inbox-test/topics/no-publisher';
    const { gmail } = await connect(emu, 'no-publisher@example.com');
    await emu.control.setFaults({ topicsWithoutPublisher: [topic] });

    const err = await failure(gmail.users.watch({ userId: 'me', requestBody: { topicName: topic } }));
    expect(err.status).toBe(403);
    expect(err.data.error).toMatchObject({
      code: 403,
      status: 'PERMISSION_DENIED',
      message: `Error sending test message to Cloud PubSub ${topic} : User not authorized to perform this action.`,
      errors: [{ domain: 'global', reason: 'forbidden' }],
    });
    expect((await emu.control.getState('no-publisher@example.com')).watch).toBeNull();

    // Another topic of the project is unaffected; a malformed name is still the 400 it was.
    const other = await gmail.users.watch({ userId: 'me', requestBody: { topicName: 'projects/durable-inbox-test/topics/granted' } });
    expect(other.data.expiration).toMatch(/^\d+$/);
    expect((await failure(gmail.users.watch({ userId: 'me', requestBody: { topicName: 'no-publisher' } }))).status).toBe(400);
  });
});

describe('an OAuth app in Testing', () => {
  it('issues refresh tokens that answer invalid_grant 7 days later; profile-only grants and published apps keep theirs', async () => {
    const testing = { clientId: '424242424242-testing.apps.googleusercontent.com', clientSecret: 'testing-secret', publishingStatus: 'testing' as const };
    const published = { clientId: '535353535353-published.apps.googleusercontent.com', clientSecret: 'published-secret', publishingStatus: 'production' as const };
    await emu.control.registerClient(testing);
    await emu.control.registerClient(published);
    const gmailGrant = await emu.control.createAccount({ email: 'testing-app@example.com', clientId: testing.clientId, scopes: [MODIFY] });
    const profileGrant = await emu.control.createAccount({ email: 'testing-app@example.com', clientId: testing.clientId, scopes: ['openid', 'email'] });
    const publishedGrant = await emu.control.createAccount({ email: 'testing-app@example.com', clientId: published.clientId, scopes: [MODIFY] });
    const refresh = (client: { clientId: string; clientSecret: string }, refreshToken: string) => {
      const auth = oauthClientFor(emu, client);
      auth.setCredentials({ refresh_token: refreshToken });
      return auth.getAccessToken();
    };

    await emu.control.advanceClock(6 * DAY);
    expect((await refresh(testing, gmailGrant.refreshToken)).token).toMatch(/^ya29\./);

    await emu.control.advanceClock(DAY);
    const err = await failure(refresh(testing, gmailGrant.refreshToken));
    expect(err.status).toBe(400);
    expect(err.data).toEqual({ error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
    expect((await refresh(testing, profileGrant.refreshToken)).token).toMatch(/^ya29\./);
    expect((await refresh(published, publishedGrant.refreshToken)).token).toMatch(/^ya29\./);

    // Publishing the app does not revive the dead token; a new consent gives one that lives.
    await emu.control.registerClient({ ...testing, publishingStatus: 'production' });
    expect((await failure(refresh(testing, gmailGrant.refreshToken))).status).toBe(400);
    const again = await emu.control.createAccount({ email: 'testing-app@example.com', clientId: testing.clientId, scopes: [MODIFY] });
    await emu.control.advanceClock(30 * DAY);
    expect((await refresh(testing, again.refreshToken)).token).toMatch(/^ya29\./);
  });
});

describe('a scope left unticked on the consent screen', () => {
  let receiver: Awaited<ReturnType<typeof startRedirectReceiver>>;
  let redirectUri: string;
  let received: URLSearchParams[];

  beforeAll(async () => {
    receiver = await startRedirectReceiver();
    ({ redirectUri, received } = receiver);
  });

  afterAll(async () => {
    await receiver.close();
  });

  it('grants the other scopes: the redirect and the token response list what was granted, and a call that needs the missing one is 403', async () => {
    await emu.control.setOAuth({ declineScopes: [MODIFY] });
    const { defaultClient } = await emu.control.info();
    const auth = oauthClientFor(emu, defaultClient);
    const url = auth.generateAuthUrl({ access_type: 'offline', scope: [READONLY, MODIFY], login_hint: 'unticked@example.com', redirect_uri: redirectUri });
    await fetch(url);
    const params = received[received.length - 1];
    expect(params?.get('scope')).toBe(READONLY);

    const { tokens } = await auth.getToken({ code: params?.get('code') ?? '', redirect_uri: redirectUri });
    expect(tokens.scope).toBe(READONLY);
    auth.setCredentials({ refresh_token: tokens.refresh_token ?? '' });
    await auth.getAccessToken();
    expect(auth.credentials.scope).toBe(READONLY);

    const gmail = gmailClient(emu, auth);
    const m = await emu.control.deliver('unticked@example.com', { from: 'a@example.com', subject: 's', text: 't' });
    expect((await gmail.users.messages.get({ userId: 'me', id: m.id })).status).toBe(200);
    const err = await failure(gmail.users.messages.modify({ userId: 'me', id: m.id, requestBody: { addLabelIds: ['STARRED'] } }));
    expect(err.status).toBe(403);
    expect(err.data.error).toMatchObject({ message: 'Request had insufficient authentication scopes.', errors: [{ reason: 'insufficientPermissions' }] });
  });
});
