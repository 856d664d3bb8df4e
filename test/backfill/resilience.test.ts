// A worker killed mid-backfill and a replacement that resumes: nothing lost, no row twice. Two
// worker processes sharing the account's quota: together within the budget (the emulator's quota
// is the judge), both doing work. A grant revoked mid-way: the backfill waits for the account to be
// connected again and then completes, nothing lost, no row twice.
import { afterEach, describe, expect, it } from 'vitest';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillProgressQuery, backfillWorkflowId } from '../../src/backfill/contracts.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: BackfillHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** 300 messages behind a slow quota (Gmail 6,000 units/min, our limiter held at 95 units/s): slow enough to act mid-way. */
const SLOW_MAILBOX = {
  messages: 300,
  spanDays: 6,
  emulator: { quota: { profile: 'legacy', userUnitsPerMinute: 6000, burstSeconds: 2 } },
  limiter: { startRate: 95, maxRate: 95, maxConcurrency: 4 },
} as const;

/** A backfill in day slices, batches of 50, three slices at a time, on the harness's one task queue. */
function startDailyBackfill(harness: BackfillHarness, extra: { rangeEnd?: number } = {}) {
  return harness.client.workflow.start(backfillWorkflow, {
    workflowId: backfillWorkflowId(harness.accountId),
    taskQueue: harness.taskQueue,
    args: [
      {
        accountId: harness.accountId,
        granularity: 'day',
        ...extra,
        batchSize: 50,
        window: 3,
        taskQueues: { workflows: harness.taskQueue, gmail: harness.taskQueue },
      },
    ],
  });
}

describe('backfill resilience', () => {
  it('resumes after its worker is killed mid-backfill, with nothing lost and nothing stored twice', async () => {
    h = await createBackfillHarness(SLOW_MAILBOX);
    const harness = h;
    const all = listableMessages(harness.emulator, harness.email);
    const first = await harness.startProcess();
    const rangeEnd = Date.now() + 60_000;
    const handle = await startDailyBackfill(harness, { rangeEnd });
    await waitUntil('60 messages stored', async () => (await harness.storedIds()).length >= 60, { timeoutMs: 60_000 });
    await first.stop(); // the worker dies: its in-flight batches are cancelled mid-way
    const storedAtKill = (await harness.storedIds()).length;
    expect(storedAtKill).toBeLessThan(all.length);

    const second = await harness.startProcess();
    const result = await handle.result();
    const stored = await harness.storedIds();
    expect(new Set(stored)).toEqual(new Set(all.map((m) => m.id)));
    expect(stored).toHaveLength(all.length);
    expect(result.counters.bad).toBe(0);
    expect(result.watermark).toBe(rangeEnd);
    const progress = await handle.query(backfillProgressQuery);
    expect(progress.state).toBe('done');
    expect(progress.slicesDone).toBe(progress.slicesTotal);
    await second.stop();
  }, 180_000);

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

  it('waits while the grant is revoked, with no slice running, and completes after accounts connect: nothing lost, nothing twice', async () => {
    h = await createBackfillHarness(SLOW_MAILBOX);
    const harness = h;
    const all = listableMessages(harness.emulator, harness.email);
    await harness.startProcess();
    const rangeEnd = Date.now() + 60_000;
    const handle = await startDailyBackfill(harness, { rangeEnd });
    await waitUntil('30 messages stored', async () => (await harness.storedIds()).length >= 30, { timeoutMs: 60_000 });
    await harness.emulator.control.revoke(harness.email);

    // The backfill waits for the account and says so; it does not fail, and its slices stopped.
    const waiting = await waitUntil('the backfill waits for the account', async () => {
      const p = await handle.query(backfillProgressQuery);
      return p.waitingFor ? p : undefined;
    }, { timeoutMs: 60_000 });
    expect(waiting.waitingFor).toMatch(/^slices: (GmailAuthError|AccountNotConnectedError)$/);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await waitUntil('no slice running', async () => (await runningSlices(harness)) === 0);
    const account = await harness.prisma.account.findUniqueOrThrow({ where: { id: harness.accountId } });
    expect(account.status).toBe('needs_reauth');
    const storedWhileRevoked = (await harness.storedIds()).length;
    expect(storedWhileRevoked).toBeLessThan(all.length);

    // The user connects the account again: the backfill is told, and carries on where it stopped.
    const again = await harness.reconnect();
    expect(again).toMatchObject({ id: harness.accountId, reconnected: true });
    const result = await handle.result();
    const stored = await harness.storedIds();
    expect(new Set(stored)).toEqual(new Set(all.map((m) => m.id)));
    expect(stored).toHaveLength(all.length);
    // The counters neither lose what the stopped slices stored nor count it twice.
    expect(result.counters.inserted).toBe(all.length);
    expect(result.counters.bad).toBe(0);
    expect(result.watermark).toBe(rangeEnd);
    const progress = await handle.query(backfillProgressQuery);
    expect(progress).toMatchObject({ state: 'done', slicesDone: progress.slicesTotal });
    expect(progress.waitingFor).toBeUndefined();
    await recordWorkflowHistory(handle, 'backfill-reauth-wait-resume');
  }, 180_000);
});

/** The slice workflows of the harness's account still running. */
async function runningSlices(harness: BackfillHarness): Promise<number> {
  let n = 0;
  for await (const w of harness.client.workflow.list({ query: `WorkflowType = 'backfillSliceWorkflow' AND ExecutionStatus = 'Running'` })) {
    if (w.workflowId.startsWith(`backfill-${harness.accountId}-slice-`)) n++;
  }
  return n;
}
