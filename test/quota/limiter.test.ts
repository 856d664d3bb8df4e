// The shared quota limiter against the test database and the Gmail emulator (its quota is the
// judge): two limiter instances with their own connection pools, as two worker processes would
// have, together stay within one account's budget; AIMD halves on a throttle (once per cooldown)
// and grows additively while healthy.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createGmailClient } from '../../src/gmail/client.js';
import { GmailRateLimitError } from '../../src/gmail/errors.js';
import { GmailService } from '../../src/gmail/gmail-service.js';
import { waitUntil } from '../helpers/wait-until.js';

let emulator: RunningGmailEmulator;
const pools: PrismaClient[] = [];

function pool(): PrismaClient {
  const p = createPrismaClient(inject('databaseUrl'), { poolSize: 4 });
  pools.push(p);
  return p;
}

function gmailFor(email: string): GmailService {
  const account = emulator.accounts.find((a) => a.email === email)!;
  const { gmail } = createGmailClient({
    rootUrl: `${emulator.url}/`,
    clientId: account.clientId,
    clientSecret: account.clientSecret,
    tokenUrl: `${emulator.url}/token`,
    credentials: { refresh_token: account.refreshToken },
  });
  return new GmailService(gmail);
}

beforeAll(async () => {
  emulator = await startGmailEmulator({
    // 1,200 units/min = 20 units/s (4 messages.get per second), bursts of 2 s: the limiters run at
    // 19 units/s with 1 s of burst, the slack a call needs between its grant and its arrival.
    quota: { profile: 'legacy', userUnitsPerMinute: 1200, burstSeconds: 2 },
    accounts: [
      { email: 'shared@example.com', seed: { count: 60 } },
      { email: 'greedy@example.com', seed: { count: 20 } },
    ],
  });
});

afterAll(async () => {
  for (const p of pools) await p.$disconnect();
  await emulator?.close();
});

