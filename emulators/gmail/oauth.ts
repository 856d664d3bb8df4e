// Emulated Google OAuth 2.0: the authorization endpoint (loopback consent without a browser),
// the token endpoint (authorization_code and refresh_token grants), revocation, and bearer
// token checks for the Gmail API. Response and error bodies follow oauth2.googleapis.com.
import { createHash, randomBytes } from 'node:crypto';
import type { SigningKey } from './keys.js';

export interface OAuthClientRegistration {
  clientId: string;
  clientSecret: string;
  /** Non-loopback redirect URIs that are allowed; loopback (127.0.0.1, localhost, [::1]) always is. */
  redirectUris?: string[];
  /**
   * The consent screen's publishing status (External user type). `testing`: refresh tokens issued
   * while it is so expire 7 days after they are issued, unless only profile scopes were granted.
   * Default `production`.
   */
  publishingStatus?: 'testing' | 'production';
}

export const DEFAULT_CLIENT: OAuthClientRegistration = {
  clientId: 'durable-inbox-emulator.apps.googleusercontent.com',
  clientSecret: 'emulator-client-secret',
};

export const FULL_SCOPE = 'https://mail.google.com/';

/** How long a refresh token of an app in Testing lives (Google's OAuth 2.0 docs, "Refresh token expiration"). */
export const TESTING_REFRESH_TOKEN_TTL_MS = 7 * 24 * 3600_000;

/** Scopes whose grants do not expire even in Testing: name, email, profile. */
const PROFILE_SCOPES = new Set([
  'openid',
  'email',
  'profile',
  'https://www.googleapis.com/auth/userinfo.email',
  'https://www.googleapis.com/auth/userinfo.profile',
]);

/**
 * The Cloud project number behind an OAuth client: Google's client ids start with it
 * (`123456789012-abc….apps.googleusercontent.com`); for other ids, a stable 12-digit number.
 */
export function projectNumberOf(clientId: string): string {
  const prefix = /^(\d+)-/.exec(clientId)?.[1];
  if (prefix) return prefix;
  return String(100_000_000_000n + (BigInt('0x' + createHash('sha256').update(clientId).digest('hex').slice(0, 12)) % 900_000_000_000n));
}

export interface Grant {
  email: string;
  clientId: string;
  scopes: string[];
  refreshToken: string;
  revoked: boolean;
  /** Emulator time after which the refresh token answers invalid_grant (an app in Testing); none: until revoked. */
  expiresAt?: number;
}

interface AuthorizationCode {
  grant: Omit<Grant, 'refreshToken' | 'revoked'>;
  redirectUri: string;
  expiresAt: number;
  offline: boolean;
  codeChallenge?: string;
  codeChallengeMethod?: string;
}

export interface AccessTokenInfo {
  email: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
  grant: Grant;
}

export interface OAuthResponse {
  status: number;
  body: Record<string, unknown>;
}

/** Clients, grants and live access tokens as plain data (the emulator's state file). */
export interface OAuthSnapshot {
  clients: OAuthClientRegistration[];
  grants: Grant[];
  accessTokens: Array<{ token: string; refreshToken: string; scopes: string[]; expiresAt: number }>;
}

export type AuthorizeResult = { redirect: string } | { status: number; error: string };

const oauthError = (status: number, error: string, description: string): OAuthResponse => ({
  status,
  body: { error, error_description: description },
});

