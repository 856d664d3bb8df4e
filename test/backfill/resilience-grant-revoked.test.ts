// A grant revoked mid-backfill: the backfill waits for the account to be connected again and then
// completes, nothing lost, no row twice. (The other resilience cases: test/backfill/resilience-*.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { backfillProgressQuery } from '../../src/backfill/contracts.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';
import { runningSlices, SLOW_MAILBOX, startDailyBackfill } from '../helpers/backfill-resilience.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: BackfillHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('backfill resilience', () => {
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
