import { describe, expect, it } from 'vitest';
import { createGmailClient, GmailNetworkError, GmailUnexpectedError, mapGmailError, parseRetryAfter } from '../../src/services/gmail/index.js';

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

// HTTP-shaped failures are tested against the emulator (errors.test.ts); these are the shapes without a response.
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
