// Error mapping over real googleapis/gaxios errors: the emulator answers with Google's error bodies and
// headers, googleapis turns them into GaxiosErrors, GmailService maps them.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GmailAuthError,
  GmailBadRequestError,
  GmailConflictError,
  GmailError,
  GmailNetworkError,
  GmailNotFoundError,
  GmailPermissionError,
  GmailRateLimitError,
  GmailServerError,
  mapGmailError,
} from '../../src/gmail/index.js';
import { caught, startHarness, type EmulatorHarness, type TestAccount } from '../helpers/gmail-emulator-harness.js';

let harness: EmulatorHarness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness?.close();
});

afterEach(async () => {
  // setQuota patches: put every knob a test may touch back to the emulator's defaults.
  await harness.emulator.control.setQuota({
    enabled: false,
    userUnitsPerMinute: 15_000,
    burstSeconds: 4,
    maxConcurrentPerUser: 10,
    projectUnitsPerDay: 80_000_000,
    errorStyle: '429',
  });
  await harness.emulator.control.setFaults({ errors: [], latency: [] });
});

async function callsOf(method: string): Promise<number> {
  const metrics = await harness.emulator.control.metrics();
  return metrics.methods[method]?.calls ?? 0;
}

/** No error may leak credentials: not in the message, not in any enumerable field. */
function expectNoSecrets(err: unknown, account: TestAccount): void {
  const secrets = [account.refreshToken, account.clientSecret, account.auth.credentials.access_token].filter((s): s is string => !!s);
  const text = `${(err as Error).message} ${JSON.stringify(err)} ${JSON.stringify((err as GmailError).toDetails())}`;
  for (const secret of secrets) expect(text).not.toContain(secret);
  expect((err as Error).cause).toBeUndefined();
}

