// A worker killed mid-backfill and a replacement that resumes: nothing lost, no row twice.
// (The other resilience cases: test/backfill/resilience-*.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { backfillProgressQuery } from '../../src/backfill/contracts.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';
import { SLOW_MAILBOX, startDailyBackfill } from '../helpers/backfill-resilience.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: BackfillHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

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
});
