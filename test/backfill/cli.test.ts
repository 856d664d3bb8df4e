// `npm run cli -- backfill ...` against the real stack: start shows progress to completion, status
// renders bar/rate/ETA, archive --dry-run lists, cancel stops a running backfill and its slices.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { renderProgress, runBackfillCli } from '../../src/cli/backfill.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { backfillWorkflowId, type BackfillProgress } from '../../src/backfill/contracts.js';
import { createBackfillHarness, type BackfillHarness } from '../helpers/backfill-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

function cliConfig(h: BackfillHarness) {
  const keys = fixedTestPayloadKeys();
  return loadConfig({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    PAYLOAD_ENCRYPTION_KEYS: keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(','),
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    GMAIL_TASK_QUEUE: h.taskQueue,
    LOG_LEVEL: 'warn',
  });
}

describe('backfill cli', () => {
  let h: BackfillHarness;
  beforeAll(async () => {
    h = await createBackfillHarness({
      messages: 150,
      spanDays: 5,
      emulator: { quota: { profile: 'legacy', userUnitsPerMinute: 3000, burstSeconds: 2 } },
      limiter: { startRate: 45, maxRate: 45, maxConcurrency: 4 },
    });
    await h.startProcess();
  });
  afterAll(async () => h?.close());

  it('start --watch follows the backfill to the end; status and archive --dry-run report', async () => {
    const cfg = cliConfig(h);
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), tty: false };
    expect(await runBackfillCli(cfg, ['start', h.accountId, '--granularity', 'day', '--watch'], io)).toBe(0);
    expect(out[0], out.join('\n')).toMatch(/backfill of .* started/);
    // Behind live mail (priority 5 of 1..5), one fairness key per account; its slices inherit both.
    const backfill = await h.client.workflow.getHandle(backfillWorkflowId(h.accountId)).describe();
    expect(backfill.priority).toMatchObject({ priorityKey: 5, fairnessKey: h.accountId });
    const slices = [];
    for await (const w of h.client.workflow.list({ query: `WorkflowType = 'backfillSliceWorkflow'` })) {
      if (w.workflowId.startsWith(`backfill-${h.accountId}-slice-`)) slices.push(w);
    }
    expect(slices.length).toBeGreaterThan(0);
    const slice = await h.client.workflow.getHandle(slices[0]!.workflowId).describe();
    expect(slice.priority).toMatchObject({ priorityKey: 5, fairnessKey: h.accountId });
    expect(out.some((l) => /^\[#+\] 100\.0% {2}done$/.test(l)), out.join('\n')).toBe(true);
    expect(out.some((l) => /^messages: 150 stored, 0 bad, 0 gone/.test(l)), out.join('\n')).toBe(true);

    const status: string[] = [];
    expect(await runBackfillCli(cfg, ['status', h.accountId], { out: (l) => status.push(l) })).toBe(0);
    expect(status.join('\n')).toMatch(/100\.0%|done: 150 stored/);

    const archive: string[] = [];
    expect(await runBackfillCli(cfg, ['archive', '--account', h.accountId, '--dry-run'], { out: (l) => archive.push(l) })).toBe(0);
    expect(archive[0]).toMatch(new RegExp(`^${h.accountId}: would archive \\d+`));
  });

  it('cancel stops a running backfill and its slices', async () => {
    const cfg = cliConfig(h);
    const other = await h.prisma.account.create({ data: { email: `other-${h.accountId}@example.com`, encryptedTokens: (await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } })).encryptedTokens } });
    const io = { out: () => undefined };
    expect(await runBackfillCli(cfg, ['start', other.id, '--granularity', 'day'], io)).toBe(0);
    const handle = h.client.workflow.getHandle(backfillWorkflowId(other.id));
    const stored = async () => (await h.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM messages WHERE account_id = $1`, other.id))[0]!.n;
    await waitUntil('a first message stored, or the backfill done', async () => (await stored()) > 0n || (await handle.describe()).status.name !== 'RUNNING', { timeoutMs: 10_000 });
    expect(await runBackfillCli(cfg, ['cancel', other.id], io)).toBe(0);
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    // Its slices (ABANDON children) were cancelled explicitly, not left running.
    const slices = async () => {
      const found: string[] = [];
      for await (const w of h.client.workflow.list({ query: `WorkflowType = 'backfillSliceWorkflow' AND ExecutionStatus = 'Running'` })) {
        if (w.workflowId.startsWith(`backfill-${other.id}-slice-`)) found.push(w.workflowId);
      }
      return found;
    };
    await waitUntil('its slices cancelled', async () => (await slices()).length === 0, { timeoutMs: 10_000 });
  });

  it('renders a bar, counts, rate and ETA', () => {
    const p: BackfillProgress = {
      accountId: 'a',
      state: 'running',
      rangeStart: Date.UTC(2024, 0, 1),
      rangeEnd: Date.UTC(2025, 0, 1),
      granularity: 'week',
      watermark: Date.UTC(2024, 6, 1),
      slicesDone: 26,
      slicesTotal: 53,
      slicesRunning: 8,
      counters: { messagesTotal: 1000, listed: 500, stored: 495, inserted: 495, bad: 5, gone: 0, splits: 0 },
      rate: 50,
      badRate: 0.01,
      alert: 'critical',
      alerts: { bad_rate: { level: 'critical', detail: 'bad-message rate 1.00 %: 100 bad of the last 10000 messages (critical at 1.00 %)' } },
      startedAt: 0,
      runs: 1,
    };
    const lines = renderProgress(p, 10_000, 10);
    expect(lines[0]).toBe('[#####.....] 50.0%  running');
    expect(lines[3]).toBe('rate:     50.0 messages/s   elapsed 10s   ETA 10s');
    expect(lines.at(-1)).toMatch(/^ALERT critical: bad-message rate 1\.00 %/);
    expect(lines.some((l) => l.startsWith('WAITING'))).toBe(false);
    // While the account cannot be used, the status says what the backfill waits for and how to fix it.
    const waiting = renderProgress({ ...p, waitingFor: 'slices: GmailAuthError' }, 10_000, 10);
    expect(waiting).toContain('WAITING for the account to be reconnected (npm run cli -- accounts connect): slices: GmailAuthError');
  });
});
