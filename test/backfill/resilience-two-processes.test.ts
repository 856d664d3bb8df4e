// Two worker processes sharing the account's quota: together within the budget (the emulator's quota
// is the judge), both doing work. (The other resilience cases: test/backfill/resilience-*.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';

let h: BackfillHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('backfill resilience', () => {
  it('two worker processes together stay within the account quota', async () => {
    h = await createBackfillHarness({
      messages: 200,
      spanDays: 4,
      // 3,000 units/min = 50 units/s = 10 messages.get per second for this account.
      emulator: { quota: { profile: 'legacy', userUnitsPerMinute: 3000, burstSeconds: 2 } },
    });
    const harness = h;
    const all = listableMessages(harness.emulator, harness.email);
    // The workflows run here; every Gmail call happens in one of two separate OS processes,
    // each with its own pool and limiter instance, drawing from the one bucket in Postgres.
    await harness.startProcess();
    const limiter = { profile: 'legacy' as const, startRate: 47, maxRate: 47, maxConcurrency: 4 };
    const [p1, p2] = await Promise.all([harness.spawnGmailProcess(limiter), harness.spawnGmailProcess(limiter)]);
    const before = await harness.emulator.control.metrics();
    const result = await harness.client.workflow.execute(backfillWorkflow, {
      workflowId: backfillWorkflowId(harness.accountId),
      taskQueue: harness.taskQueue,
      args: [{ accountId: harness.accountId, granularity: 'day', batchSize: 25, window: 4, taskQueues: { workflows: harness.taskQueue, gmail: `${harness.taskQueue}-gmail` } }],
    });
    const after = await harness.emulator.control.metrics();
    const rejected = (m: typeof after) => m.quota.rejected429 + m.quota.rejected403 + m.quota.rejectedConcurrent;
    expect(rejected(after) - rejected(before)).toBe(0);
    expect(new Set(await harness.storedIds())).toEqual(new Set(all.map((m) => m.id)));
    expect(result.counters.inserted).toBe(all.length);
    // Both processes did Gmail work.
    expect(await p1.stop()).toBeGreaterThan(0);
    expect(await p2.stop()).toBeGreaterThan(0);
    const [bucket] = await harness.prisma.$queryRawUnsafe<Array<{ throttles: bigint }>>(`SELECT throttles FROM quota_buckets WHERE key = $1`, harness.accountId);
    expect(Number(bucket!.throttles)).toBe(0);
  }, 180_000);
});
