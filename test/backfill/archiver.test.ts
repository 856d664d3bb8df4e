// The archiver takes out of the inbox only messages that are stored in Postgres and strictly
// before the account's watermark; messages past it, or never stored (bad ones), keep INBOX.
// A dry run changes nothing and lists exactly what the real run then archives.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiverSchedule } from '../../src/backfill/archiver-schedule.js';
import type { ArchiverInput } from '../../src/backfill/contracts.js';
import { archiverWorkflow } from '../../src/backfill/archiver-workflow.js';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { createBackfillHarness, listableMessages, type BackfillHarness } from '../helpers/backfill-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

describe('archiver', () => {
  let h: BackfillHarness;
  beforeAll(async () => {
    h = await createBackfillHarness({
      messages: 240,
      spanDays: 10,
      emulator: { quota: false },
      limiter: { startRate: 50_000, maxRate: 50_000 },
    });
    await h.startProcess();
  });
  afterAll(async () => h?.close());

  it('archives only stored messages before the watermark, and a dry run says exactly that', async () => {
    const all = listableMessages(h.emulator, h.email).sort((a, b) => a.internalDate - b.internalDate);
    // Backfill only the older half: the newer half is past the watermark (some of it stored
    // anyway, fetched through the slice overlap).
    const cut = all[Math.floor(all.length / 2)]!.internalDate;
    const poison = all.slice(0, 40).filter((m) => m.labelIds.includes('INBOX')).slice(0, 2).map((m) => m.id);
    expect(poison).toHaveLength(2);
    await h.emulator.control.setFaults({ poison: poison.map((messageId) => ({ messageId, mode: 'error' as const })) });
    const backfill = await h.client.workflow.execute(backfillWorkflow, {
      workflowId: backfillWorkflowId(h.accountId),
      taskQueue: h.taskQueue,
      args: [{ accountId: h.accountId, granularity: 'day', rangeEnd: cut, overlapMs: 6 * 3600_000, taskQueues: { workflows: h.taskQueue, gmail: h.taskQueue } }],
    });
    expect(backfill.watermark).toBe(cut);
    await h.emulator.control.setFaults({ poison: [] });

    const stored = new Set(await h.storedIds());
    const storedPastWatermark = all.filter((m) => m.internalDate >= cut && stored.has(m.id));
    expect(storedPastWatermark.length).toBeGreaterThan(0); // the overlap fetched some: they must stay
    const eligible = all.filter((m) => stored.has(m.id) && m.internalDate < cut && m.labelIds.includes('INBOX')).map((m) => m.id);
    expect(eligible.length).toBeGreaterThan(3);

    const args = { accountIds: [h.accountId], batchSize: 7, taskQueues: { workflows: h.taskQueue, gmail: h.taskQueue } };
    const dry = await h.client.workflow.execute(archiverWorkflow, { workflowId: `archiver-dry-${h.accountId}`, taskQueue: h.taskQueue, args: [{ ...args, dryRun: true }] });
    expect(dry.accounts[0]!.wouldArchive!.sort()).toEqual([...eligible].sort());
    const untouched = listableMessages(h.emulator, h.email);
    expect(untouched.filter((m) => m.labelIds.includes('INBOX')).length).toBe(all.filter((m) => m.labelIds.includes('INBOX')).length);

    const real = await h.client.workflow.execute(archiverWorkflow, { workflowId: `archiver-${h.accountId}`, taskQueue: h.taskQueue, args: [args] });
    expect(real.accounts[0]!.archived).toBe(eligible.length);

    const now = new Map(listableMessages(h.emulator, h.email).map((m) => [m.id, m]));
    for (const m of all) {
      const inInbox = now.get(m.id)!.labelIds.includes('INBOX');
      if (eligible.includes(m.id)) expect(inInbox, `${m.id} should be archived`).toBe(false);
      else expect(inInbox, `${m.id} must keep its labels`).toBe(m.labelIds.includes('INBOX'));
    }
    for (const id of poison) expect(now.get(id)!.labelIds).toContain('INBOX');

    // Running it again finds nothing left to do.
    const again = await h.client.workflow.execute(archiverWorkflow, { workflowId: `archiver-again-${h.accountId}`, taskQueue: h.taskQueue, args: [args] });
    expect(again.accounts[0]!.archived).toBe(0);
  });

  it('has a Schedule that is created paused and runs the archiver when triggered', async () => {
    const prefix = `test-${randomUUID().slice(0, 8)}-`;
    const options = archiverSchedule({ every: '365 days', trash: false, enabled: false, taskQueue: h.taskQueue, idPrefix: prefix });
    // This test database holds other tests' accounts: keep the run to this one, as a dry run.
    if (options.action.type !== 'startWorkflow') throw new Error('unexpected action');
    const input = options.action.args![0] as ArchiverInput;
    const scheduled = { ...options, action: { ...options.action, args: [{ ...input, accountIds: [h.accountId], dryRun: true }] } };
    const handle = await h.client.schedule.create(scheduled);
    try {
      const described = await handle.describe();
      expect(described.state.paused).toBe(true);
      expect(input.taskQueues).toEqual({ workflows: h.taskQueue, gmail: h.taskQueue });
      await handle.trigger();
      const runs = await waitUntil('the schedule to start the archiver', async () => {
        const recent = (await handle.describe()).info.recentActions;
        return recent.length > 0 && recent;
      }, { timeoutMs: 10_000 });
      expect(runs).toHaveLength(1);
      const result = await h.client.workflow.getHandle(runs[0]!.action.workflow.workflowId).result();
      expect(result.dryRun).toBe(true);
      expect(result.accounts[0]!.accountId).toBe(h.accountId);
    } finally {
      await handle.delete();
    }
  });
});