describe('quota limiter', () => {
  it('two instances on separate pools together stay within the account budget', async () => {
    const key = `acct-${randomUUID()}`;
    const options = { profile: 'legacy' as const, startRate: 19, maxRate: 19, burstSeconds: 1, maxConcurrency: 3 };
    const a = new QuotaLimiter(prismaExecutor(pool()), options);
    const b = new QuotaLimiter(prismaExecutor(pool()), options);
    const gmail = gmailFor('shared@example.com');
    // Every call on the account goes through the limiters, the listing too.
    const ids = (await a.run(key, 'messages.list', () => gmail.listMessages({ maxResults: 60 }))).messages.map((m) => m.id);
    const before = await emulator.control.metrics();

    const grants: Array<{ at: number; units: number; by: 'a' | 'b' }> = [];
    const work = (limiter: QuotaLimiter, by: 'a' | 'b', mine: string[]) =>
      Promise.all(
        mine.map(async (id) => {
          const units = limiter.cost('messages.get');
          const release = await limiter.acquire(key, units);
          grants.push({ at: release.grantedAtMs, units, by });
          await gmail.getMessage(id, 'minimal');
          await limiter.report(key, { kind: 'ok', latencyMs: 1 });
        }),
      );
    await Promise.all([work(a, 'a', ids.slice(0, 20)), work(b, 'b', ids.slice(20, 40))]);

    const after = await emulator.control.metrics();
    const rejected = (m: typeof after) => m.quota.rejected429 + m.quota.rejected403 + m.quota.rejectedConcurrent;
    expect(rejected(after) - rejected(before)).toBe(0);
    expect(grants.filter((g) => g.by === 'a')).toHaveLength(20);
    expect(grants.filter((g) => g.by === 'b')).toHaveLength(20);

    // The schedule both instances were granted (database clock): in every window of w seconds,
    // at most rate·w + burst units, whichever process took them.
    const sorted = grants.map((g) => g.at).sort((x, y) => x - y);
    const rate = 19;
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i; j < sorted.length; j++) {
        const windowS = (sorted[j]! - sorted[i]!) / 1000;
        const units = (j - i + 1) * 5;
        expect(units).toBeLessThanOrEqual(rate * windowS + rate * 1 + 5 + 1e-6);
      }
    }
    const state = await a.state(key);
    expect(state?.throttles).toBe(0);
  });

  it('halves the rate on a throttle, once per cooldown, and increases additively while healthy', async () => {
    const key = `acct-${randomUUID()}`;
    const limiter = new QuotaLimiter(prismaExecutor(pool()), {
      profile: 'legacy',
      startRate: 200,
      maxRate: 240,
      minRate: 10,
      increaseStep: 10,
      increaseIntervalMs: 0,
      decreaseCooldownMs: 60_000,
    });
    await limiter.acquire(key, 1);
    await limiter.report(key, { kind: 'throttled', retryAfterMs: 1000 });
    expect((await limiter.state(key))?.rate).toBe(100);
    // 429s of calls already in flight: the same congestion, counted once.
    await limiter.report(key, { kind: 'throttled', retryAfterMs: 1000 });
    await limiter.report(key, { kind: 'throttled', retryAfterMs: 1000 });
    const afterBurst = await limiter.state(key);
    expect(afterBurst?.rate).toBe(100);
    expect(afterBurst?.throttles).toBe(3);
    expect(afterBurst?.decreases).toBe(1);
    // The throttle left the bucket in debt for the Retry-After: the next caller waits ~1 s.
    expect(afterBurst!.tokens).toBeLessThanOrEqual(-100 + 1e-6);

    const healthy = new QuotaLimiter(prismaExecutor(pool()), {
      profile: 'legacy',
      startRate: 100,
      maxRate: 125,
      increaseStep: 10,
      increaseIntervalMs: 0,
      decreaseCooldownMs: 0,
    });
    const key2 = `acct-${randomUUID()}`;
    await healthy.acquire(key2, 1);
    for (let i = 0; i < 5; i++) await healthy.report(key2, { kind: 'ok', latencyMs: 5 });
    expect((await healthy.state(key2))?.rate).toBe(125); // 100 → 110 → 120 → 125 (capped)
    await healthy.report(key2, { kind: 'throttled' });
    expect((await healthy.state(key2))?.rate).toBe(62.5);
  });

  it('halves on a p95 latency breach', async () => {
    const key = `acct-${randomUUID()}`;
    const limiter = new QuotaLimiter(prismaExecutor(pool()), {
      profile: 'legacy',
      startRate: 200,
      maxRate: 240,
      latencyThresholdMs: 1000,
      latencyWindow: 20,
      decreaseCooldownMs: 0,
      increaseIntervalMs: 60_000,
    });
    await limiter.acquire(key, 1);
    for (let i = 0; i < 19; i++) await limiter.report(key, { kind: 'ok', latencyMs: i < 17 ? 50 : 4000 });
    expect((await limiter.state(key))?.rate).toBe(200); // fewer than 20 samples: no judgement yet
    for (let i = 0; i < 3; i++) await limiter.report(key, { kind: 'ok', latencyMs: 4000 });
    expect((await limiter.state(key))?.rate).toBe(100);
  });

  it('halves on real 429s from Gmail when started above the budget', async () => {
    const key = `acct-${randomUUID()}`;
    // The emulator allows 20 units/s; the limiter starts at 200 and must back off.
    const limiter = new QuotaLimiter(prismaExecutor(pool()), {
      profile: 'legacy',
      startRate: 200,
      maxRate: 200,
      minRate: 5,
      burstSeconds: 1,
      decreaseCooldownMs: 500,
      maxConcurrency: 4,
    });
    const gmail = gmailFor('greedy@example.com');
    const ids = (await gmail.listMessages({ maxResults: 20 })).messages.map((m) => m.id);
    let throttled = 0;
    for (const id of [...ids, ...ids]) {
      try {
        await limiter.run(key, 'messages.get', () => gmail.getMessage(id, 'minimal'));
      } catch (err) {
        if (!(err instanceof GmailRateLimitError)) throw err;
        throttled++;
      }
    }
    const state = await limiter.state(key);
    expect(throttled).toBeGreaterThan(0);
    expect(state!.decreases).toBeGreaterThan(0);
    expect(state!.rate).toBeLessThan(200);
  });

  it('gives a freed slot to a live call before the bulk calls queued ahead of it', async () => {
    const key = `acct-${randomUUID()}`;
    const limiter = new QuotaLimiter(prismaExecutor(pool()), { profile: 'legacy', startRate: 200, maxRate: 200, maxConcurrency: 2 });
    const order: string[] = [];
    const gates: Array<() => void> = [];
    const call = (name: string, lane: 'live' | 'bulk') =>
      limiter.run(key, 'messages.get', async () => {
        order.push(name);
        await new Promise<void>((resolve) => gates.push(resolve));
      }, undefined, lane);
    // Two bulk calls hold the account's two slots; three more bulk calls and then a live one queue.
    const running = [call('bulk-1', 'bulk'), call('bulk-2', 'bulk')];
    await waitUntil('both slots taken', async () => order.length === 2, { timeoutMs: 5_000 });
    running.push(call('bulk-3', 'bulk'), call('bulk-4', 'bulk'), call('bulk-5', 'bulk'));
    await waitUntil('three bulk calls waiting', async () => limiter.waiting(key).bulk === 3, { timeoutMs: 5_000, everyMs: 10 });
    running.push(call('live-1', 'live'));
    await waitUntil('the live call waiting', async () => limiter.waiting(key).live === 1, { timeoutMs: 5_000, everyMs: 10 });
    gates.shift()!(); // one slot frees up
    await waitUntil('the next call started', async () => order.length === 3, { timeoutMs: 5_000, everyMs: 10 });
    expect(order[2]).toBe('live-1');
    // Then one slot at a time, each once the call before has started: the bulk calls in the order they queued.
    for (let started = 3; started < 6; started++) {
      gates.shift()!();
      await waitUntil(`call ${started + 1} started`, async () => order.length === started + 1, { timeoutMs: 5_000, everyMs: 10 });
    }
    for (const open of gates.splice(0)) open();
    await Promise.all(running);
    expect(order.slice(3)).toEqual(['bulk-3', 'bulk-4', 'bulk-5']);
  });
});
