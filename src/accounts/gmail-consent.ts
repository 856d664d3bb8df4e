// Gmail's OAuth2 consent for the CLI: the loopback flow of google-auth-library (PKCE, offline
// access), the scopes durable-inbox asks for.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Client } from 'google-auth-library';
import type { StoredTokens } from './token-vault.js';

export const GMAIL_SCOPES = [
  'https://www.googleapis.com/auth/gmail.readonly',
  'https://www.googleapis.com/auth/gmail.modify',
  'https://www.googleapis.com/auth/gmail.compose',
];

export interface LoopbackOptions {
  clientId: string;
  clientSecret: string;
  /** Authorization endpoint; default Google's (the emulator's consent endpoint in dev and tests). */
  authUrl?: string;
  tokenUrl?: string;
  loginHint?: string;
  /** Shows the consent URL to the user (prints it; tests fetch it, the emulator consents at once). */
  openUrl: (url: string) => Promise<void> | void;
  timeoutMs?: number;
}

/**
 * The OAuth2 loopback flow: a one-shot HTTP server on 127.0.0.1, the consent URL with PKCE and
 * offline access, the code from the redirect exchanged for tokens.
 */
export async function runLoopbackConsent(opts: LoopbackOptions): Promise<StoredTokens> {
  let resolveCode!: (code: string) => void;
  let rejectCode!: (err: Error) => void;
  const codePromise = new Promise<string>((resolve, reject) => {
    resolveCode = resolve;
    rejectCode = reject;
  });
  const expectedState = randomUUID();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/oauth2callback') {
      res.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    const state = url.searchParams.get('state');
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    if (error || !code || state !== expectedState) {
      res.end('durable-inbox: the account was not connected. You can close this tab.');
      rejectCode(new Error(error ? `consent refused: ${error}` : 'the OAuth redirect carried no valid code'));
      return;
    }
    res.end('durable-inbox: account connected. You can close this tab.');
    resolveCode(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth2callback`;
  const timer = setTimeout(() => rejectCode(new Error('no consent within the time limit')), opts.timeoutMs ?? 5 * 60_000);
  try {
    const client = new OAuth2Client({
      clientId: opts.clientId,
      clientSecret: opts.clientSecret,
      redirectUri,
      endpoints: {
        ...(opts.authUrl ? { oauth2AuthBaseUrl: opts.authUrl } : {}),
        ...(opts.tokenUrl ? { oauth2TokenUrl: opts.tokenUrl } : {}),
      },
    });
    const verifier = await client.generateCodeVerifierAsync();
    const url = client.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope: GMAIL_SCOPES,
      state: expectedState,
      code_challenge: verifier.codeChallenge,
      code_challenge_method: 'S256' as never,
      ...(opts.loginHint ? { login_hint: opts.loginHint } : {}),
    });
    await opts.openUrl(url);
    const code = await codePromise;
    const { tokens } = await client.getToken({ code, codeVerifier: verifier.codeVerifier, redirect_uri: redirectUri });
    if (!tokens.refresh_token) throw new Error('Google returned no refresh token');
    return {
      refresh_token: tokens.refresh_token,
      ...(tokens.access_token ? { access_token: tokens.access_token } : {}),
      ...(tokens.expiry_date ? { expiry_date: tokens.expiry_date } : {}),
      ...(tokens.scope ? { scope: tokens.scope } : {}),
    };
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
