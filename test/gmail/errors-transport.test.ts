// Error mapping for what the emulator cannot produce: no HTTP response at all, a failing token endpoint,
// non-HTTP errors. Plus the Retry-After parser.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createGmailClient,
  GmailNetworkError,
  GmailServerError,
  GmailService,
  GmailUnexpectedError,
  mapGmailError,
  parseRetryAfter,
} from '../../src/gmail/index.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-20T10:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date relative to now, never negative', () => {
    expect(parseRetryAfter('Fri, 20 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores garbage', () => {
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('mapGmailError without an HTTP response', () => {
  it('maps a transport failure to a retryable GmailNetworkError with its code', async () => {
    // Port 9 (discard) on loopback: nothing listens, so the connection is refused.
    const { gmail } = createGmailClient({ rootUrl: 'http://127.0.0.1:9/', clientId: 'c', clientSecret: 's', credentials: { refresh_token: 'r', access_token: 'a', expiry_date: Date.now() + 3_600_000 } });
    const error = await gmail.users.getProfile({ userId: 'me' }).then(
      () => null,
      (err: unknown) => mapGmailError(err, { operation: 'users.getProfile' }),
    );
    expect(error).toBeInstanceOf(GmailNetworkError);
    expect(error).toMatchObject({ name: 'GmailNetworkError', retryable: true, operation: 'users.getProfile' });
    expect((error as GmailNetworkError).code).toBe('ECONNREFUSED');
  });

  it('wraps a non-HTTP error without losing its type name', () => {
    const error = mapGmailError(new TypeError('x is not a function'), { operation: 'threads.get' });
    expect(error).toBeInstanceOf(GmailUnexpectedError);
    expect(error.message).toBe('Gmail threads.get failed unexpectedly: TypeError: x is not a function');
  });

  it('returns an already mapped error unchanged', () => {
    const error = mapGmailError(new TypeError('boom'));
    expect(mapGmailError(error)).toBe(error);
  });
});

describe('token endpoint failures', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('a 503 from the token endpoint surfaces after one request: the refresh has no hidden retries either', async () => {
    // google-auth-library asks gaxios to retry token POSTs 3 times; the client's defaults must switch that off.
    let tokenRequests = 0;
    server = createServer((req, res) => {
      tokenRequests++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 503, message: 'unavailable', status: 'UNAVAILABLE' } }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { gmail } = createGmailClient({ rootUrl: `${url}/`, tokenUrl: `${url}/token`, clientId: 'c', clientSecret: 's', credentials: { refresh_token: '1//refresh-secret' } });

    const err = await new GmailService(gmail).getProfile().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GmailServerError);
    expect(err).toMatchObject({ status: 503, operation: 'users.getProfile' });
    expect((err as Error).message).not.toContain('refresh-secret');
    expect(tokenRequests).toBe(1);
  });
});