describe('rate limits', () => {
  it('429 userRateLimitExceeded → GmailRateLimitError with Retry-After, and no hidden gaxios retry', async () => {
    const account = await harness.account('ratelimit');
    await account.service.getProfile(); // refresh the token outside the quota test
    // 1 unit per second with a 1 s burst: the second getProfile in the same second is over the limit.
    await harness.emulator.control.setQuota({ enabled: true, userUnitsPerMinute: 60, burstSeconds: 1, errorStyle: '429' });
    const before = await callsOf('getProfile');
    await account.service.getProfile();
    const err = await caught(() => account.service.getProfile());

    expect(err).toBeInstanceOf(GmailRateLimitError);
    const rateLimit = err as GmailRateLimitError;
    expect(rateLimit).toMatchObject({
      name: 'GmailRateLimitError',
      status: 429,
      reason: 'userRateLimitExceeded',
      domain: 'usageLimits',
      googleStatus: 'RESOURCE_EXHAUSTED',
      operation: 'users.getProfile',
      retryable: true,
      retryAfterSource: 'header',
    });
    expect(rateLimit.retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect(rateLimit.retryAfterMs).toBeLessThanOrEqual(2000);
    expect(rateLimit.message).toMatch(/^Gmail users\.getProfile failed: HTTP 429 userRateLimitExceeded: User-rate limit exceeded/);
    // gaxios would retry a GET on 429 three times by default; exactly two calls reached the server.
    expect((await callsOf('getProfile')) - before).toBe(2);
    expectNoSecrets(err, account);
  });

  it('403 usageLimits userRateLimitExceeded → GmailRateLimitError', async () => {
    const account = await harness.account('ratelimit403');
    await account.service.getProfile();
    await harness.emulator.control.setQuota({ enabled: true, userUnitsPerMinute: 60, burstSeconds: 1, errorStyle: '403' });
    await account.service.getProfile();
    const err = await caught(() => account.service.getProfile());

    expect(err).toBeInstanceOf(GmailRateLimitError);
    expect(err).toMatchObject({ status: 403, reason: 'userRateLimitExceeded', domain: 'usageLimits', retryAfterSource: 'header' });
    expect((err as GmailRateLimitError).retryAfterMs).toBeGreaterThanOrEqual(1000);
  });

  it('403 dailyLimitExceeded → GmailRateLimitError with a long Retry-After', async () => {
    const account = await harness.account('daily');
    await account.service.getProfile();
    // Units spent earlier today count too, so the day's budget of 1 is gone within two calls at most.
    await harness.emulator.control.setQuota({ enabled: true, projectUnitsPerDay: 1 });
    const err = await caught(async () => {
      await account.service.getProfile();
      await account.service.getProfile();
    });

    expect(err).toBeInstanceOf(GmailRateLimitError);
    expect(err).toMatchObject({ status: 403, reason: 'dailyLimitExceeded', domain: 'usageLimits' });
    expect((err as GmailRateLimitError).retryAfterMs).toBeGreaterThan(1000);
  });

  it('"Too many concurrent requests for user" → GmailRateLimitError', async () => {
    const account = await harness.account('concurrent');
    await account.service.getProfile();
    await harness.emulator.control.setQuota({ enabled: true, maxConcurrentPerUser: 1 });
    await harness.emulator.control.setFaults({ latency: [{ method: 'getProfile', distribution: { type: 'fixed', ms: 300 } }] });
    const results = await Promise.allSettled([account.service.getProfile(), account.service.getProfile()]);

    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toBeInstanceOf(GmailRateLimitError);
    expect(rejected[0]!.reason).toMatchObject({ status: 429, reason: 'rateLimitExceeded' });
    expect((rejected[0]!.reason as Error).message).toContain('Too many concurrent requests for user');
  });
});

describe('not found', () => {
  it('404 for a thread, message or draft names the resource', async () => {
    const { service } = await harness.account('notfound');
    const thread = await caught(() => service.getThread('18c0ffee00000000'));
    expect(thread).toBeInstanceOf(GmailNotFoundError);
    expect(thread).toMatchObject({ name: 'GmailNotFoundError', status: 404, resource: 'thread', operation: 'threads.get', retryable: false });

    expect(await caught(() => service.getMessage('18c0ffee00000000'))).toMatchObject({ resource: 'message' });
    expect(await caught(() => service.updateDraft('r-missing', { threadId: '18c0ffee00000000', raw: 'eA' }))).toMatchObject({ resource: 'draft' });
  });

  it('an id that cannot be a Gmail id is a non-retryable GmailBadRequestError ("Invalid id value"), never "gone"', async () => {
    const { service } = await harness.account('badid');
    for (const call of [
      () => service.getThread('thread-1'),
      () => service.getMessage('8000000000000000'),
      () => service.modifyThread('not-a-gmail-id', { add: ['STARRED'] }),
    ]) {
      const err = await caught(call);
      expect(err).toBeInstanceOf(GmailBadRequestError);
      expect(err).toMatchObject({ status: 400, reason: 'invalidArgument', retryable: false });
      expect((err as Error).message).toContain('Invalid id value');
    }
  });

  it('getDraft answers null and deleteDraft false for a draft that is gone', async () => {
    const { service } = await harness.account('nodraft');
    expect(await service.getDraft('r-missing')).toBeNull();
    expect(await service.deleteDraft('r-missing')).toBe(false);
  });

  it('an expired startHistoryId is a GmailNotFoundError with resource "history"', async () => {
    const account = await harness.account('history');
    const { historyId } = await account.service.getProfile();
    await harness.emulator.control.deliver(account.email, { from: 'a@example.com', subject: 'one', text: 'x' });
    await harness.emulator.control.expireHistory(account.email);

    const err = await caught(() => account.service.listHistory({ startHistoryId: historyId }));
    expect(err).toBeInstanceOf(GmailNotFoundError);
    expect(err).toMatchObject({ resource: 'history', operation: 'history.list' });
  });

  it('infers the resource from the request URL when the caller gives none', async () => {
    const account = await harness.account('infer');
    const { historyId } = await account.service.getProfile();
    await harness.emulator.control.expireHistory(account.email);
    await harness.emulator.control.deliver(account.email, { from: 'a@example.com', subject: 'one', text: 'x' });
    await harness.emulator.control.expireHistory(account.email);

    const raw = await caught(() => account.gmail.users.history.list({ userId: 'me', startHistoryId: historyId }));
    expect(mapGmailError(raw)).toMatchObject({ name: 'GmailNotFoundError', resource: 'history' });
    const rawDraft = await caught(() => account.gmail.users.drafts.get({ userId: 'me', id: 'r-missing' }));
    expect(mapGmailError(rawDraft)).toMatchObject({ name: 'GmailNotFoundError', resource: 'draft' });
  });
});

describe('authentication', () => {
  it('401 for an unknown access token → GmailAuthError (not revoked); the next call refreshes and succeeds', async () => {
    const account = await harness.account('bogus');
    const { service, auth } = harness.client(account, { accessToken: 'ya29.not-a-real-token', expiryDate: Date.now() + 3_600_000 });
    const refreshes: unknown[] = [];
    auth.on('tokens', (t) => refreshes.push(t));

    const err = await caught(() => service.getProfile());
    expect(err).toBeInstanceOf(GmailAuthError);
    expect(err).toMatchObject({ name: 'GmailAuthError', status: 401, reason: 'authError', revoked: false, retryable: true });
    expect((err as Error).message).not.toContain('ya29.not-a-real-token');

    await expect(service.getProfile()).resolves.toMatchObject({ emailAddress: account.email });
    expect(refreshes).toHaveLength(1);
  });

  it('invalid_grant after the user revokes access → GmailAuthError revoked, not retryable', async () => {
    const account = await harness.account('revoked');
    await account.service.getProfile();
    expect(account.refreshedTokens).toHaveLength(1);
    await harness.emulator.control.revoke(account.email);

    // A fresh client (refresh token only) fails on the token refresh itself.
    const fresh = harness.client(account);
    const err = await caught(() => fresh.service.getThread('18c0ffee00000000'));
    expect(err).toBeInstanceOf(GmailAuthError);
    expect(err).toMatchObject({ status: 400, reason: 'invalid_grant', revoked: true, retryable: false, operation: 'threads.get' });
    expect((err as Error).message).toBe('Gmail threads.get failed: HTTP 400 invalid_grant: Token has been expired or revoked.');
    expectNoSecrets(err, account);

    // The long-lived client first sees its cached access token rejected, then the refresh fails the same way.
    const first = await caught(() => account.service.getProfile());
    expect(first).toMatchObject({ name: 'GmailAuthError', status: 401, revoked: false });
    const second = await caught(() => account.service.getProfile());
    expect(second).toMatchObject({ name: 'GmailAuthError', reason: 'invalid_grant', revoked: true });
  });

  it('refreshed tokens are handed to onTokens for persistence', async () => {
    const account = await harness.account('tokens');
    await account.service.getProfile();
    expect(account.refreshedTokens).toHaveLength(1);
    expect(account.refreshedTokens[0]).toMatchObject({ access_token: expect.any(String), expiry_date: expect.any(Number) });
    expect(account.refreshedTokens[0]!.expiry_date!).toBeGreaterThan(Date.now());
  });
});

describe('other statuses', () => {
  it('5xx → GmailServerError, reported after exactly one request', async () => {
    const { service } = await harness.account('server');
    await service.getProfile();
    await harness.emulator.control.setFaults({ errors: [{ method: 'threads.get', rate: 1, status: 503 }] });
    const before = await callsOf('threads.get');

    const err = await caught(() => service.getThread('18c0ffee00000000'));
    expect(err).toBeInstanceOf(GmailServerError);
    expect(err).toMatchObject({ name: 'GmailServerError', status: 503, reason: 'backendError', retryable: true });
    expect((await callsOf('threads.get')) - before).toBe(1);

    await harness.emulator.control.setFaults({ errors: [{ method: 'threads.get', rate: 1, status: 500 }] });
    expect(await caught(() => service.getThread('18c0ffee00000000'))).toMatchObject({ name: 'GmailServerError', status: 500 });
  });

  it('a slow response hits the client timeout → GmailNetworkError, without a retry', async () => {
    const account = await harness.account('timeout', { timeoutMs: 300 });
    await account.service.getProfile();
    await harness.emulator.control.setFaults({ latency: [{ method: 'getProfile', distribution: { type: 'fixed', ms: 2000 } }] });

    const started = Date.now();
    const err = await caught(() => account.service.getProfile());
    expect(err).toBeInstanceOf(GmailNetworkError);
    expect(err).toMatchObject({ name: 'GmailNetworkError', code: 'TimeoutError', retryable: true });
    expect(Date.now() - started).toBeLessThan(900); // one 300 ms attempt, not three
  });

  it('400 → GmailBadRequestError, not retryable', async () => {
    const { service } = await harness.account('badrequest');
    const delivered = await harness.emulator.control.deliver((await service.getProfile()).emailAddress, { from: 'a@example.com', subject: 's', text: 'x' });

    const invalidLabel = await caught(() => service.modifyThread(delivered.threadId, { add: ['Label_does_not_exist'] }));
    expect(invalidLabel).toBeInstanceOf(GmailBadRequestError);
    expect(invalidLabel).toMatchObject({ name: 'GmailBadRequestError', status: 400, retryable: false, operation: 'threads.modify' });

    expect(await caught(() => service.createDraft({ threadId: delivered.threadId, raw: '' }))).toMatchObject({ name: 'GmailBadRequestError', status: 400 });
  });

  it('403 insufficientPermissions → GmailPermissionError', async () => {
    const email = `readonly-${process.pid}@example.com`;
    const created = await harness.emulator.control.createAccount({ email, scopes: ['https://www.googleapis.com/auth/gmail.readonly'] });
    const { service } = harness.client(created);
    const err = await caught(() => service.createDraft({ threadId: '18c0ffee00000000', raw: 'eA' }));
    expect(err).toBeInstanceOf(GmailPermissionError);
    expect(err).toMatchObject({ status: 403, reason: 'insufficientPermissions', retryable: false });
  });

  it('403 accessNotConfigured (the Gmail API off in the project) → GmailPermissionError, not a rate limit, though its domain is usageLimits', async () => {
    const account = await harness.account('api-disabled');
    await harness.emulator.control.setFaults({ gmailApiDisabled: [account.clientId] });
    try {
      const err = await caught(() => account.service.getProfile());
      expect(err).toBeInstanceOf(GmailPermissionError);
      expect(err).toMatchObject({ status: 403, reason: 'accessNotConfigured', domain: 'usageLimits', retryable: false });
      expect((err as GmailPermissionError).reasons).toContain('SERVICE_DISABLED');
      expect((err as Error).message).toMatch(/^Gmail users\.getProfile failed: HTTP 403 accessNotConfigured: Gmail API has not been used in project \d+ before or it is disabled/);
    } finally {
      await harness.emulator.control.setFaults({ gmailApiDisabled: [] });
    }
  });

  it('409 on a duplicate label → GmailConflictError', async () => {
    const account = await harness.account('conflict');
    await account.gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Dup' } });
    const raw = await caught(() => account.gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Dup' } }));
    expect(mapGmailError(raw, { operation: 'labels.create' })).toMatchObject({ name: 'GmailConflictError', status: 409, reason: 'aborted' });
    expect(mapGmailError(raw)).toBeInstanceOf(GmailConflictError);
  });
});