function isLoopback(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

/** Google's account id (`sub`): an opaque decimal number, stable per address. */
export const subjectId = (email: string): string => BigInt('0x' + createHash('sha256').update(email).digest('hex').slice(0, 16)).toString();

const token = (prefix: string, bytes: number): string => prefix + randomBytes(bytes).toString('base64url');

export class OAuthServer {
  private readonly clients = new Map<string, OAuthClientRegistration>();
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, AccessTokenInfo>();
  private readonly codes = new Map<string, AuthorizationCode>();
  /** When set, the consent screen answers access_denied (the user clicked "Cancel"). */
  denyConsent = false;
  /** Scopes the user leaves unticked on the consent screen (granular consent): the grant lacks them. */
  declineScopes: string[] = [];
  /**
   * Refresh-token rotation (not Google's behaviour; Microsoft's identity platform and others rotate):
   * each refresh_token grant answers a new refresh token and the one used stops working.
   */
  rotateRefreshTokens = false;
  refreshCount = 0;
  codeExchangeCount = 0;

  constructor(
    private readonly now: () => number,
    private readonly signer: SigningKey,
    public accessTokenTtlSeconds: number,
    clients: OAuthClientRegistration[],
  ) {
    for (const client of clients) this.registerClient(client);
  }

  snapshot(): OAuthSnapshot {
    return {
      clients: [...this.clients.values()],
      grants: [...this.grants.values()].map((g) => ({ ...g })),
      accessTokens: [...this.accessTokens].map(([token, info]) => ({ token, refreshToken: info.grant.refreshToken, scopes: info.scopes, expiresAt: info.expiresAt })),
    };
  }

  /** Adds the snapshot's clients, grants and access tokens (after a reset). */
  restore(state: OAuthSnapshot): void {
    for (const client of state.clients) this.registerClient(client);
    for (const grant of state.grants) this.grants.set(grant.refreshToken, { ...grant });
    for (const saved of state.accessTokens) {
      const grant = this.grants.get(saved.refreshToken);
      if (grant) this.accessTokens.set(saved.token, { email: grant.email, clientId: grant.clientId, scopes: saved.scopes, expiresAt: saved.expiresAt, grant });
    }
  }

  registerClient(client: OAuthClientRegistration): void {
    this.clients.set(client.clientId, client);
  }

  getClient(clientId: string): OAuthClientRegistration | undefined {
    return this.clients.get(clientId);
  }

  /** Issues a refresh token directly (the control API's "create account" shortcut). */
  issueRefreshToken(email: string, clientId: string, scopes: string[] = [FULL_SCOPE]): string {
    return this.newGrant({ email, clientId, scopes }).refreshToken;
  }

  /** Revokes every grant of an account (the user removed the app's access), or the grant of one token. */
  revoke(emailOrToken: string): number {
    const viaAccessToken = this.accessTokens.get(emailOrToken)?.grant;
    let revoked = 0;
    for (const grant of this.grants.values()) {
      if (grant.revoked) continue;
      if (grant.email === emailOrToken || grant.refreshToken === emailOrToken || grant === viaAccessToken) {
        grant.revoked = true;
        revoked++;
      }
    }
    for (const [accessToken, info] of this.accessTokens) if (info.grant.revoked) this.accessTokens.delete(accessToken);
    return revoked;
  }

  /** The account behind a bearer token, or undefined if it is unknown, expired or revoked. */
  authenticate(authorization: string | undefined): AccessTokenInfo | undefined {
    if (!authorization || !authorization.startsWith('Bearer ')) return undefined;
    const info = this.accessTokens.get(authorization.slice(7).trim());
    if (!info || info.grant.revoked) return undefined;
    if (info.expiresAt <= this.now()) return undefined;
    return info;
  }

  /**
   * GET /tokeninfo?access_token=: Google's answer for a live access token (azp, aud, sub, scope,
   * exp, expires_in, email, email_verified, access_type), else 400 invalid_token.
   */
  tokenInfo(accessToken: string): OAuthResponse {
    const info = this.authenticate(`Bearer ${accessToken}`);
    if (!info) return oauthError(400, 'invalid_token', 'Invalid Value');
    const expiresIn = Math.max(0, Math.floor((info.expiresAt - this.now()) / 1000));
    return {
      status: 200,
      body: {
        azp: info.clientId,
        aud: info.clientId,
        sub: subjectId(info.email),
        scope: info.scopes.join(' '),
        exp: String(Math.floor(Date.now() / 1000) + expiresIn),
        expires_in: String(expiresIn),
        email: info.email,
        email_verified: 'true',
        access_type: 'offline',
      },
    };
  }

  /** GET /o/oauth2/v2/auth: consent is given at once, for `login_hint` or the default account. */
  authorize(params: URLSearchParams, chooseAccount: (loginHint: string | undefined) => string | undefined): AuthorizeResult {
    const clientId = params.get('client_id') ?? '';
    const redirectUri = params.get('redirect_uri') ?? '';
    const client = this.clients.get(clientId);
    if (!client) return { status: 401, error: 'Error 401: invalid_client. The OAuth client was not found.' };
    if (!redirectUri || (!isLoopback(redirectUri) && !client.redirectUris?.includes(redirectUri))) {
      return { status: 400, error: 'Error 400: redirect_uri_mismatch' };
    }
    const back = new URL(redirectUri);
    const state = params.get('state');
    if (state !== null) back.searchParams.set('state', state);
    if ((params.get('response_type') ?? 'code') !== 'code') {
      back.searchParams.set('error', 'unsupported_response_type');
      return { redirect: back.toString() };
    }
    const requested = (params.get('scope') ?? '').split(/[\s+]+/).filter(Boolean);
    if (requested.length === 0) return { status: 400, error: 'Error 400: invalid_request. Missing required parameter: scope' };
    const scopes = requested.filter((s) => !this.declineScopes.includes(s));
    const email = chooseAccount(params.get('login_hint') ?? undefined);
    if (this.denyConsent || !email || scopes.length === 0) {
      back.searchParams.set('error', 'access_denied');
      return { redirect: back.toString() };
    }
    const code = token('4/0A', 32);
    this.codes.set(code, {
      grant: { email, clientId, scopes },
      redirectUri,
      expiresAt: this.now() + 10 * 60_000,
      offline: params.get('access_type') === 'offline',
      ...(params.get('code_challenge') ? { codeChallenge: params.get('code_challenge') ?? '', codeChallengeMethod: params.get('code_challenge_method') ?? 'plain' } : {}),
    });
    back.searchParams.set('code', code);
    back.searchParams.set('scope', scopes.join(' '));
    return { redirect: back.toString() };
  }

  /** A new grant with its refresh token; one for a client in Testing expires in 7 days (not for profile scopes alone). */
  private newGrant(base: Omit<Grant, 'refreshToken' | 'revoked'>): Grant {
    const testing = this.clients.get(base.clientId)?.publishingStatus === 'testing' && !base.scopes.every((s) => PROFILE_SCOPES.has(s));
    const grant: Grant = { ...base, refreshToken: token('1//0e', 48), revoked: false, ...(testing ? { expiresAt: this.now() + TESTING_REFRESH_TOKEN_TTL_MS } : {}) };
    this.grants.set(grant.refreshToken, grant);
    return grant;
  }

  private issueAccessToken(grant: Grant): Record<string, unknown> {
    const accessToken = token('ya29.a0', 48);
    this.accessTokens.set(accessToken, {
      email: grant.email,
      clientId: grant.clientId,
      scopes: grant.scopes,
      expiresAt: this.now() + this.accessTokenTtlSeconds * 1000,
      grant,
    });
    return {
      access_token: accessToken,
      expires_in: this.accessTokenTtlSeconds,
      scope: grant.scopes.join(' '),
      token_type: 'Bearer',
    };
  }

  private idToken(grant: Grant): string {
    // Wall-clock time, not the emulator clock: the token is verified by clients against their own clock.
    const iat = Math.floor(Date.now() / 1000);
    return this.signer.signJwt({
      iss: 'https://accounts.google.com',
      azp: grant.clientId,
      aud: grant.clientId,
      sub: subjectId(grant.email),
      email: grant.email,
      email_verified: true,
      iat,
      exp: iat + 3600,
    });
  }

  /** POST /token with a form body; client credentials in the body or HTTP Basic auth. */
  token(form: URLSearchParams, authorization: string | undefined): OAuthResponse {
    let clientId = form.get('client_id') ?? '';
    let clientSecret = form.get('client_secret') ?? undefined;
    if (authorization?.startsWith('Basic ')) {
      const [id, secret] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      clientId = id ?? clientId;
      clientSecret = secret;
    }
    const client = this.clients.get(clientId);
    if (!client) return oauthError(401, 'invalid_client', 'The OAuth client was not found.');
    if (clientSecret !== undefined && clientSecret !== client.clientSecret) return oauthError(401, 'invalid_client', 'Unauthorized');

    switch (form.get('grant_type')) {
      case 'refresh_token': {
        const grant = this.grants.get(form.get('refresh_token') ?? '');
        if (!grant || grant.revoked || grant.clientId !== clientId || (grant.expiresAt !== undefined && grant.expiresAt <= this.now())) {
          return oauthError(400, 'invalid_grant', 'Token has been expired or revoked.');
        }
        this.refreshCount++;
        if (this.rotateRefreshTokens) {
          const next = this.newGrant({ email: grant.email, clientId: grant.clientId, scopes: grant.scopes, ...(grant.expiresAt !== undefined ? { expiresAt: grant.expiresAt } : {}) });
          grant.revoked = true;
          return { status: 200, body: { ...this.issueAccessToken(next), refresh_token: next.refreshToken } };
        }
        return { status: 200, body: this.issueAccessToken(grant) };
      }
      case 'authorization_code': {
        const code = form.get('code') ?? '';
        const pending = this.codes.get(code);
        this.codes.delete(code); // single use
        if (!pending || pending.expiresAt <= this.now() || pending.grant.clientId !== clientId) {
          return oauthError(400, 'invalid_grant', 'Malformed auth code.');
        }
        if ((form.get('redirect_uri') ?? '') !== pending.redirectUri) return oauthError(400, 'redirect_uri_mismatch', 'Bad Request');
        if (pending.codeChallenge !== undefined) {
          const verifier = form.get('code_verifier') ?? '';
          const expected = pending.codeChallengeMethod === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
          if (expected !== pending.codeChallenge) return oauthError(400, 'invalid_grant', 'Invalid code verifier.');
        }
        const grant = this.newGrant(pending.grant);
        this.codeExchangeCount++;
        const body = this.issueAccessToken(grant);
        if (pending.offline) body.refresh_token = grant.refreshToken;
        if (grant.scopes.some((s) => s === 'openid' || s === 'email' || s.endsWith('/userinfo.email'))) body.id_token = this.idToken(grant);
        return { status: 200, body };
      }
      default:
        return oauthError(400, 'unsupported_grant_type', 'Invalid grant_type: ' + (form.get('grant_type') ?? ''));
    }
  }

  reset(): void {
    this.grants.clear();
    this.accessTokens.clear();
    this.codes.clear();
    this.denyConsent = false;
    this.declineScopes = [];
    this.rotateRefreshTokens = false;
    this.refreshCount = 0;
    this.codeExchangeCount = 0;
  }
}

/** What a set of granted scopes allows: Gmail's scope hierarchy, simplified to five kinds of call. */
export type ScopeNeed = 'read' | 'modify' | 'compose' | 'send' | 'delete' | 'labels';

const GMAIL = 'https://www.googleapis.com/auth/gmail.';

export function scopesAllow(scopes: readonly string[], need: ScopeNeed): boolean {
  for (const scope of scopes) {
    if (scope === FULL_SCOPE) return true;
    if (scope === GMAIL + 'modify' && need !== 'delete') return true;
    if ((scope === GMAIL + 'readonly' || scope === GMAIL + 'metadata') && need === 'read') return true;
    if (scope === GMAIL + 'compose' && (need === 'compose' || need === 'send')) return true;
    if (scope === GMAIL + 'send' && need === 'send') return true;
    if (scope === GMAIL + 'labels' && need === 'labels') return true;
  }
  return false;
}
