// The backfill end to end on the dev server, the test database and the Gmail emulator: poison
// messages are isolated into bad_messages while everything else is stored exactly once, and the
// watermark reaches the end of the range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';

const FAST = { startRate: 50_000, maxRate: 50_000, maxConcurrency: 8 };

describe('backfill', () => {
  let h: BackfillHarness;
  beforeAll(async () => {
    h = await createBackfillHarness({ messages: 400, spanDays: 12, emulator: { quota: false }, limiter: FAST });
  });
  afterAll(async () => h?.close());

  it('stores every message once, isolates poison messages, and commits the watermark to the end', async () => {
    const all = listableMessages(h.emulator, h.email);
    // Two poison messages in different batches: every get fails with 500.
    const poison = [all[7]!.id, all[250]!.id];
    await h.emulator.control.setFaults({ poison: poison.map((messageId) => ({ messageId, mode: 'error' as const })) });
    await h.startProcess();

    const rangeEnd = Date.now() + 60_000;
    const result = await h.client.workflow.execute(backfillWorkflow, {
      workflowId: backfillWorkflowId(h.accountId),
      taskQueue: h.taskQueue,
      args: [
        {
          accountId: h.accountId,
          granularity: 'day',
          rangeEnd,
          batchSize: 40,
          window: 3,
          slicesPerRun: 4, // continue-as-new several times on the way
          taskQueues: { workflows: h.taskQueue, gmail: h.taskQueue },
        },
      ],
    });

    const stored = await h.storedIds();
    const expected = all.map((m) => m.id).filter((id) => !poison.includes(id));
    expect(new Set(stored)).toEqual(new Set(expected));
    expect(stored.length).toBe(expected.length); // no duplicates (the key makes them impossible)

    const bad = await h.prisma.$queryRawUnsafe<Array<{ gmail_id: string; reason: string; tries: number }>>(
      `SELECT gmail_id, reason, tries FROM bad_messages WHERE account_id = $1`,
      h.accountId,
    );
    expect(bad.map((b) => b.gmail_id).sort()).toEqual([...poison].sort());
    for (const b of bad) expect(b.reason).toMatch(/fetch: .*500|Backend Error|backendError/i);

    expect(result.counters.bad).toBe(2);
    expect(result.counters.inserted).toBe(expected.length);
    expect(result.runs).toBeGreaterThan(1);
    expect(result.watermark).toBe(rangeEnd);
    const [state] = await h.prisma.$queryRawUnsafe<Array<{ watermark: Date }>>(`SELECT watermark FROM backfill_state WHERE account_id = $1`, h.accountId);
    expect(state!.watermark.getTime()).toBe(rangeEnd);

    // Each row was written by exactly one successful upsert (overlap duplicates are rewrites of the same row).
    const [rows] = await h.prisma.$queryRawUnsafe<Array<{ n: bigint; with_body: bigint }>>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE length(body_text) > 0 AND raw_size > 0) AS with_body FROM messages WHERE account_id = $1`,
      h.accountId,
    );
    expect(Number(rows!.n)).toBe(expected.length);
    expect(Number(rows!.with_body)).toBeGreaterThan(expected.length * 0.9);
  });
});
