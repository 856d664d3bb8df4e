// Access tokens for SASL XOAUTH2 from an OAuth refresh token (RFC 6749 §6: a form POST with
// grant_type=refresh_token), cached per account in the process until shortly before `expires_in`.
// A server that refuses a token makes the next `current()` refresh; a refused grant (invalid_grant,
// invalid_client) is a `bad-credentials` MailServerError, so the account turns needs_reauth as for a
// refused password. Dependencies (fetch, clock) are injected.
import type { MailProtocol } from './contracts.js';
import { MailServerError } from './errors.js';
import { displaySafe } from '../shared/display-text.js';

/** What an OAuth account's sealed secret holds besides the user name. */
export interface OAuthGrant {
  tokenUrl: string;
  clientId: string;
  clientSecret?: string;
  refreshToken: string;
}

export interface OAuthTokenDeps {
  fetch?: typeof fetch;
  now?: () => number;
  /** The provider answered a new refresh token (rotation): the caller stores it sealed. */
  onRotated?: (refreshToken: string) => Promise<void> | void;
  /**
   * The refresh token as stored now: read when the one held is refused (invalid_grant), since
   * another process may have rotated it; a different one is tried once.
   */
  storedRefreshToken?: () => Promise<string | undefined>;
  timeoutMs?: number;
}

/** The token endpoint's answer is read up to this many bytes (a JSON object of a few hundred). */
const MAX_ANSWER_BYTES = 64 * 1024;
/** A cached token is used until this long before it expires. */
const EXPIRY_MARGIN_MS = 60_000;

export interface AccessTokenSource {
  /** A live access token (cached, else refreshed). */
  current(): Promise<string>;
  /** The server refused `token`: the next current() refreshes (once per refused token). */
  refused(token: string): void;
}

/**
 * Runs `use` with the current access token; when the server refuses it (`isRefusal`), once more with a
 * fresh one. A login refused sends and changes nothing, so the second try is safe.
 */
export async function withAccessToken<T>(source: AccessTokenSource, use: (token: string) => Promise<T>, isRefusal: (err: unknown) => boolean): Promise<T> {
  const token = await source.current();
  try {
    return await use(token);
  } catch (err) {
    if (!isRefusal(err)) throw err;
    source.refused(token);
    return use(await source.current());
  }
}

/** Token URLs must be https; plain http only on loopback (the tests' emulator). */
export function checkTokenUrl(tokenUrl: string): URL {
  let url: URL;
  try {
    url = new URL(tokenUrl);
  } catch {
    throw new Error(`The OAuth token URL ${displaySafe(tokenUrl).slice(0, 200)} is not a URL.`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new Error(`The OAuth token URL ${displaySafe(tokenUrl).slice(0, 200)} must be https (plain http only on this machine's loopback).`);
  }
  return url;
}

/** One refresh_token grant: the access token, its lifetime, and a rotated refresh token if any. */
export async function refreshAccessToken(
  grant: OAuthGrant,
  who: { protocol: MailProtocol; user: string },
  deps: Pick<OAuthTokenDeps, 'fetch' | 'timeoutMs'> = {},
): Promise<{ accessToken: string; expiresInSeconds?: number; refreshToken?: string }> {
  const url = checkTokenUrl(grant.tokenUrl);
  const fields = { protocol: who.protocol, host: url.hostname, port: Number(url.port) || 443 };
  const endpoint = `the OAuth token endpoint ${url.host}`;
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId });
  if (grant.clientSecret) form.set('client_secret', grant.clientSecret);
  let res: Response;
  try {
    res = await (deps.fetch ?? fetch)(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(deps.timeoutMs ?? 15_000),
    });
  } catch (err) {
    const timeout = err instanceof Error && err.name === 'TimeoutError';
    throw new MailServerError(`${cap(endpoint)} could not be reached${timeout ? ' in time' : ''}, so no access token for ${who.user} was issued; try again later.`, {
      kind: timeout ? 'timeout' : 'unreachable',
      ...fields,
    });
  }
  const text = await readCapped(res);
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: handled below by status
  }
  const error = typeof body['error'] === 'string' ? body['error'] : undefined;
  const serverText = displaySafe(text).slice(0, 200);
  if (error === 'invalid_grant') {
    throw new MailServerError(`${cap(endpoint)} refused the refresh token of ${who.user} (invalid_grant: expired or revoked); connect the account again with a new refresh token.`, {
      kind: 'bad-credentials', code: error, serverText, ...fields,
    });
  }
  if (error === 'invalid_client' || error === 'unauthorized_client') {
    throw new MailServerError(`${cap(endpoint)} refused the OAuth client (${error}): check the client id and secret.`, {
      kind: 'bad-credentials', code: error, serverText, ...fields,
    });
  }
  const accessToken = body['access_token'];
  if (!res.ok || typeof accessToken !== 'string' || accessToken === '') {
    throw new MailServerError(`${cap(endpoint)} answered HTTP ${res.status} without an access token${error ? ` (${displaySafe(error).slice(0, 60)})` : ''}.`, {
      kind: res.status >= 500 ? 'unreachable' : 'protocol', ...(error ? { code: error } : {}), serverText, ...fields,
    });
  }
  const expiresIn = Number(body['expires_in']);
  const rotated = body['refresh_token'];
  return {
    accessToken,
    ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expiresInSeconds: expiresIn } : {}),
    ...(typeof rotated === 'string' && rotated !== '' && rotated !== grant.refreshToken ? { refreshToken: rotated } : {}),
  };
}

/** The access tokens of one process, one cache entry per account key. */
export class AccessTokenCache {
  private readonly entries = new Map<string, { token: Promise<string>; expiresAt: number; refused?: string }>();

  /** A source for an account: `grant` is read at each refresh (a rotated token replaces its refreshToken). */
  source(key: string, grant: OAuthGrant, who: { protocol: MailProtocol; user: string }, deps: OAuthTokenDeps = {}): AccessTokenSource {
    const now = deps.now ?? Date.now;
    const current = async (): Promise<string> => {
      const entry = this.entries.get(key);
      if (entry && now() < entry.expiresAt) {
        const token = await entry.token.catch(() => undefined);
        if (token !== undefined && token !== entry.refused) return token;
      }
      const fresh: { token: Promise<string>; expiresAt: number } = { token: Promise.resolve(''), expiresAt: Number.POSITIVE_INFINITY };
      const token = (async () => {
        const answer = await refreshAccessToken(grant, who, deps).catch(async (err: unknown) => {
          const stored = err instanceof MailServerError && err.code === 'invalid_grant' ? await deps.storedRefreshToken?.() : undefined;
          if (!stored || stored === grant.refreshToken) throw err;
          grant.refreshToken = stored;
          return refreshAccessToken(grant, who, deps);
        });
        if (answer.refreshToken) {
          grant.refreshToken = answer.refreshToken;
          await deps.onRotated?.(answer.refreshToken);
        }
        const lifetimeMs = (answer.expiresInSeconds ?? 3600) * 1000;
        fresh.expiresAt = now() + Math.max(0, lifetimeMs - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 2));
        return answer.accessToken;
      })();
      fresh.token = token;
      this.entries.set(key, fresh);
      token.catch(() => {
        if (this.entries.get(key) === fresh) this.entries.delete(key);
      });
      return token;
    };
    return {
      current,
      refused: (token) => {
        const entry = this.entries.get(key);
        if (entry) entry.refused = token;
      },
    };
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/** The process's cache (the workers', the watch's and the CLI's share it). */
export const processAccessTokens = new AccessTokenCache();

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      break;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
