// Quota and fault contract tests through googleapis: 429/403 bodies and Retry-After, unit costs
// per profile, concurrency and per-project limits, injected 5xx, latency and poison messages.
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, failure, startEmulator } from '../helpers/googleapis-clients.js';
import { waitUntil } from '../helpers/wait-until.js';

const OWNER = 'quota@example.com';
let emu: RunningGmailEmulator;
let gmail: gmail_v1.Gmail;
let messageId: string;

async function getMany(n: number, client = gmail): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    try {
      statuses.push((await client.users.messages.get({ userId: 'me', id: messageId, format: 'minimal' })).status);
    } catch (err) {
      statuses.push((err as { response: { status: number } }).response.status);
    }
  }
  return statuses;
}

beforeAll(async () => {
  emu = await startGmailEmulator({ quota: { enabled: true } });
});

beforeEach(async () => {
  await emu.control.reset();
  gmail = (await connect(emu, OWNER)).gmail;
  messageId = (await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 'q', text: 'x' })).id;
});

afterAll(async () => {
  await emu.close();
});

describe('quotas', () => {
  it('are on by default with the legacy profile', async () => {
    const defaults = await startGmailEmulator();
    try {
      expect((await defaults.control.info()).quota).toMatchObject({ enabled: true, profile: 'legacy' });
    } finally {
      await defaults.close();
    }
  });

  it('answer 429 RESOURCE_EXHAUSTED userRateLimitExceeded with Retry-After once the burst is spent', async () => {
    await emu.control.setQuota({ userUnitsPerMinute: 600, burstSeconds: 2 }); // 10 units/s, bucket of 20
    expect(await getMany(4)).toEqual([200, 200, 200, 200]);
    const err = await failure(gmail.users.messages.get({ userId: 'me', id: messageId }));
    expect(err.status).toBe(429);
    expect(err.data.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(err.data.error.errors[0]).toMatchObject({ reason: 'userRateLimitExceeded', domain: 'usageLimits' });
    expect(err.data.error.message).toMatch(/^User-rate limit exceeded\. {2}Retry after \d{4}-/);
    expect(Number(err.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const metrics = await emu.control.metrics();
    expect(metrics.quota.rejected429).toBe(1);
    expect(metrics.methods['messages.get']).toMatchObject({ calls: 5, units: 20, errors: { '429': 1 } });

    await emu.control.advanceClock(Number(err.headers.get('retry-after')) * 1000);
    expect(await getMany(1)).toEqual([200]);
  });

  it('can answer with the older 403 usageLimits body instead', async () => {
    await emu.control.setQuota({ userUnitsPerMinute: 600, burstSeconds: 1, errorStyle: '403' });
    await getMany(2);
    const err = await failure(gmail.users.messages.get({ userId: 'me', id: messageId }));
    expect(err.status).toBe(403);
    expect(err.data.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED', message: 'User Rate Limit Exceeded' });
    expect(err.data.error.errors[0]).toMatchObject({ reason: 'userRateLimitExceeded', domain: 'usageLimits' });
    expect(err.headers.get('retry-after')).toBeTruthy();
  });

  it('charges the 2026 profile costs and enforces its per-minute budget', async () => {
    await emu.control.setQuota({ profile: '2026', burstSeconds: 60 }); // 6,000 units/min, bucket = the whole minute
    await getMany(3);
    await gmail.users.threads.get({ userId: 'me', id: messageId, format: 'minimal' });
    await gmail.users.history.list({ userId: 'me', startHistoryId: (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '' });
    const methods = (await emu.control.metrics()).methods;
    expect(methods['messages.get']?.units).toBe(60);
    expect(methods['threads.get']?.units).toBe(40);
    expect(methods['history.list']?.units).toBe(2);
    expect(methods.getProfile?.units).toBe(1);
    // 6,000 - 103 units left: 294 more gets at 20 fit, the 295th does not.
    const statuses = await getMany(296);
    expect(statuses.filter((s) => s === 200)).toHaveLength(294);
    expect(statuses.slice(-2)).toEqual([429, 429]);
  });

  it('limits concurrent requests per user', async () => {
    await emu.control.setQuota({ maxConcurrentPerUser: 2 });
    // Long enough that all five calls are in flight together even on a loaded machine.
    await emu.control.setFaults({ latency: [{ method: 'messages.get', distribution: { type: 'fixed', ms: 1000 } }] });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => gmail.users.messages.get({ userId: 'me', id: messageId })));
    const rejected = results.filter((r) => r.status === 'rejected').map((r) => (r.reason as { response: { status: number; data: { error: { message: string; errors: Array<{ reason: string }> } } } }).response);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect(rejected).toHaveLength(3);
    expect(rejected[0]?.status).toBe(429);
    expect(rejected[0]?.data.error.message).toBe('Too many concurrent requests for user');
    expect(rejected[0]?.data.error.errors[0]?.reason).toBe('rateLimitExceeded');
  });

  it('enforces the per-project budget across users', async () => {
    await emu.control.setQuota({ projectUnitsPerMinute: 22 });
    const other = (await connect(emu, 'other@example.com')).gmail;
    const otherId = (await emu.control.deliver('other@example.com', { from: 'a@example.com', subject: 'q', text: 'x' })).id;
    expect(await getMany(4)).toEqual([200, 200, 200, 200]); // 20 of the project's 22 units
    const err = await failure(other.users.messages.get({ userId: 'me', id: otherId }));
    expect(err.status).toBe(429);
    expect(err.data.error.errors[0]).toMatchObject({ reason: 'rateLimitExceeded', domain: 'usageLimits' });
    expect(err.data.error.message).toContain("Queries per minute");
  });
});

describe('faults', () => {
  it('injects 503/500 at a per-method rate, reproducibly for a seed', async () => {
    await emu.control.setFaults({ errors: [{ method: 'messages.get', rate: 1, status: 503 }] });
    const err = await failure(gmail.users.messages.get({ userId: 'me', id: messageId }));
    expect(err.status).toBe(503);
    expect(err.data.error).toMatchObject({ code: 503, status: 'UNAVAILABLE', errors: [{ reason: 'backendError' }] });
    expect((await gmail.users.messages.list({ userId: 'me' })).status).toBe(200);

    const run = async () => {
      await emu.control.setFaults({ seed: 7, errors: [{ method: '*', rate: 0.5, status: 500 }] });
      return getMany(20);
    };
    const first = await run();
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await run()).toEqual(first);
  });

  it('adds latency from a distribution', async () => {
    await emu.control.setFaults({ latency: [{ method: '*', distribution: { type: 'uniform', minMs: 120, maxMs: 160 } }] });
    const start = Date.now();
    await gmail.users.getProfile({ userId: 'me' });
    expect(Date.now() - start).toBeGreaterThanOrEqual(115);
  });

  it('counts a slow call as in flight from when it is read until it is answered, its client gone or not', async () => {
    await emu.control.setFaults({ latency: [{ method: 'getProfile', distribution: { type: 'fixed', ms: 3000 } }] });
    const metrics = () => emu.control.metrics();
    const controller = new AbortController();
    const call = gmail.users.getProfile({ userId: 'me' }, { signal: controller.signal }).then(() => 'answered', () => 'aborted');
    await waitUntil('the call in flight', async () => (await metrics()).inFlight['getProfile'] === 1);
    // The client gives up; Gmail holds the call until its answer is due, and counts it then.
    controller.abort();
    expect(await call).toBe('aborted');
    const held = await metrics();
    expect(held.inFlight['getProfile']).toBe(1);
    expect(held.methods['getProfile']).toBeUndefined();
    await waitUntil('the call answered', async () => (await metrics()).inFlight['getProfile'] === undefined, { timeoutMs: 10_000 });
    expect((await metrics()).methods['getProfile']?.calls).toBe(1);
  });

  it('poison messages: get always fails, or returns broken MIME', async () => {
    const broken = (await emu.control.deliver(OWNER, { from: 'b@example.com', subject: 'broken', text: 'the body' })).id;
    await emu.control.setFaults({ poison: [{ messageId, mode: 'error' }, { messageId: broken, mode: 'brokenMime' }] });
    for (let i = 0; i < 3; i++) expect((await failure(gmail.users.messages.get({ userId: 'me', id: messageId }))).status).toBe(500);
    expect((await gmail.users.messages.list({ userId: 'me' })).data.messages?.map((m) => m.id)).toContain(messageId);
    const full = await gmail.users.messages.get({ userId: 'me', id: broken });
    expect(full.data.payload?.mimeType).toBe('multipart/mixed');
    expect(full.data.payload?.parts ?? []).toEqual([]);
    const rawText = Buffer.from((await gmail.users.messages.get({ userId: 'me', id: broken, format: 'raw' })).data.raw ?? '', 'base64url').toString();
    expect(rawText).not.toContain('the body');
  });
});

describe('quota off', () => {
  it('startEmulator() in these tests turns quotas off explicitly', async () => {
    const free = await startEmulator();
    try {
      expect((await free.control.info()).quota.enabled).toBe(false);
    } finally {
      await free.close();
    }
  });
});
