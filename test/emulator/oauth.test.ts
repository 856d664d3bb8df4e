// OAuth contract tests: google-auth-library's refresh flow against the emulated token endpoint,
// invalid_grant after revocation, 401 for bad tokens, scopes, and the loopback consent flow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, failure, gmailClient, oauthClientFor, startEmulator, startRedirectReceiver } from '../helpers/googleapis-clients.js';

let emu: RunningGmailEmulator;

beforeAll(async () => {
  emu = await startEmulator();
});

afterAll(async () => {
  await emu.close();
});

describe('token endpoint', () => {
  it('refreshes access tokens through OAuth2Client and emits tokens', async () => {
    const { auth, gmail } = await connect(emu, 'refresh@example.com');
    const seen: string[] = [];
    auth.on('tokens', (t) => seen.push(t.access_token ?? ''));
    const before = (await emu.control.metrics()).oauth.refreshes;
    await gmail.users.getProfile({ userId: 'me' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^ya29\./);
    expect(auth.credentials.expiry_date).toBeGreaterThan(Date.now() + 3000 * 1000);
    await gmail.users.getProfile({ userId: 'me' }); // token still valid: no refresh
    expect((await emu.control.metrics()).oauth.refreshes).toBe(before + 1);
  });

  it('refreshes again when the access token is about to expire', async () => {
    await emu.control.setOAuth({ accessTokenTtlSeconds: 60 }); // inside the library's 5-minute eager window
    try {
      const { gmail } = await connect(emu, 'short@example.com');
      const before = (await emu.control.metrics()).oauth.refreshes;
      await gmail.users.getProfile({ userId: 'me' });
      await gmail.users.getProfile({ userId: 'me' });
      expect((await emu.control.metrics()).oauth.refreshes).toBe(before + 2);
    } finally {
      await emu.control.setOAuth({ accessTokenTtlSeconds: 3599 });
    }
  });

  it('answers 401 once an access token has expired', async () => {
    const { auth, gmail } = await connect(emu, 'expiring@example.com');
    await gmail.users.getProfile({ userId: 'me' });
    const stale = oauthClientFor(emu, (await emu.control.info()).defaultClient);
    // The client believes the token is still good; the server's clock says otherwise.
    stale.setCredentials({ access_token: auth.credentials.access_token ?? '', expiry_date: Date.now() + 3_600_000 });
    await emu.control.advanceClock(3600 * 1000);
    const err = await failure(gmailClient(emu, stale).users.getProfile({ userId: 'me' }));
    expect(err.status).toBe(401);
    expect(err.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('answers invalid_grant for a revoked grant and 401 for its old access token', async () => {
    const { auth, gmail } = await connect(emu, 'revoked@example.com');
    await gmail.users.getProfile({ userId: 'me' });
    const oldAccessToken = auth.credentials.access_token ?? '';
    await emu.control.revoke('revoked@example.com');

    const stale = oauthClientFor(emu, (await emu.control.info()).defaultClient);
    stale.setCredentials({ access_token: oldAccessToken, expiry_date: Date.now() + 3_600_000 });
    const unauthorized = await failure(gmailClient(emu, stale).users.getProfile({ userId: 'me' }));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.data.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', errors: [{ reason: 'authError', domain: 'global' }] });

    auth.setCredentials({ refresh_token: auth.credentials.refresh_token ?? '' });
    const err = await failure(auth.getAccessToken());
    expect(err.status).toBe(400);
    expect((err.data as unknown as { error: string }).error).toBe('invalid_grant');
  });

  it('answers 401 for an unknown bearer token and invalid_client for an unknown client', async () => {
    const auth = oauthClientFor(emu, { clientId: 'nobody.apps.googleusercontent.com', clientSecret: 'x' });
    auth.setCredentials({ access_token: 'ya29.not-a-real-token', expiry_date: Date.now() + 3_600_000 });
    expect((await failure(gmailClient(emu, auth).users.getProfile({ userId: 'me' }))).status).toBe(401);
    auth.setCredentials({ refresh_token: '1//0e-bogus' });
    const err = await failure(auth.getAccessToken());
    expect(err.status).toBe(401);
    expect((err.data as unknown as { error: string }).error).toBe('invalid_client');
  });

  it('enforces scopes: a read-only grant cannot modify', async () => {
    const { gmail } = await connect(emu, 'readonly@example.com', undefined, ['https://www.googleapis.com/auth/gmail.readonly']);
    const m = await emu.control.deliver('readonly@example.com', { from: 'a@example.com', subject: 's', text: 't' });
    expect((await gmail.users.messages.get({ userId: 'me', id: m.id })).status).toBe(200);
    const err = await failure(gmail.users.messages.modify({ userId: 'me', id: m.id, requestBody: { addLabelIds: ['STARRED'] } }));
    expect(err.status).toBe(403);
    expect(err.data.error.errors[0]?.reason).toBe('insufficientPermissions');
  });
});

describe('loopback consent flow', () => {
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

  it('generateAuthUrl → consent redirect to the loopback receiver → getToken(code) → Gmail calls', async () => {
    const { defaultClient } = await emu.control.info();
    const auth = oauthClientFor(emu, defaultClient);
    const url = auth.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope: ['https://www.googleapis.com/auth/gmail.modify', 'openid', 'email'],
      state: 'xyz-123',
      login_hint: 'consent@example.com',
      redirect_uri: redirectUri,
    });
    expect(url.startsWith(`${emu.url}/o/oauth2/v2/auth?`)).toBe(true);

    const page = await fetch(url); // follows the 302 to the receiver
    expect(await page.text()).toBe('You can close this window.');
    const params = received[received.length - 1];
    expect(params?.get('state')).toBe('xyz-123');
    const code = params?.get('code') ?? '';

    const { tokens } = await auth.getToken({ code, redirect_uri: redirectUri });
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.access_token).toMatch(/^ya29\./);
    auth.setCredentials(tokens);
    const ticket = await auth.verifyIdToken({ idToken: tokens.id_token ?? '', audience: defaultClient.clientId });
    expect(ticket.getPayload()?.email).toBe('consent@example.com');

    const gmail = gmailClient(emu, auth);
    expect((await gmail.users.getProfile({ userId: 'me' })).data.emailAddress).toBe('consent@example.com');

    // Codes are single use.
    const reused = await failure(auth.getToken({ code, redirect_uri: redirectUri }));
    expect((reused.data as unknown as { error: string }).error).toBe('invalid_grant');
  });

  it('redirects with error=access_denied when the user refuses consent', async () => {
    const { defaultClient } = await emu.control.info();
    await emu.control.setOAuth({ denyConsent: true });
    try {
      const url = oauthClientFor(emu, defaultClient).generateAuthUrl({ scope: ['https://mail.google.com/'], state: 's', redirect_uri: redirectUri });
      await fetch(url);
      expect(received[received.length - 1]?.get('error')).toBe('access_denied');
    } finally {
      await emu.control.setOAuth({ denyConsent: false });
    }
  });
});
